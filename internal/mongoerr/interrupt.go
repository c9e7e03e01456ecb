package mongoerr

import "context"

// Interruption is why an operation's context was cancelled, when the reason
// is not killOp (Interrupted) or maxTimeMS: a client that went away, a
// shutdown. It is what the context's Err returns: it matches
// context.Canceled with errors.Is, so code that only asks whether the
// context ended needs nothing new, and FromContext answers its code.
type Interruption struct {
	Code    int32
	Message string
}

func (e *Interruption) Error() string { return e.Message }

// Is makes an Interruption a context.Canceled.
func (e *Interruption) Is(target error) bool { return target == context.Canceled }

// The interruptions, shared (they carry no per-operation data).
var (
	ErrClientDisconnect = &Interruption{Code: ClientDisconnect, Message: "operation was interrupted because a client disconnected"}
	ErrShutdown         = &Interruption{Code: InterruptedAtShutdown, Message: "interrupted at shutdown"}
)
