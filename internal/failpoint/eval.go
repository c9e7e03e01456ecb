package failpoint

// Applying failCommand and failGetMoreAfterCursorCheckout to the commands
// a server runs, where mongod applies them:
//
//   - before the command runs (after its name, access and admin-database
//     checks, and after it is registered in currentOp, so that a blocked
//     command can be seen and killed): blockConnection waits blockTimeMS
//     (or until the command's context ends), closeConnection drops the
//     connection without a reply (Outcome.CloseConnection), errorCode
//     fails the command with errorLabels, or, without them, the labels
//     mongod computes (RetryableWriteError for a retriable code on a
//     retryable write, TransientTransactionError by the transaction's
//     rule);
//   - after a command that takes a write concern has run:
//     writeConcernError is added to its reply, the write having been done.
//
// Every evaluation of a point that is on tests the command against the
// point's data first (failCommands, appName, namespace, threadName); only a
// command that matches counts toward times and skip.

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Request is the command a fail point is evaluated for.
type Request struct {
	Target
	// Cmd is the command's name as the client spelled it.
	Cmd string
	// TxnNumber and Autocommit tell whether the request carries those
	// fields (a retryable write has txnNumber and no autocommit).
	TxnNumber, Autocommit bool
	// Transient is the TransientTransactionError rule of the request's
	// transaction for an error code (wc: along with a write concern
	// error); nil: never.
	Transient func(code int32, wc bool) bool
	// Log receives mongod's fail point log lines; nil: none.
	Log *slog.Logger
}

// Outcome is what failCommand did to a command before it ran.
type Outcome struct {
	// CloseConnection: drop the connection instead of replying.
	CloseConnection bool
	// Labelled: the error carries the fail point's own errorLabels, and
	// the error reply adds none.
	Labelled bool
}

func (q *Request) log(msg string, args ...any) {
	if q.Log != nil {
		q.Log.Info(msg, append([]any{"c", "COMMAND"}, args...)...)
	}
}

// Before evaluates failCommand before the command runs: it blocks, or
// returns the error the command fails with.
func (r *Registry) Before(ctx context.Context, q *Request) (Outcome, error) {
	cfg, ok := r.Point(FailCommand).Eval(func(cfg *Config) bool {
		d := cfg.Parsed.(*CommandData)
		return d.BeforeRun() && d.Matches(q.Target)
	})
	if !ok {
		return Outcome{}, nil
	}
	d := cfg.Parsed.(*CommandData)
	if d.BlockConnection {
		q.log("Blocking command via 'failCommand' failpoint", "id", 20432, "command", q.Names[0], "blockTime", d.BlockTime.String())
		t := time.NewTimer(d.BlockTime)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Outcome{}, mongoerr.FromContext(ctx.Err())
		}
		q.log("Unblocking command via 'failCommand' failpoint", "id", 20433, "command", q.Names[0])
	}
	if d.CloseConnection {
		q.log("Failing command via 'failCommand' failpoint: closing connection", "id", 20431, "command", q.Names[0])
		return Outcome{CloseConnection: true}, mongoerr.New(mongoerr.FailCommandCloseConnection, "Failing command via 'failCommand' failpoint")
	}
	e := d.Error()
	if e == nil {
		return Outcome{}, nil
	}
	q.log("Failing command via 'failCommand' failpoint", "id", 20435, "command", q.Names[0], "errorCode", e.Code)
	if labels := q.Labels(d, e.Code, 0, nil); labels != nil {
		var b bson.Builder
		b.AppendArray("errorLabels", labels)
		e.Extra = b.Finish()
	}
	return Outcome{Labelled: d.HasErrorLabels}, e
}

// Labels are the labels of an error with code (and a write concern error
// with wcCode) that failCommand's data d produced: d's own labels if it
// has them (none when empty), else, added to those already given (have),
// RetryableWriteError and TransientTransactionError where mongod's rules
// give them. nil means no errorLabels field.
func (q *Request) Labels(d *CommandData, code, wcCode int32, have bson.Doc) bson.Doc {
	if d.HasErrorLabels {
		if d.ErrorLabels.Len() == 0 {
			return nil
		}
		return d.ErrorLabels
	}
	labels := []string{}
	it := have.Iter()
	for it.Next() {
		if v := it.Element().Value; v.Type == bson.TypeString {
			labels = append(labels, v.StringValue())
		}
	}
	if RetryableWriteError(q.Cmd, q.TxnNumber, q.Autocommit, code, wcCode) && !slices.Contains(labels, "RetryableWriteError") {
		labels = append(labels, "RetryableWriteError")
	}
	if code != 0 && q.Transient != nil && q.Transient(code, wcCode != 0) && !slices.Contains(labels, "TransientTransactionError") {
		labels = append(labels, "TransientTransactionError")
	}
	if len(labels) == 0 {
		return nil
	}
	var b bson.Builder
	for i, l := range labels {
		b.AppendString(bson.Index(i), l)
	}
	return b.Finish()
}

// After adds failCommand's writeConcernError to the reply of a command
// that takes a write concern and has run (mongod skips its wait for the
// write concern and answers the fail point's error instead). errCode is
// the reply's error code (0: the command succeeded).
func (r *Registry) After(q *Request, reply bson.Doc, errCode int32) bson.Doc {
	cfg, ok := r.Point(FailCommand).Eval(func(cfg *Config) bool {
		d := cfg.Parsed.(*CommandData)
		return d.WriteConcernError != nil && d.Matches(q.Target)
	})
	if !ok {
		return reply
	}
	d := cfg.Parsed.(*CommandData)
	var wcCode int32
	if v, ok := d.WriteConcernError.Lookup("code"); ok {
		n, _ := v.AsInt64()
		wcCode = int32(n)
	}
	have, _ := reply.Lookup("errorLabels")
	var haveLabels bson.Doc
	if have.Type == bson.TypeArray {
		haveLabels = have.Document()
	}
	labels := q.Labels(d, errCode, wcCode, haveLabels)
	var b bson.Builder
	it := reply.Iter()
	for it.Next() {
		if k := it.Element().Key; k != "writeConcernError" && k != "errorLabels" {
			b.AppendElement(it.Element())
		}
	}
	b.AppendDocument("writeConcernError", d.WriteConcernError)
	if labels != nil {
		b.AppendArray("errorLabels", labels)
	}
	return b.Finish()
}

// GetMore evaluates failGetMoreAfterCursorCheckout for a getMore that has
// checked out its cursor (t.NS is the cursor's namespace).
func (r *Registry) GetMore(t Target) error {
	if !r.Active() {
		return nil
	}
	cfg, ok := r.Point(FailGetMoreAfterCursorCheckout).Eval(func(cfg *Config) bool {
		return cfg.Parsed.(*GetMoreData).Matches(t)
	})
	if !ok {
		return nil
	}
	return cfg.Parsed.(*GetMoreData).Error()
}
