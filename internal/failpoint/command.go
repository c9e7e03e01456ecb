package failpoint

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The fail points Cairn has. Their names and data are mongod's.
const (
	// FailCommand fails, stalls or disconnects the commands its data
	// names (mongod's failCommand, the one drivers' tests use).
	FailCommand = "failCommand"
	// FailGetMoreAfterCursorCheckout fails a getMore once its cursor has
	// been found and checked out; the cursor is then gone.
	FailGetMoreAfterCursorCheckout = "failGetMoreAfterCursorCheckout"
	// OnPrimaryTransactionalWrite fires on each statement of a retryable
	// write that wrote, before the command's transaction commits: it
	// closes the connection (closeConnection, true unless given false) and
	// fails the statement (failBeforeCommitExceptionCode), rolling back
	// its write.
	OnPrimaryTransactionalWrite = "onPrimaryTransactionalWrite"
)

// Defs are the server's fail points.
func Defs() []Def {
	return []Def{
		{Name: FailCommand, Parse: func(d bson.Doc) (any, error) { return parseCommandData(d) }},
		{Name: FailGetMoreAfterCursorCheckout, Parse: func(d bson.Doc) (any, error) { return parseGetMoreData(d) }},
		{Name: OnPrimaryTransactionalWrite, Parse: func(d bson.Doc) (any, error) { return parseTransactionalWriteData(d) }},
	}
}

// Target is the command a fail point is evaluated for.
type Target struct {
	// Names are the command's name and aliases (failCommands matches any).
	Names []string
	// NS is the command's namespace: "db.collection" when its first
	// argument names a collection, else the database.
	NS string
	// AppName is the connection's client metadata application.name.
	AppName string
	// ThreadName is the connection's name as currentOp's desc shows it
	// ("conn12").
	ThreadName string
}

// Filter is the part of a fail point's data that chooses the commands it
// applies to (mongod's shouldActivateFailCommandFailPoint).
type Filter struct {
	FailCommands []string
	// FailAll is failAllCommands: every command but configureFailPoint.
	FailAll                             bool
	AppName, Namespace, ThreadName      string
	HasAppName, HasNamespace, HasThread bool
}

// Matches reports whether the filter selects t. configureFailPoint is never
// selected, even when named. (failInternalCommands and failLocalClients
// select commands of internal clients and of the server's own threads,
// which never reach a fail point in Cairn: every command comes from a
// client connection.)
func (f *Filter) Matches(t Target) bool {
	if len(t.Names) == 0 || t.Names[0] == "configureFailPoint" {
		return false
	}
	if f.HasThread && t.ThreadName != f.ThreadName {
		return false
	}
	if f.HasAppName && t.AppName != f.AppName {
		return false
	}
	if f.HasNamespace && t.NS != f.Namespace {
		return false
	}
	if f.FailAll {
		return true
	}
	for _, want := range f.FailCommands {
		for _, n := range t.Names {
			if n == want {
				return true
			}
		}
	}
	return false
}

// CommandData is failCommand's data.
type CommandData struct {
	Filter
	// ErrorCode fails the command with this code (when HasErrorCode).
	ErrorCode    int32
	HasErrorCode bool
	// ErrorLabels, when HasErrorLabels, replace the labels the server
	// would give the error (an array document, possibly empty).
	ErrorLabels    bson.Doc
	HasErrorLabels bool
	// WriteConcernError is added to the reply of a command that takes a
	// write concern, which runs (nil: none).
	WriteConcernError bson.Doc
	// CloseConnection closes the connection without a reply.
	CloseConnection bool
	// BlockConnection makes the command wait BlockTime before going on.
	BlockConnection bool
	BlockTime       time.Duration
}

// BeforeRun reports whether the data acts before the command runs (an
// error, a closed connection or a wait); a failCommand with only a
// writeConcernError lets the command run and answers after it.
func (d *CommandData) BeforeRun() bool {
	return d.HasErrorCode || d.CloseConnection || d.BlockConnection
}

