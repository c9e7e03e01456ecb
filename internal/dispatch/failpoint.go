package dispatch

// The running command described to the fail points (internal/failpoint):
// failCommand before and after the handler, the error labels of its error
// reply, and failGetMoreAfterCursorCheckout. configureFailPoint is
// internal/command's.

import (
	"strconv"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/failpoint"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// failRequest describes the running command cmd to a fail point.
func (c *Ctx) failRequest(cmd *Command) *failpoint.Request {
	q := &failpoint.Request{Target: failpoint.Target{Names: append([]string{cmd.Name}, cmd.Aliases...), NS: c.DB},
		Cmd: c.Name, Transient: c.transientTxnError, Log: c.Env.Log}
	_, q.TxnNumber = c.Body.Lookup("txnNumber")
	_, q.Autocommit = c.Body.Lookup("autocommit")
	if coll := commandCollection(c); coll != "" {
		q.NS = c.DB + "." + coll
	} else if v, ok := c.Body.Lookup("collection"); ok && v.Type == bson.TypeString && cmd.Name == "getMore" {
		q.NS = c.DB + "." + v.StringValue()
	}
	if c.Conn != nil {
		q.ThreadName = "conn" + strconv.FormatInt(c.Conn.ID, 10)
		if v, ok := c.Conn.ClientMeta.LookupPath("application", "name"); ok && v.Type == bson.TypeString {
			q.AppName = v.StringValue()
		}
	}
	return q
}

// failCommandBefore evaluates failCommand before cmd runs.
func (c *Ctx) failCommandBefore(cmd *Command) error {
	out, err := c.Env.FailPoints.Before(c, c.failRequest(cmd))
	c.CloseConnection, c.labelled = out.CloseConnection, out.Labelled
	return err
}

// failCommandAfter adds failCommand's writeConcernError to the reply of a
// command that takes a write concern and has run.
func (c *Ctx) failCommandAfter(cmd *Command, reply bson.Doc) bson.Doc {
	if c.CloseConnection || !takesWriteConcern(cmd, c.Body) {
		return reply
	}
	var code int32
	if v, ok := reply.Lookup("code"); ok && isErrorReply(reply) {
		n, _ := v.AsInt64()
		code = int32(n)
	}
	return c.Env.FailPoints.After(c.failRequest(cmd), reply, code)
}

// retryableLabel reports whether the error reply being built for e gets the
// label RetryableWriteError, as mongod's ErrorLabelBuilder decides: the
// command is a retryable write (txnNumber, no autocommit) and e's code is
// retriable. An error that carries its own errorLabels keeps them.
func (c *Ctx) retryableLabel(e *mongoerr.Error) bool {
	if c.labelled || e.Code == mongoerr.FailCommandCloseConnection {
		return false
	}
	if _, ok := bson.Doc(e.Extra).Lookup("errorLabels"); ok && len(e.Extra) > 0 {
		return false
	}
	_, txn := c.Body.Lookup("txnNumber")
	_, autocommit := c.Body.Lookup("autocommit")
	return failpoint.RetryableWriteError(c.Name, txn, autocommit, e.Code, 0)
}

// takesWriteConcern reports whether the command accepts a write concern
// (concern.TakesWriteConcern).
func takesWriteConcern(cmd *Command, body bson.Doc) bool {
	return concern.TakesWriteConcern(cmd.Name, cmd.Write, func() string { return writeStage(body) })
}

// writeStage is agg.WriteStage.
func writeStage(body bson.Doc) string { return agg.WriteStage(body) }

// FailGetMore evaluates failGetMoreAfterCursorCheckout for a getMore that
// has checked out its cursor on ns.
func (c *Ctx) FailGetMore(ns string) error {
	fp := c.Env.FailPoints
	if fp == nil || !fp.Active() {
		return nil
	}
	q := c.failRequest(c.Cmd)
	q.NS = ns
	return fp.GetMore(q.Target)
}
