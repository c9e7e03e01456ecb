package wire

import (
	"fmt"
	"strconv"
)

// MongoDB error codes used by this package.
const (
	CodeInternalError            = 1
	CodeBadValue                 = 2
	CodeFailedToParse            = 9
	CodeProtocolError            = 17
	CodeInvalidBSON              = 22
	CodeZLibError                = 147
	CodeIllegalOpMsgFlag         = 223
	CodeTooManyDocumentSequences = 233
	CodeChecksumMismatch         = 288
	CodeMultipleBodySections     = 40430
	CodeDuplicateDocSequence     = 40431
	CodeUnknownSectionKind       = 40432
	CodeMissingBody              = 40587
)

var codeNames = map[int32]string{
	CodeInternalError:            "InternalError",
	CodeBadValue:                 "BadValue",
	CodeFailedToParse:            "FailedToParse",
	CodeProtocolError:            "ProtocolError",
	CodeInvalidBSON:              "InvalidBSON",
	CodeZLibError:                "ZLibError",
	CodeIllegalOpMsgFlag:         "IllegalOpMsgFlag",
	CodeTooManyDocumentSequences: "TooManyDocumentSequences",
	CodeChecksumMismatch:         "ChecksumMismatch",
	// MongoDB raises 40430, 40431, 40432 and 40587 as plain assertion codes
	// without a code name; Location<code> is how the server names them.
	CodeMultipleBodySections: "Location40430",
	CodeDuplicateDocSequence: "Location40431",
	CodeUnknownSectionKind:   "Location40432",
	CodeMissingBody:          "Location40587",
}

// ProtocolError reports a message that could not be decoded.
//
// Code, CodeName and Msg are suitable for the code, codeName and errmsg fields
// of an error reply. If Fatal is set the stream can no longer be framed (bad
// length prefix, oversized or truncated message) and the connection must be
// closed. Otherwise the message was framed correctly and has been consumed
// entirely, so the caller can answer with an error reply (to Header.RequestID,
// using Compressor, unless Flags has FlagMoreToCome) and read the next message.
type ProtocolError struct {
	Code     int32
	CodeName string
	Msg      string
	Fatal    bool

	// Header is the header of the offending message: for a compressed
	// message, the reconstructed inner header once decompression succeeded,
	// the OP_COMPRESSED header otherwise. It is zero when the header itself
	// could not be read.
	Header Header
	// Compressor is the compressor of the offending message, so that an
	// error reply can be compressed the same way.
	Compressor Compressor
	// Flags holds the OP_MSG flag bits when the message is an OP_MSG long
	// enough to have them, and zero otherwise.
	Flags uint32
	// TooLarge reports that the message, or its inflated size, exceeds
	// the Reader's maximum message size.
	TooLarge bool

	// Err is the underlying cause, if any (for example io.ErrUnexpectedEOF
	// for a truncated message or a decompressor's error).
	Err error
}

// Error implements the error interface.
func (e *ProtocolError) Error() string {
	return "wire: " + e.Msg + " (" + e.CodeName + ", code " + strconv.Itoa(int(e.Code)) + ")"
}

// Unwrap returns the underlying cause.
func (e *ProtocolError) Unwrap() error { return e.Err }

// newError returns a non-fatal ProtocolError with the given code.
func newError(code int32, format string, args ...any) *ProtocolError {
	return &ProtocolError{Code: code, CodeName: codeName(code), Msg: fmt.Sprintf(format, args...)}
}

// fatalError returns a fatal ProtocolError (code ProtocolError) caused by err.
func fatalError(err error, format string, args ...any) *ProtocolError {
	e := newError(CodeProtocolError, format, args...)
	e.Fatal = true
	e.Err = err
	return e
}

func codeName(code int32) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return "Location" + strconv.Itoa(int(code))
}
