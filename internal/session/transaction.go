package session

// Multi-document transactions: a session's transaction state, as mongod's
// TransactionParticipant holds it.
//
// A session has one Slot. A command that carries autocommit: false checks
// the slot out for its whole run (Checkout/Release: one command of the
// session at a time, as mongod checks a session out), then begins or
// continues the transaction by mongod's rules (command/transactions.go).
// An open transaction holds a concurrent kv transaction
// (kv.DB.BeginConcurrent) across statements: its snapshot is what every
// statement reads, whatever the readConcern (local, majority and snapshot
// all read it: a one-member set's majority is its own state), and its
// writes are invisible to others until commitTransaction.
//
// A transaction can end while no command holds the slot: the reaper
// (transactionLifetimeLimitSeconds), killSessions, endSessions and session
// expiry call AbortAsync, which aborts the kv transaction at once (its
// keys are released, waiters woken: kv.Tx.Abort is safe from any
// goroutine) and, when no command holds the slot, finishes the abort;
// otherwise the command's Release does.

import (
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// TxnState is the state of a session's transaction.
type TxnState int

// The states of a transaction.
const (
	TxnNone TxnState = iota
	TxnInProgress
	TxnCommitted
	TxnAborted
)

func (s TxnState) String() string {
	switch s {
	case TxnInProgress:
		return "TxnInProgress"
	case TxnCommitted:
		return "TxnCommitted"
	case TxnAborted:
		return "TxnAborted"
	}
	return "TxnNone"
}

// Slot is a session's transaction state. Its fields belong to the command
// that holds it checked out.
type Slot struct {
	use chan struct{} // holds one token while a command has the slot

	// Number is the txnNumber of the session's last transaction (-1:
	// none), State its state.
	Number int64
	State  TxnState
	// Tx is the open transaction's kv transaction (nil unless
	// TxnInProgress).
	Tx *kv.Tx
	// ReadConcern is the transaction's readConcern (nil: none given).
	ReadConcern bson.Doc
	// Started is when it began; Expires when the reaper aborts it.
	Started, Expires time.Time
	// Wrote: a statement wrote (the commit has an applyOps entry).
	Wrote bool
	// CommitTS is the commit's applyOps entry ts (0: none): a retried
	// commit answers it as operationTime.
	CommitTS int64
	// OnEnd runs when an open transaction ends (commit or abort), with its
	// kv transaction: the oplog forgets its buffered operations.
	OnEnd func(tx *kv.Tx)

	active bool                  // counted in CurrentActive (the holder's)
	killed atomic.Bool           // aborted asynchronously; the holder finishes
	live   atomic.Pointer[kv.Tx] // the open transaction's, for AbortAsync
	expiry atomic.Int64
	stats  *TxnStats
}

// TxnStats are serverStatus's transactions counters: the multi-document
// transactions', and the retryable writes' (statements and commands
// answered from their record, writes of config.transactions).
type TxnStats struct {
	CurrentOpen, CurrentActive   atomic.Int64
	TotalStarted, TotalCommitted atomic.Int64
	TotalAborted                 atomic.Int64
	RetriedCommands              atomic.Int64
	RetriedStatements            atomic.Int64
	TransactionsCollectionWrites atomic.Int64
}

func newSlot(stats *TxnStats) *Slot {
	return &Slot{use: make(chan struct{}, 1), Number: -1, stats: stats}
}

// Checkout waits for the slot (until done is closed: the command's
// context). A transaction aborted meanwhile is finished first.
func (s *Slot) Checkout(done <-chan struct{}) bool {
	select {
	case s.use <- struct{}{}:
	case <-done:
		return false
	}
	s.finishKilled()
	if s.State == TxnInProgress {
		s.setActive(true)
	}
	return true
}

func (s *Slot) setActive(on bool) {
	if s.active != on {
		s.active = on
		if on {
			s.stats.CurrentActive.Add(1)
		} else {
			s.stats.CurrentActive.Add(-1)
		}
	}
}

// Release gives the slot back.
func (s *Slot) Release() {
	s.finishKilled()
	s.setActive(false)
	<-s.use
}

// Killed reports whether the open transaction was aborted asynchronously.
func (s *Slot) Killed() bool { return s.killed.Load() }

func (s *Slot) finishKilled() {
	if s.killed.Load() && s.State == TxnInProgress {
		s.End(false)
	}
}

// Begin starts transaction number n on the concurrent kv transaction tx,
// aborting the open one if any.
func (s *Slot) Begin(n int64, tx *kv.Tx, readConcern bson.Doc, lifetime time.Duration, now time.Time) {
	if s.State == TxnInProgress {
		s.End(false)
	}
	s.killed.Store(false)
	s.Number, s.State, s.Tx = n, TxnInProgress, tx
	s.ReadConcern = readConcern
	s.Started, s.Expires = now, now.Add(lifetime)
	s.expiry.Store(s.Expires.UnixNano())
	s.Wrote, s.CommitTS = false, 0
	s.stats.TotalStarted.Add(1)
	s.stats.CurrentOpen.Add(1)
	s.live.Store(tx)
	s.setActive(true) // the command beginning it holds it
}

// End ends the open transaction: committed (its kv transaction already
// committed) or aborted (rolled back).
func (s *Slot) End(committed bool) {
	if s.State != TxnInProgress {
		return
	}
	tx := s.Tx
	if committed {
		s.State = TxnCommitted
		s.stats.TotalCommitted.Add(1)
	} else {
		s.State = TxnAborted
		s.stats.TotalAborted.Add(1)
	}
	if tx != nil {
		tx.Lend(false)
		if !committed {
			tx.Abort()
		}
		tx.Rollback() // unpins the snapshot (nothing after a commit)
		if s.OnEnd != nil {
			s.OnEnd(tx)
		}
	}
	s.Tx = nil
	s.live.Store(nil)
	s.ReadConcern = nil
	s.stats.CurrentOpen.Add(-1)
	s.setActive(false)
}

// AbortAsync aborts the open transaction from any goroutine: at once in kv
// (its keys go to the writers waiting for them), and entirely now if no
// command holds the slot, else when the holder releases it.
func (s *Slot) AbortAsync() {
	s.killed.Store(true)
	select {
	case s.use <- struct{}{}:
		s.finishKilled()
		<-s.use
	default:
		// A command holds it; abort the kv transaction under its feet (its
		// next operation fails) — Tx.Abort is safe from any goroutine.
		s.abortKV()
	}
}

// Attach records tx as the open transaction's kv transaction (begun after
// Begin).
func (s *Slot) Attach(tx *kv.Tx) {
	s.Tx = tx
	s.live.Store(tx)
}

// abortKV aborts the kv transaction of the holder's open transaction
// (published in live: the holder's fields cannot be read here).
func (s *Slot) abortKV() {
	if tx := s.live.Load(); tx != nil {
		tx.Abort()
	}
}

// expired reports whether an open transaction has outlived its limit.
func (s *Slot) expired(now time.Time) bool {
	e := s.expiry.Load()
	return e != 0 && s.live.Load() != nil && now.UnixNano() > e
}

// Slot returns session k's transaction slot (nil when the session is not
// live).
func (r *Registry) Slot(k Key) *Slot {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.m[k]
	if rec == nil {
		return nil
	}
	if rec.slot == nil {
		rec.slot = newSlot(&r.TxnStats)
	}
	return rec.slot
}

// ActiveTxn is the highest txnNumber a retryable write of session k has
// used since the server started (-1: none).
func (r *Registry) ActiveTxn(k Key) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.m[k]; rec != nil {
		return rec.activeTxn
	}
	return -1
}

