package command

// Fail points and test commands (--setParameter enableTestCommands=1).
//
// configureFailPoint exists only with test commands on: without them it is
// not a command at all (CommandNotFound, as on a mongod without
// enableTestCommands). The fail points themselves are internal/failpoint's;
// this file applies failCommand to the commands Dispatch runs, where mongod
// applies it:
//
//   - before the command runs (after its name, access and admin-database
//     checks, and after it is registered in currentOp, so that a blocked
//     command can be seen and killed): blockConnection waits blockTimeMS,
//     closeConnection drops the connection without a reply (the server
//     reads Ctx.CloseConnection), errorCode fails the command with
//     errorLabels, or, without them, the labels mongod computes
//     (RetryableWriteError for a retriable code on a retryable write);
//   - after a command that takes a write concern has run:
//     writeConcernError is added to its reply, the write having been done.
//
// Every evaluation of a point that is on tests the command against the
// point's data first (failCommands, appName, namespace, threadName); only a
// command that matches counts toward times and skip.

import (
	"strconv"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/failpoint"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// configureFailPoint sets a fail point's mode and data and answers how many
// times it had fired before: {count, ok}.
func configureFailPoint(c *Ctx) error {
	if c.Env.FailPoints == nil {
		return mongoerr.New(mongoerr.CommandNotFound, "no such command: '%s'", c.Name)
	}
	n, err := c.Env.FailPoints.Configure(c.Body)
	if err != nil {
		return err
	}
	if n == int64(int32(n)) {
		c.Reply.AppendInt32("count", int32(n))
	} else {
		c.Reply.AppendInt64("count", n)
	}
	name := newArgs(c).first()
	mode, _ := c.Body.Lookup("mode")
	data, _ := c.Body.Lookup("data")
	c.Env.Log.Warn("Set failpoint", "c", "CONTROL", "id", 23829, "failPointName", name.String(), "mode", mode.String(), "data", data.String())
	return nil
}

// failTarget describes the running command to a fail point.
func (c *Ctx) failTarget(cmd *Command) failpoint.Target {
	t := failpoint.Target{Names: append([]string{cmd.Name}, cmd.Aliases...), NS: c.DB}
	if coll := commandCollection(c); coll != "" {
		t.NS = c.DB + "." + coll
	} else if v, ok := c.Body.Lookup("collection"); ok && v.Type == bson.TypeString && cmd.Name == "getMore" {
		t.NS = c.DB + "." + v.StringValue()
	}
	if c.Conn != nil {
		t.ThreadName = "conn" + strconv.FormatInt(c.Conn.ID, 10)
		if v, ok := c.Conn.ClientMeta.LookupPath("application", "name"); ok && v.Type == bson.TypeString {
			t.AppName = v.StringValue()
		}
	}
	return t
}

// failCommandBefore evaluates failCommand before cmd runs: it blocks, or
// returns the error the command fails with (with Ctx.CloseConnection set
// when the connection is to be dropped instead of answered).
func (c *Ctx) failCommandBefore(cmd *Command) error {
	p := c.Env.FailPoints.Point(failpoint.FailCommand)
	t := c.failTarget(cmd)
	cfg, ok := p.Eval(func(cfg *failpoint.Config) bool {
		d := cfg.Parsed.(*failpoint.CommandData)
		return d.BeforeRun() && d.Matches(t)
	})
	if !ok {
		return nil
	}
	d := cfg.Parsed.(*failpoint.CommandData)
	if d.BlockConnection {
		c.Env.Log.Info("Blocking command via 'failCommand' failpoint", "c", "COMMAND", "id", 20432, "command", cmd.Name, "blockTime", d.BlockTime.String())
		t := time.NewTimer(d.BlockTime)
		select {
		case <-t.C:
		case <-c.Done():
			t.Stop()
			return mongoerr.FromContext(c.Err())
		}
		c.Env.Log.Info("Unblocking command via 'failCommand' failpoint", "c", "COMMAND", "id", 20433, "command", cmd.Name)
	}
	if d.CloseConnection {
		c.CloseConnection = true
		c.Env.Log.Info("Failing command via 'failCommand' failpoint: closing connection", "c", "COMMAND", "id", 20431, "command", cmd.Name)
		return mongoerr.New(mongoerr.FailCommandCloseConnection, "Failing command via 'failCommand' failpoint")
	}
	e := d.Error()
	if e == nil {
		return nil
	}
	c.Env.Log.Info("Failing command via 'failCommand' failpoint", "c", "COMMAND", "id", 20435, "command", cmd.Name, "errorCode", e.Code)
	c.labelled = d.HasErrorLabels
	if labels := c.errorLabels(d, e.Code, 0, nil); labels != nil {
		var b bson.Builder
		b.AppendArray("errorLabels", labels)
		e.Extra = b.Finish()
	}
	return e
}

// errorLabels are the labels of an error with code (and a write concern
// error with wcCode) that failCommand's data d produced: d's own labels if it
// has them (none when empty), else, added to those already given (have),
// RetryableWriteError where mongod's rule gives it. nil means no
// errorLabels field.
func (c *Ctx) errorLabels(d *failpoint.CommandData, code, wcCode int32, have bson.Doc) bson.Doc {
	if d.HasErrorLabels {
		if d.ErrorLabels.Len() == 0 {
			return nil
		}
		return d.ErrorLabels
	}
	_, txn := c.Body.Lookup("txnNumber")
	_, autocommit := c.Body.Lookup("autocommit")
	labels := []string{}
	it := have.Iter()
	for it.Next() {
		if v := it.Element().Value; v.Type == bson.TypeString {
			labels = append(labels, v.StringValue())
		}
	}
	if failpoint.RetryableWriteError(c.Name, txn, autocommit, code, wcCode) && !contains(labels, "RetryableWriteError") {
		labels = append(labels, "RetryableWriteError")
	}
	if code != 0 && c.transientTxnError(code, wcCode != 0) && !contains(labels, "TransientTransactionError") {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// failCommandAfter adds failCommand's writeConcernError to the reply of a
// command that takes a write concern and has run (mongod skips its wait for
// the write concern and answers the fail point's error instead).
func (c *Ctx) failCommandAfter(cmd *Command, reply bson.Doc) bson.Doc {
	if c.CloseConnection || !takesWriteConcern(cmd, c.Body) {
		return reply
	}
	p := c.Env.FailPoints.Point(failpoint.FailCommand)
	t := c.failTarget(cmd)
	cfg, ok := p.Eval(func(cfg *failpoint.Config) bool {
		d := cfg.Parsed.(*failpoint.CommandData)
		return d.WriteConcernError != nil && d.Matches(t)
	})
	if !ok {
		return reply
	}
	d := cfg.Parsed.(*failpoint.CommandData)
	var code, wcCode int32
	if v, ok := reply.Lookup("code"); ok && isErrorReply(reply) {
		n, _ := v.AsInt64()
		code = int32(n)
	}
	if v, ok := d.WriteConcernError.Lookup("code"); ok {
		n, _ := v.AsInt64()
		wcCode = int32(n)
	}
	have, _ := reply.Lookup("errorLabels")
	var haveLabels bson.Doc
	if have.Type == bson.TypeArray {
		haveLabels = have.Document()
	}
	labels := c.errorLabels(d, code, wcCode, haveLabels)
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

// userWriteCommands are the commands besides Write ones that take a write
// concern.
var userWriteCommands = map[string]bool{
	"createUser": true, "updateUser": true, "dropUser": true, "dropAllUsersFromDatabase": true,
	"grantRolesToUser": true, "revokeRolesFromUser": true, "createRole": true, "updateRole": true,
	"dropRole": true, "dropAllRolesFromDatabase": true, "grantRolesToRole": true, "revokeRolesFromRole": true,
	"grantPrivilegesToRole": true, "revokePrivilegesFromRole": true,
	"commitTransaction": true, "abortTransaction": true,
}

// takesWriteConcern reports whether the command accepts a write concern
// (mongod's supportsWriteConcern): the writes and DDL, user and role
// management, and an aggregate ending in $out or $merge.
func takesWriteConcern(cmd *Command, body bson.Doc) bool {
	if cmd.Name == "compact" {
		return false // a Write command that takes no write concern in mongod
	}
	if cmd.Write || userWriteCommands[cmd.Name] {
		return true
	}
	return cmd.Name == "aggregate" && writeStage(body) != ""
}

// writeStage is "$out" or "$merge" when an aggregate's pipeline ends in
// one, else "".
func writeStage(body bson.Doc) string {
	p, ok := body.Lookup("pipeline")
	if !ok || p.Type != bson.TypeArray {
		return ""
	}
	var last bson.Value
	it := p.Document().Iter()
	for it.Next() {
		last = it.Element().Value
	}
	if last.Type != bson.TypeDocument {
		return ""
	}
	st := last.Document().Iter()
	if st.Next() && (st.Element().Key == "$out" || st.Element().Key == "$merge") {
		return st.Element().Key
	}
	return ""
}

// failGetMore evaluates failGetMoreAfterCursorCheckout for a getMore that
// has checked out its cursor on ns.
func (c *Ctx) failGetMore(ns string) error {
	fp := c.Env.FailPoints
	if fp == nil || !fp.Active() {
		return nil
	}
	t := c.failTarget(c.cmd)
	t.NS = ns
	cfg, ok := fp.Point(failpoint.FailGetMoreAfterCursorCheckout).Eval(func(cfg *failpoint.Config) bool {
		return cfg.Parsed.(*failpoint.GetMoreData).Matches(t)
	})
	if !ok {
		return nil
	}
	return cfg.Parsed.(*failpoint.GetMoreData).Error()
}
