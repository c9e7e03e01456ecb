// Package mongoerr defines the error type that carries a MongoDB error code,
// code name and message from any layer of Cairn to the wire reply, and the
// codes Cairn uses. Codes and names follow MongoDB's error_codes.yml.
package mongoerr

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
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return New(MaxTimeMSExpired, "operation exceeded time limit")
	case errors.Is(err, context.Canceled):
		return New(Interrupted, "operation was interrupted")
	}
	return err
}

// IsInterruption reports the codes that stop an operation as a whole
// rather than fail one of its statements (mongod's isInterruption for the
// codes Cairn answers): a write command interrupted by one fails as a
// command.
func IsInterruption(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case Interrupted, MaxTimeMSExpired:
		return true
	}
	return false
}

// MongoDB error codes used by Cairn.
const (
	InternalError                   int32 = 1
	BadValue                        int32 = 2
	NoSuchKey                       int32 = 4
	GraphContainsCycle              int32 = 5
	ViewDepthLimitExceeded          int32 = 165
	HostUnreachable                 int32 = 6
	HostNotFound                    int32 = 7
	UnknownError                    int32 = 8
	FailedToParse                   int32 = 9
	CannotMutateObject              int32 = 10
	UserNotFound                    int32 = 11
	UnsupportedFormat               int32 = 12
	Unauthorized                    int32 = 13
	TypeMismatch                    int32 = 14
	Overflow                        int32 = 15
	InvalidLength                   int32 = 16
	ProtocolError                   int32 = 17
	AuthenticationFailed            int32 = 18
	IllegalOperation                int32 = 20
	NamespaceNotFound               int32 = 26
	IndexNotFound                   int32 = 27
	PathNotViable                   int32 = 28
	NonExistentPath                 int32 = 29
	InvalidPath                     int32 = 30
	RoleNotFound                    int32 = 31
	ConflictingUpdateOperators      int32 = 40
	CursorNotFound                  int32 = 43
	NamespaceExists                 int32 = 48
	MaxTimeMSExpired                int32 = 50
	DollarPrefixedFieldName         int32 = 52
	InvalidIdField                  int32 = 53
	NotSingleValueField             int32 = 54
	InvalidDBRef                    int32 = 55
	EmptyFieldName                  int32 = 56
	DottedFieldName                 int32 = 57
	CommandNotFound                 int32 = 59
	ImmutableField                  int32 = 66
	CannotCreateIndex               int32 = 67
	IndexAlreadyExists              int32 = 68
	InvalidOptions                  int32 = 72
	InvalidNamespace                int32 = 73
	IndexOptionsConflict            int32 = 85
	IndexKeySpecsConflict           int32 = 86
	NetworkTimeout                  int32 = 89
	OperationFailed                 int32 = 96
	DocumentValidationFailure       int32 = 121
	NotAReplicaSet                  int32 = 123
	NotImplemented                  int32 = 238
	CommandNotSupported             int32 = 115
	CannotIndexParallelArrays       int32 = 171
	CommandNotSupportedOnView       int32 = 166
	OptionNotSupportedOnView        int32 = 167
	InvalidIndexSpecificationOption int32 = 197
	QueryFeatureNotAllowed          int32 = 224
	Interrupted                     int32 = 11601
	OutOfDiskSpace                  int32 = 14031
	DuplicateKey                    int32 = 11000
	BSONObjectTooLarge              int32 = 10334
	InvalidBSON                     int32 = 22
	OperationNotSupportedInTxn      int32 = 263
	APIStrictError                  int32 = 323
	InvalidPipelineOperator         int32 = 168
	NoQueryExecutionPlans           int32 = 291
	IncompatibleCollationVersion    int32 = 161
	ExceededMemoryLimit             int32 = 146
	ConversionFailure               int32 = 241
	MechanismUnavailable            int32 = 334
	IndexBuildAborted               int32 = 276
)