// ExpireTxns aborts the open transactions older than their lifetime
// limit and returns how many.
func (r *Registry) ExpireTxns(now time.Time) int {
	r.mu.Lock()
	var slots []*Slot
	for _, rec := range r.m {
		if rec.slot != nil && rec.slot.expired(now) {
			slots = append(slots, rec.slot)
		}
	}
	r.mu.Unlock()
	for _, s := range slots {
		s.AbortAsync()
	}
	return len(slots)
}

// abortSlots aborts the open transactions of slots (sessions ended).
func abortSlots(slots []*Slot) {
	for _, s := range slots {
		if s != nil {
			s.AbortAsync()
		}
	}
}

// RecordTxn writes session k's config.transactions document for
// transaction txnNumber in state ("committed", "aborted") at ts, in the
// write transaction tx, as mongod records a transaction: {_id: lsid,
// txnNum, lastWriteOpTime: {ts, t}, lastWriteDate, state}.
func RecordTxn(tx *kv.Tx, k Key, txnNumber int64, ts repl.Timestamp, state string, now time.Time, term int64) error {
	var b bson.Builder
	b.Reset(make([]byte, 0, txnRecordLen+len(state))) // one buffer, not regrown field by field
	k.AppendDoc(&b, "_id")
	b.AppendInt64("txnNum", txnNumber)
	b.StartDocument("lastWriteOpTime")
	b.AppendTimestamp("ts", ts.T(), ts.I())
	b.AppendInt64("t", term)
	b.End()
	b.AppendDateTime("lastWriteDate", now.UnixMilli())
	b.AppendString("state", state)
	return putDoc(tx, TransactionsColl, k, b.Finish())
}

