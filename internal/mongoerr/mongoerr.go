// Package mongoerr defines the error type that carries a MongoDB error code,
// code name and message from any layer of Cairn to the wire reply, and the
// codes. The named codes, their names and their categories are generated
// from MongoDB's error_codes.yml (codes_gen.go, by ./gen); the numbered
// assertion codes mongod raises without a name (uassert(15976, ...)) have
// hand-written constants in locations.go and answer codeName
// "Location<code>". Call sites name every code; a test rejects literals.
package mongoerr

//go:generate go run ./gen -o codes_gen.go $MONGO_ERROR_CODES

import (
	"context"
	"errors"
	"fmt"
)

// Error is an error with a MongoDB code. The server turns it into
// {ok: 0, errmsg, code, codeName} (or a writeErrors entry).
type Error struct {
	Code    int32
	Message string
	// Extra is a BSON document whose fields are appended to the error
	// document (e.g. keyPattern and keyValue for duplicate keys); may be nil.
	Extra []byte
}

func (e *Error) Error() string { return e.Message }

// CodeName returns MongoDB's name for the code.
func (e *Error) CodeName() string { return CodeName(e.Code) }

// New returns an *Error with code and a formatted message.
func New(code int32, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Code: code, Message: format}
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// As returns err as an *Error, or an InternalError wrapping it. (Storage
// errors with a MongoDB meaning, such as a write refused for lack of disk
// space, are translated by the layer that knows the engine: see
// internal/command's storageError.)
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InternalError, Message: err.Error()}
}

// FromContext maps a context's error to MongoDB's error for the reason an
// operation stopped: MaxTimeMSExpired (50) for a deadline (maxTimeMS),
// Interrupted (11601) for a cancellation (killOp); other errors are
// returned unchanged.
func FromContext(err error) error {
	var in *Interruption
	if errors.As(err, &in) {
		return New(in.Code, "%s", in.Message)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return New(MaxTimeMSExpired, "operation exceeded time limit")
	case errors.Is(err, context.Canceled):
		return New(Interrupted, "operation was interrupted")
	}
	return err
}

// IsInterruption reports the codes that stop an operation as a whole
// rather than fail one of its statements (mongod's isInterruption: the
// Interruption category, of which Cairn answers Interrupted and
// MaxTimeMSExpired): a write command interrupted by one fails as a command.
func IsInterruption(err error) bool {
	var e *Error
	return errors.As(err, &e) && InCategory(e.Code, CategoryInterruption)
}

// CodeName returns MongoDB's name for code, or "Location<code>" for the
// numbered assertion codes that have no name (locations.go).
func CodeName(code int32) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return fmt.Sprintf("Location%d", code)
}

// String returns the category's name in error_codes.yml.
func (c Category) String() string {
	if int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return fmt.Sprintf("Category(%d)", uint8(c))
}

// InCategory reports whether error_codes.yml puts code in category c
// (mongod's ErrorCodes::is<Category>).
func InCategory(code int32, c Category) bool {
	return int(c) < len(categoryNames) && codeCategories[code]&(1<<c) != 0
}

// Categories returns the categories of code, in error_codes.yml's order.
func Categories(code int32) []Category {
	set := codeCategories[code]
	var cs []Category
	for c := range len(categoryNames) {
		if set&(1<<c) != 0 {
			cs = append(cs, Category(c))
		}
	}
	return cs
}
