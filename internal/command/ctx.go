package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The request framework the handlers run in is internal/dispatch's: the
// server's state (Env), the connection (Conn), one invocation (Ctx), the
// table's entries (Command), and Dispatch around every handler. These
// aliases keep the handlers' signatures readable, and they are what the
// server reaches the framework through: importing this package registers
// the table (table.go) before the first Dispatch.
type (
	Env     = dispatch.Env
	Conn    = dispatch.Conn
	Ctx     = dispatch.Ctx
	Command = dispatch.Command
	Handler = dispatch.Handler
	Stats   = dispatch.Stats
	args    = dispatch.Args
)

// DefaultPreAuthMaxMessageSize is preAuthMaximumMessageSizeBytes' default
// (dispatch.DefaultPreAuthMaxMessageSize).
const DefaultPreAuthMaxMessageSize = dispatch.DefaultPreAuthMaxMessageSize

// Dispatch runs the command in c.Body and returns the complete reply
// (dispatch.Dispatch).
func Dispatch(c *Ctx) bson.Doc { return dispatch.Dispatch(c) }

// ErrorReply builds an error reply outside any command
// (dispatch.ErrorReply).
func ErrorReply(err error) bson.Doc { return dispatch.ErrorReply(err) }

// ProcessID is the processId this server reports in topologyVersion.
func ProcessID() [12]byte { return dispatch.ProcessID() }

// newArgs gives typed access to c's fields (dispatch.Args).
func newArgs(c *Ctx) args { return dispatch.NewArgs(c) }

// ctxErr maps a context error to MongoDB's error for the reason.
func ctxErr(err error) error { return mongoerr.FromContext(err) }

// asMongoErr is the MongoDB error for err, storage-engine errors included
// (exec.AsMongoErr).
func asMongoErr(err error) *mongoerr.Error { return exec.AsMongoErr(err) }
