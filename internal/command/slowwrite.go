package command

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
)

// Slow-operation figures of writes. mongod's slow write lines carry what
// the write matched, changed and inserted or removed from indexes (its
// OpDebug's optional figures, logged once set): an insert command's line
// has ninserted and keysInserted; each update or delete statement has its
// own line (component WRITE, type "update" or "remove") with its plan, the
// keys and documents it examined, nMatched, nModified and nUpserted or
// ndeleted, and keysInserted and keysDeleted; findAndModify's command line
// has the same figures as the statement it runs.

// writeFiguresOf returns the write figures ctx's writes add to, or nil.
func writeFiguresOf(ctx context.Context) *exec.WriteFigures {
	if s := statsOf(ctx); s != nil {
		return &s.write
	}
	return nil
}

// hasStatementLines reports the write commands whose statements are
// logged on their own lines.
func hasStatementLines(name string) bool {
	return name == "update" || name == "delete"
}

// statement is one update or delete statement being run: its own context
// for the figures its stages add, and its start.
type statement struct {
	c     *Ctx
	stats opStats
	start time.Time
}

// beginStatement returns a copy of c whose query and write stages add to
// a fresh set of figures, the statement's.
func beginStatement(c *Ctx) *statement {
	s := &statement{start: time.Now()}
	sc := *c
	sc.Context = context.WithValue(c.Context, exec.StatsKey{}, &s.stats)
	s.c = &sc
	return s
}

// end logs the statement's slow-operation line (typ "update" or "remove")
// if it took at least slowms; err is the statement's error, if it failed.
func (s *statement) end(typ, coll string, stmt bson.Doc, err error) {
	c := s.c
	d := time.Since(s.start)
	profileStatement(c, typ, coll, stmt, &s.stats, d, err)
	if !slowEnough(c, d) {
		return
	}
	attrs := slowAttrs(c, "WRITE", typ, c.DB+"."+coll, loggedCommand(stmt), &s.stats)
	if err != nil {
		attrs = appendSlowError(attrs, err)
	}
	attrs = append(attrs, "durationMillis", d.Milliseconds())
	c.Env.Log.Info("Slow query", attrs...)
}
