package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/session"
	"github.com/cairndb/cairn/internal/timeseries"
)

// writeError is one entry of a write command's writeErrors.
type writeError struct {
	index int
	err   *mongoerr.Error
}

// appendWriteErrors adds a write command's writeErrors to its reply and
// counts them as user asserts.
func appendWriteErrors(c *Ctx, errs []writeError) {
	if len(errs) == 0 {
		return
	}
	c.Env.Stats.UserAsserts.Add(int64(len(errs)))
	r := c.Reply
	r.StartArray("writeErrors")
	for i, we := range errs {
		r.StartDocument(bson.Index(i))
		r.AppendInt32("index", int32(we.index))
		r.AppendInt32("code", we.err.Code)
		if we.err.Extra != nil {
			dispatch.AppendExtra(r, we.err.Extra)
		}
		r.AppendString("errmsg", we.err.Message)
		r.End()
	}
	r.End()
}

// isFatal reports errors that end a write command as a whole (engine
// failures) rather than one statement.
func isFatal(err error) bool {
	_, ok := err.(*mongoerr.Error)
	return !ok
}

func insert(c *Ctx) error {
	w, err := parseWriteCmd(c, "documents", nil, "bypassDocumentValidation", "stmtIds")
	if err != nil {
		return err
	}
	defer w.cancel()
	var errs []writeError
	var rs *dispatch.RetryState
	n := 0
	err = c.WriteTx(w.wc.durability(), func(tx *exec.Tx) error {
		n = 0 // from scratch when retried (WriteTx)
		if rs, err = c.BeginRetryable(tx, len(w.stmts)); err != nil {
			return err
		}
		coll, err := exec.CollectionForWrite(tx, c.DB, w.name, true, c.Env.Oplog)
		if err != nil {
			return err
		}
		// A time-series collection's measurements go into its buckets
		// (timeseries.go), after every statement is checked.
		ts, err := exec.TimeseriesOfCollection(tx, coll)
		if err != nil {
			return err
		}
		var measurements []timeseries.Measurement
		if ts != nil {
			coll = ts.Buckets
		}
		cw, err := c.Writer(tx, coll)
		if err != nil {
			return err
		}
		errs, err = w.run(func(i int, d bson.Doc) error {
			if res, ok, err := rs.Executed(i); err != nil {
				return fatal(err)
			} else if ok {
				n += int(res.N)
				return nil
			}
			rs.Start(i)
			if ts != nil {
				m, err := timeseries.Prepare(ts.Opts, d, exec.NewObjectID)
				if err != nil {
					rs.Abandon()
					return err
				}
				measurements = append(measurements, m)
			} else if _, _, err := cw.Insert(d); err != nil {
				rs.Abandon()
				return err
			}
			n++
			return fatal(rs.Done(i, session.StmtResult{N: 1}))
		})
		if err != nil {
			return err
		}
		if err := c.Env.InsertMeasurements(c, cw, ts, measurements); err != nil {
			return err
		}
		return rs.Finish()
	})
	if err != nil {
		return err
	}
	if c.Txn != nil && len(errs) > 0 {
		return errs[0].err // in a transaction a statement's error fails the command
	}
	c.Env.Stats.Insert.Add(int64(n))
	if f := dispatch.WriteFiguresOf(c); f != nil {
		f.Ninserted.Add(int64(n))
	}
	c.Unacknowledged = w.wc.unacknowledged()
	c.Reply.AppendInt32("n", int32(n))
	rs.AppendRetried(c.Reply)
	appendWriteErrors(c, errs)
	return nil
}