// txnRecordLen is the size of RecordTxn's document but for the state
// string's bytes.
const txnRecordLen = 4 + (1 + 4 + keyDocLen) + (1 + 7 + 8) + (1 + 16 + 4 + (1 + 3 + 8) + (1 + 2 + 8) + 1) + (1 + 14 + 8) + (1 + 6 + 4 + 1) + 1

// IdleTxn describes an open transaction that no command holds (an
// inactive session, as currentOp's idleSessions lists it).
type IdleTxn struct {
	Key              Key
	Number           int64
	ReadConcern      bson.Doc
	Started, Expires time.Time
}

// IdleTxns calls fn for each open transaction that no command holds
// (its slot taken for the call, so that its fields are stable).
func (r *Registry) IdleTxns(fn func(IdleTxn)) {
	r.mu.Lock()
	type kslot struct {
		k Key
		s *Slot
	}
	var slots []kslot
	for k, rec := range r.m {
		if rec.slot != nil && rec.slot.live.Load() != nil {
			slots = append(slots, kslot{k, rec.slot})
		}
	}
	r.mu.Unlock()
	for _, ks := range slots {
		s := ks.s
		select {
		case s.use <- struct{}{}:
		default:
			continue // a command holds it: listed as that operation
		}
		if s.State == TxnInProgress && !s.killed.Load() {
			fn(IdleTxn{Key: ks.k, Number: s.Number, ReadConcern: s.ReadConcern, Started: s.Started, Expires: s.Expires})
		}
		<-s.use
	}
}

// CommittedTxn reads session k's config.transactions record in tx: the
// number and commit time of its last transaction when that one committed
// (ok false: no record, or a retryable write's).
func CommittedTxn(tx *kv.Tx, k Key) (n int64, ts repl.Timestamp, ok bool, err error) {
	rec, err := readTxnRecord(tx, k)
	if err != nil || rec == nil {
		return 0, 0, false, err
	}
	if st, _ := rec.Lookup("state"); st.Type != bson.TypeString || st.StringValue() != "committed" {
		return 0, 0, false, nil
	}
	n, ts = txnRecordFields(rec)
	return n, ts, true, nil
}

// Restore makes a slot that knows no transaction (a session the server
// has not seen since it started) hold committed transaction n, as its
// config.transactions record says (mongod's refresh from storage): a
// retried commitTransaction answers it again.
func (s *Slot) Restore(n int64, commitTS int64) {
	if s.Number < 0 && s.State == TxnNone {
		s.Number, s.State, s.CommitTS = n, TxnCommitted, commitTS
	}
}

// Doc is currentOp's document of an inactive session's open
// transaction, with mongod's fields (Cairn has no locks to report).
func (t IdleTxn) Doc(now time.Time) bson.Doc {
	var b bson.Builder
	b.AppendString("type", "idleSession")
	b.AppendBool("active", false)
	b.AppendString("desc", "inactive transaction")
	t.Key.AppendDoc(&b, "lsid")
	b.StartDocument("transaction")
	b.StartDocument("parameters")
	b.AppendInt64("txnNumber", t.Number)
	b.AppendBool("autocommit", false)
	if len(t.ReadConcern) > 0 {
		b.AppendDocument("readConcern", t.ReadConcern)
	}
	b.End()
	b.AppendString("startWallClockTime", t.Started.Format("2006-01-02T15:04:05.000-07:00"))
	b.AppendInt64("timeOpenMicros", now.Sub(t.Started).Microseconds())
	b.AppendString("expiryTime", t.Expires.Format("2006-01-02T15:04:05.000-07:00"))
	b.End()
	b.AppendBool("waitingForLock", false)
	b.StartDocument("locks")
	b.End()
	return b.Finish()
}
