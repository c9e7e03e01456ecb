package session

// The session fields of a request, as mongod's
// initializeOperationSessionInfo reads them (CheckFields), and a
// transaction's statement rules, as mongod 7.0's TransactionParticipant
// applies them when a command begins or continues a transaction
// (BeginStatement; internal/command/transactions.go runs the statement):
//
//   - a txnNumber lower than the session's active one is TransactionTooOld;
//   - startTransaction with a higher one aborts the open transaction and
//     begins a new one; at the active number it is
//     ConflictingOperationInProgress (only a shard may restart one);
//   - without startTransaction the txnNumber must be the open (or ended)
//     transaction's: else NoSuchTransaction; an aborted one answers
//     NoSuchTransaction, a committed one TransactionCommitted (except
//     commitTransaction, which answers its outcome again);
//   - readConcern only on the first statement, writeConcern only on
//     commitTransaction/abortTransaction (InvalidOptions);
//   - only the commands of txnCommands run in a transaction
//     (OperationNotSupportedInTransaction); count has its own message.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// CheckFields refuses, before anything runs, the transaction fields a
// request may not carry: as mongod, txnNumber needs an lsid and a replica
// set, autocommit needs a txnNumber and startTransaction autocommit.
func CheckFields(body bson.Doc, replSet bool) error {
	_, hasLsid := body.Lookup("lsid")
	txn, hasTxn := body.Lookup("txnNumber")
	ac, hasAC := body.Lookup("autocommit")
	st, hasST := body.Lookup("startTransaction")
	if !hasTxn && !hasAC && !hasST {
		return nil
	}
	if hasTxn {
		if !hasLsid {
			return mongoerr.New(mongoerr.InvalidOptions, "Transaction number requires a session ID to also be specified")
		}
		if !replSet {
			// A standalone refuses transaction numbers before running
			// anything, so that no write of a transaction lands outside one.
			return mongoerr.New(mongoerr.IllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos")
		}
		if txn.Type != bson.TypeInt64 {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'OperationSessionInfo.txnNumber' is the wrong type '%s', expected type 'long'", txn.Type)
		}
		if txn.Int64() < 0 {
			return mongoerr.New(mongoerr.InvalidOptions, "Transaction number cannot be negative")
		}
	} else if hasAC {
		return mongoerr.New(mongoerr.InvalidOptions, "'autocommit' field requires a transaction number to also be specified")
	}
	if hasAC {
		if ac.Type != bson.TypeBoolean {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'OperationSessionInfo.autocommit' is the wrong type '%s', expected type 'bool'", ac.Type)
		}
		if ac.Boolean() {
			return mongoerr.New(mongoerr.InvalidOptions, "Specifying autocommit=true is not allowed.")
		}
	} else if hasST {
		return mongoerr.New(mongoerr.InvalidOptions, "'startTransaction' field requires 'autocommit' field to also be specified")
	}
	if hasST && (st.Type != bson.TypeBoolean || !st.Boolean()) {
		return mongoerr.New(mongoerr.InvalidOptions, "Specifying startTransaction=false is not allowed.")
	}
	return nil
}

// RetryableCommands are the commands that take a txnNumber outside
// transactions, by canonical name.
var RetryableCommands = map[string]bool{"insert": true, "update": true, "delete": true, "findAndModify": true}

// txnCommands are the commands allowed in a multi-document transaction.
var txnCommands = map[string]bool{
	"find": true, "getMore": true, "killCursors": true, "aggregate": true, "distinct": true,
	"insert": true, "update": true, "delete": true, "findAndModify": true, "bulkWrite": true,
	"commitTransaction": true, "abortTransaction": true, "create": true, "createIndexes": true,
}

// CheckTxnCommand refuses a command that cannot run in a transaction.
func CheckTxnCommand(name string) error {
	if txnCommands[name] {
		return nil
	}
	if name == "count" {
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run 'count' in a multi-document transaction. Please see http://dochub.mongodb.org/core/transaction-count for a recommended alternative.")
	}
	return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run '%s' in a multi-document transaction.", name)
}

// IsCommitOrAbort reports commitTransaction and abortTransaction.
func IsCommitOrAbort(name string) bool {
	return name == "commitTransaction" || name == "abortTransaction"
}

// Start is a transaction a command starts (begun once the command's
// readConcern waits and fail points have run).
type Start struct {
	Slot        *Slot
	Key         Key
	N           int64
	ReadConcern bson.Doc
}

// Statement is how a command takes part in a transaction (BeginStatement).
type Statement int

const (
	// Continue: the command is a statement of the open transaction.
	Continue Statement = iota
	// Starting: the command starts a transaction (the *Start).
	Starting
	// Answered: a retried commitTransaction of a committed transaction,
	// which answers its outcome again.
	Answered
)

// BeginStatement applies the statement rules to command name (body) of
// transaction n of session k, whose slot the command has checked out;
// active is the session's active transaction number.
func BeginStatement(slot *Slot, k Key, n, active int64, name string, body bson.Doc) (Statement, *Start, error) {
	_, start := body.Lookup("startTransaction")
	if n < active {
		return 0, nil, mongoerr.New(mongoerr.TransactionTooOld, "Cannot start transaction with { txnNumber: %d, txnRetryCounter: 0 } on session %s because a newer transaction with txnNumberAndRetryCounter { txnNumber: %d, txnRetryCounter: 0 } has already started on this session.", n, k, active)
	}
	if _, ok := body.Lookup("writeConcern"); ok && !IsCommitOrAbort(name) {
		return 0, nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot set write concern after starting a transaction: writeConcern is not allowed within a multi-statement transaction")
	}
	rc, hasRC := body.Lookup("readConcern")
	if start {
		if n == active {
			return 0, nil, mongoerr.New(mongoerr.ConflictingOperationInProgress, "Only servers in a sharded cluster can start a new transaction at the active transaction number")
		}
		var rcDoc bson.Doc
		if hasRC && rc.Type == bson.TypeDocument {
			rcDoc = append(bson.Doc(nil), rc.Document()...)
			if l, ok := rcDoc.Lookup("level"); ok && l.Type == bson.TypeString {
				switch l.StringValue() {
				case "local", "majority", "snapshot":
				default:
					return 0, nil, mongoerr.New(mongoerr.InvalidOptions, "The readConcern level must be either 'local' (default), 'majority' or 'snapshot' in order to run in a transaction")
				}
			}
			if _, ok := rcDoc.Lookup("atClusterTime"); ok {
				return 0, nil, mongoerr.New(mongoerr.InvalidOptions, "readConcern atClusterTime in a transaction is not supported by Cairn: a transaction reads the latest snapshot")
			}
		}
		return Starting, &Start{Slot: slot, Key: k, N: n, ReadConcern: rcDoc}, nil
	}
	if hasRC && !IsCommitOrAbort(name) {
		return 0, nil, mongoerr.New(mongoerr.InvalidOptions, "Only the first command in a transaction may specify a readConcern")
	}
	if slot.Number != n || slot.State == TxnNone {
		return 0, nil, mongoerr.New(mongoerr.NoSuchTransaction, "Given transaction number %d does not match any in-progress transactions. The active transaction number is %d", n, active)
	}
	switch slot.State {
	case TxnAborted:
		return 0, nil, mongoerr.New(mongoerr.NoSuchTransaction, "Transaction with { txnNumber: %d } has been aborted.", n)
	case TxnCommitted:
		if name == "commitTransaction" {
			return Answered, nil, nil // answers its outcome again
		}
		return 0, nil, mongoerr.New(mongoerr.TransactionCommitted, "Transaction with { txnNumber: %d } has been committed.", n)
	}
	return Continue, nil, nil
}

// CheckRetryable checks retryable write n of session k against the
// session's transaction (slot, checked out), as mongod's beginOrContinue:
// a lower number than the transaction's is TransactionTooOld, the
// transaction's own number IncompleteTransactionHistory, and a higher one
// aborts the open transaction.
func CheckRetryable(slot *Slot, k Key, n int64) error {
	switch {
	case slot.Number < 0:
	case n < slot.Number:
		return mongoerr.New(mongoerr.TransactionTooOld, "Cannot start transaction with { txnNumber: %d, txnRetryCounter: 0 } on session %s because a newer transaction with txnNumberAndRetryCounter { txnNumber: %d, txnRetryCounter: 0 } has already started on this session.", n, k, slot.Number)
	case n == slot.Number:
		return mongoerr.New(mongoerr.IncompleteTransactionHistory, "Cannot retry a retryable write that has been converted into a transaction")
	case slot.State == TxnInProgress:
		slot.End(false)
	}
	return nil
}

// TransientError is the TransientTransactionError label's rule (mongod's
// isTransientTransactionError) for command name (body) failing with code:
// only for a command of a transaction.
func TransientError(name string, body bson.Doc, code int32, hasWCError bool) bool {
	if _, ok := body.Lookup("autocommit"); !ok {
		return false
	}
	if _, ok := body.Lookup("txnNumber"); !ok {
		return false
	}
	switch code {
	case mongoerr.WriteConflict, mongoerr.LockTimeout, mongoerr.PreparedTransactionInProgress,
		mongoerr.SnapshotTooOld, mongoerr.SnapshotUnavailable:
		return !(IsCommitOrAbort(name) && hasWCError)
	case mongoerr.NoSuchTransaction:
		return !(IsCommitOrAbort(name) && hasWCError)
	}
	if IsCommitOrAbort(name) {
		return false
	}
	return mongoerr.InCategory(code, mongoerr.CategoryRetriableError)
}

// ParseList reads the array of lsids (first, the command's first field)
// of refreshSessions, endSessions and killSessions (command name), for
// the user whose digest is uid; at most max.
func ParseList(first bson.Value, uid [32]byte, name string, max int) ([]Key, error) {
	if first.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'array'", name, name, first.Type)
	}
	var keys []Key
	it := first.Document().Iter()
	for it.Next() {
		k, err := ParseLSID(it.Element().Value, uid, name+"."+name)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) > max {
		return nil, mongoerr.New(mongoerr.BadValue, "%s may list at most %d sessions", name, max)
	}
	return keys, nil
}