// Error is the error the command fails with, or nil: code, mongod's
// message, and the labels the data gives.
func (d *CommandData) Error() *mongoerr.Error {
	if !d.HasErrorCode || d.ErrorCode == 0 {
		return nil // errorCode 0 is mongod's OK status: nothing to raise
	}
	return mongoerr.New(d.ErrorCode, "Failing command via 'failCommand' failpoint")
}

// field reads e into the filter if it is one of its fields.
func (f *Filter) field(e bson.Element) (bool, error) {
	switch e.Key {
	case "failCommands":
		if e.Value.Type != bson.TypeArray {
			return true, badType(e, "array")
		}
		f.FailCommands = f.FailCommands[:0]
		it := e.Value.Document().Iter()
		for it.Next() {
			v := it.Element().Value
			if v.Type != bson.TypeString {
				return true, mongoerr.New(mongoerr.TypeMismatch, "failCommands must hold command names (strings), found %s", v.Type)
			}
			f.FailCommands = append(f.FailCommands, v.StringValue())
		}
	case "failAllCommands":
		// mongod tests only the field's presence.
		f.FailAll = true
	case "appName", "namespace", "threadName":
		if e.Value.Type != bson.TypeString {
			return true, badType(e, "string")
		}
		s := e.Value.StringValue()
		switch e.Key {
		case "appName":
			f.AppName, f.HasAppName = s, true
		case "namespace":
			f.Namespace, f.HasNamespace = s, true
		default:
			f.ThreadName, f.HasThread = s, true
		}
	case "failInternalCommands", "failLocalClients":
		if e.Value.Type != bson.TypeBoolean {
			return true, badType(e, "bool")
		}
	default:
		return false, nil
	}
	return true, nil
}

func parseCommandData(data bson.Doc) (*CommandData, error) {
	d := &CommandData{}
	hasBlockTime := false
	it := data.Iter()
	for it.Next() {
		e := it.Element()
		if ok, err := d.Filter.field(e); ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		switch e.Key {
		case "errorCode":
			n, ok := e.Value.AsInt64()
			if !ok || n != int64(int32(n)) {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "failCommand's errorCode must be a 32-bit integer, found %s", e.Value.String())
			}
			d.ErrorCode, d.HasErrorCode = int32(n), true
		case "errorLabels":
			if e.Value.Type != bson.TypeArray {
				return nil, badType(e, "array")
			}
			labels := e.Value.Document()
			li := labels.Iter()
			for li.Next() {
				if li.Element().Value.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "errorLabels must hold strings, found %s", li.Element().Value.Type)
				}
			}
			d.ErrorLabels, d.HasErrorLabels = labels, true
		case "writeConcernError":
			if e.Value.Type != bson.TypeDocument {
				return nil, badType(e, "object")
			}
			d.WriteConcernError = e.Value.Document()
		case "closeConnection", "blockConnection":
			if e.Value.Type != bson.TypeBoolean {
				return nil, badType(e, "bool")
			}
			if e.Key == "closeConnection" {
				d.CloseConnection = e.Value.Boolean()
			} else {
				d.BlockConnection = e.Value.Boolean()
			}
		case "blockTimeMS":
			n, ok := e.Value.AsInt64()
			if !ok {
				return nil, badType(e, "integer")
			}
			if n < 0 {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "'blockTimeMS' must be non-negative")
			}
			d.BlockTime, hasBlockTime = time.Duration(n)*time.Millisecond, true
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "failCommand's data field '%s' is not supported by Cairn (it has failCommands, failAllCommands, errorCode, errorLabels, writeConcernError, closeConnection, blockConnection, blockTimeMS, appName, namespace, threadName, failInternalCommands, failLocalClients)", e.Key)
		}
	}
	if d.BlockConnection && !hasBlockTime {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "must specify 'blockTimeMS' when 'blockConnection' is true")
	}
	return d, nil
}

