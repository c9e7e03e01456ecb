package command

// killAllSessions, killAllSessionsByPattern and the session stages of a
// pipeline; the patterns are internal/session's (pattern.go).

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/session"
)

// killMatching kills the sessions matching any of the patterns (none:
// every session).
func killMatching(c *Ctx, patterns []session.Pattern) {
	c.Env.KillSessions(c.Env.Sessions.Matching(func(r *session.Record) bool { return session.MatchAny(patterns, r.Key) }))
}

func killAllSessions(c *Ctx) error {
	uids, err := session.UserDigests(newArgs(c).First(), "killAllSessions.killAllSessions")
	if err != nil {
		return err
	}
	var patterns []session.Pattern
	if len(uids) > 0 {
		patterns = []session.Pattern{{UIDs: uids}}
	}
	killMatching(c, patterns)
	return nil
}

func killAllSessionsByPattern(c *Ctx) error {
	first := newArgs(c).First()
	if first.Type != bson.TypeArray {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'killAllSessionsByPattern.killAllSessionsByPattern' is the wrong type '%s', expected type 'array'", first.Type)
	}
	var patterns []session.Pattern
	it := first.Document().Iter()
	for it.Next() {
		p, err := session.ParseKillPattern(it.Element().Value)
		if err != nil {
			return err
		}
		patterns = append(patterns, p)
	}
	killMatching(c, patterns)
	return nil
}

// sessionLister answers the session stages of a command's pipeline
// (exec.SessionLister).
type sessionLister struct{ c *Ctx }

// LocalSessions implements $listLocalSessions.
func (l sessionLister) LocalSessions(spec bson.Doc) ([]bson.Doc, error) {
	if l.c.Env.Sessions == nil {
		return nil, nil
	}
	return l.c.Env.Sessions.LocalSessions(spec, dispatch.SessionDigest(l.c))
}

// ListSessions implements $listSessions.
func (l sessionLister) ListSessions(k *exec.AggCatalog, spec bson.Doc) ([]bson.Doc, error) {
	return session.ListSessions(k, spec, dispatch.SessionDigest(l.c))
}
