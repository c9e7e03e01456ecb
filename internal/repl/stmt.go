package repl

import "github.com/cairndb/cairn/bson"

// Stmt identifies the statement of a retryable write that a writer is
// applying: the session (lsid), its transaction number and the
// statement's number in the command (stmtId: the position of the document
// or operation in the batch, or the command's stmtId/stmtIds). The
// command sets it before each statement; the oplog writer records lsid,
// txnNumber, stmtId and prevOpTime on the statement's entry and moves
// LastOpTime to that entry's timestamp, so that the entries of one
// txnNumber form a chain, as mongod's do.
type Stmt struct {
	LSID      bson.Doc // the lsid document as the client sent it ({id: UUID[, uid]})
	TxnNumber int64
	StmtID    int32
	// LastOpTime is the timestamp of the previous entry written for this
	// lsid and txnNumber (0: none), the next entry's prevOpTime.
	LastOpTime Timestamp
	// RetryImage is a findAndModify's image kind ("preImage",
	// "postImage"; "": not a findAndModify): its update and delete entry
	// carries it as needsRetryImage, as mongod's, and so does the insert
	// of an upsert that returns the new document, so that a member
	// applying the entry can store the image a retry answers.
	RetryImage string
}

// StmtWriter is implemented by the owner of a write (the command's
// context) when the write is a retryable write's statement.
type StmtWriter interface {
	// WriteStmt returns the statement being written, nil when the write
	// is not part of a retryable write.
	WriteStmt() *Stmt
}