// GetMoreData is failGetMoreAfterCursorCheckout's data.
type GetMoreData struct {
	Filter
	// ErrorCode is the code getMore fails with (InternalError if not
	// given).
	ErrorCode int32
}

// Error is the error a getMore fails with.
func (d *GetMoreData) Error() *mongoerr.Error {
	return mongoerr.New(d.ErrorCode, "Hit the 'failGetMoreAfterCursorCheckout' failpoint")
}

func parseGetMoreData(data bson.Doc) (*GetMoreData, error) {
	d := &GetMoreData{ErrorCode: mongoerr.InternalError}
	it := data.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "failCommands" || e.Key == "failAllCommands" {
			continue // mongod replaces them with ["getMore"]
		}
		if ok, err := d.Filter.field(e); ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		switch e.Key {
		case "errorCode":
			n, ok := e.Value.AsInt64()
			if !ok || n != int64(int32(n)) {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "errorCode must be a 32-bit integer, found %s", e.Value.String())
			}
			d.ErrorCode = int32(n)
		case "closeConnection":
			// Drivers' tests pass closeConnection: false; mongod's
			// getMore fail point only ever raises errorCode.
			if e.Value.Type != bson.TypeBoolean || e.Value.Boolean() {
				return nil, mongoerr.New(mongoerr.BadValue, "failGetMoreAfterCursorCheckout only fails with errorCode, as mongod's: closeConnection may only be false")
			}
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "failGetMoreAfterCursorCheckout's data field '%s' is not supported (it has errorCode, appName, namespace, threadName, failInternalCommands, failLocalClients)", e.Key)
		}
	}
	d.FailCommands = []string{"getMore"}
	return d, nil
}

// TransactionalWriteData is onPrimaryTransactionalWrite's data (mongod's
// TransactionParticipant reads the same two fields).
type TransactionalWriteData struct {
	// CloseConnection ends the client's connection: the statement still
	// commits (unless it fails), but no reply is sent.
	CloseConnection bool
	// FailCode, when HasFailCode, fails the statement with this code:
	// "The write must not be reflected".
	FailCode    int32
	HasFailCode bool
}

func parseTransactionalWriteData(data bson.Doc) (*TransactionalWriteData, error) {
	d := &TransactionalWriteData{CloseConnection: true}
	it := data.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "closeConnection":
			if e.Value.Type != bson.TypeBoolean {
				return nil, badType(e, "bool")
			}
			d.CloseConnection = e.Value.Boolean()
		case "failBeforeCommitExceptionCode":
			n, ok := e.Value.AsInt64()
			if !ok || n != int64(int32(n)) {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "failBeforeCommitExceptionCode must be a 32-bit integer, found %s", e.Value.String())
			}
			d.FailCode, d.HasFailCode = int32(n), true
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "onPrimaryTransactionalWrite's data field '%s' is not supported (it has closeConnection, failBeforeCommitExceptionCode)", e.Key)
		}
	}
	return d, nil
}

func badType(e bson.Element, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "fail point data field '%s' must be of type %s, found %s", e.Key, want, e.Value.Type)
}

// RetryableWriteError reports whether mongod labels an error
// RetryableWriteError (its ErrorLabelBuilder): the command is a retryable
// write (it has a txnNumber and no autocommit) or a transaction's
// commitTransaction/abortTransaction, and its code or its write concern
// error's code is retriable. Labels a failCommand gives replace this rule.
func RetryableWriteError(cmd string, hasTxnNumber, hasAutocommit bool, code, wcCode int32) bool {
	if !hasTxnNumber {
		return false
	}
	if hasAutocommit && cmd != "commitTransaction" && cmd != "abortTransaction" {
		return false
	}
	return (code != 0 && mongoerr.InCategory(code, mongoerr.CategoryRetriableError)) ||
		(wcCode != 0 && mongoerr.InCategory(wcCode, mongoerr.CategoryRetriableError))
}