var names = map[int32]string{
	InternalError: "InternalError", BadValue: "BadValue", NoSuchKey: "NoSuchKey",
	GraphContainsCycle: "GraphContainsCycle", ViewDepthLimitExceeded: "ViewDepthLimitExceeded", HostUnreachable: "HostUnreachable", HostNotFound: "HostNotFound",
	UnknownError: "UnknownError", FailedToParse: "FailedToParse", CannotMutateObject: "CannotMutateObject",
	UserNotFound: "UserNotFound", UnsupportedFormat: "UnsupportedFormat", Unauthorized: "Unauthorized",
	TypeMismatch: "TypeMismatch", Overflow: "Overflow", InvalidLength: "InvalidLength", ProtocolError: "ProtocolError",
	AuthenticationFailed: "AuthenticationFailed", IllegalOperation: "IllegalOperation", NotAReplicaSet: "NotAReplicaSet",
	NamespaceNotFound: "NamespaceNotFound", IndexNotFound: "IndexNotFound", PathNotViable: "PathNotViable",
	NonExistentPath: "NonExistentPath", InvalidPath: "InvalidPath", RoleNotFound: "RoleNotFound",
	ConflictingUpdateOperators: "ConflictingUpdateOperators", CursorNotFound: "CursorNotFound",
	NamespaceExists: "NamespaceExists", MaxTimeMSExpired: "MaxTimeMSExpired",
	DollarPrefixedFieldName: "DollarPrefixedFieldName", InvalidIdField: "InvalidIdField",
	NotSingleValueField: "NotSingleValueField", InvalidDBRef: "InvalidDBRef", EmptyFieldName: "EmptyFieldName",
	DottedFieldName: "DottedFieldName", CommandNotFound: "CommandNotFound", ImmutableField: "ImmutableField",
	CannotCreateIndex: "CannotCreateIndex", IndexAlreadyExists: "IndexAlreadyExists", InvalidOptions: "InvalidOptions",
	InvalidNamespace: "InvalidNamespace", IndexOptionsConflict: "IndexOptionsConflict",
	IndexKeySpecsConflict: "IndexKeySpecsConflict", NetworkTimeout: "NetworkTimeout", OperationFailed: "OperationFailed",
	DocumentValidationFailure: "DocumentValidationFailure", NotImplemented: "NotImplemented",
	CommandNotSupported: "CommandNotSupported", CannotIndexParallelArrays: "CannotIndexParallelArrays",
	CommandNotSupportedOnView: "CommandNotSupportedOnView", OptionNotSupportedOnView: "OptionNotSupportedOnView",
	InvalidIndexSpecificationOption: "InvalidIndexSpecificationOption", QueryFeatureNotAllowed: "QueryFeatureNotAllowed",
	Interrupted: "Interrupted", OutOfDiskSpace: "OutOfDiskSpace", DuplicateKey: "DuplicateKey", BSONObjectTooLarge: "BSONObjectTooLarge",
	InvalidBSON: "InvalidBSON", OperationNotSupportedInTxn: "OperationNotSupportedInTransaction",
	APIStrictError: "APIStrictError", InvalidPipelineOperator: "InvalidPipelineOperator",
	NoQueryExecutionPlans: "NoQueryExecutionPlans", IncompatibleCollationVersion: "IncompatibleCollationVersion",
	ExceededMemoryLimit: "ExceededMemoryLimit", ConversionFailure: "ConversionFailure",
	MechanismUnavailable: "MechanismUnavailable", IndexBuildAborted: "IndexBuildAborted",
	// Wire protocol errors (internal/wire answers them before a command runs).
	147: "ZLibError", 223: "IllegalOpMsgFlag", 233: "TooManyDocumentSequences", 288: "ChecksumMismatch",
}

// CodeName returns MongoDB's name for code, or "Location<code>" for the
// numbered assertion codes that have no name.
func CodeName(code int32) string {
	if n, ok := names[code]; ok {
		return n
	}
	return fmt.Sprintf("Location%d", code)
}
