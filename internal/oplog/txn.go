package oplog

// Multi-document transactions in the oplog.
//
// A transaction's writes run in a concurrent kv transaction
// (kv.DB.BeginConcurrent) that lives across the client's statements; its
// oplog entries cannot be appended there: an entry's ts must be taken
// under kv's single writer so that ts order is commit order, and the
// oplog's keys would be claimed by the transaction (every other writer
// would conflict with it). So Append, given a concurrent transaction,
// buffers the operation ({op, ns, ui, o, o2}, as mongod's applyOps array
// holds it) in memory, keyed by the transaction; at commit, the session
// code takes them (TakeTxn) and appends ONE entry in the commit's own
// write transaction (kv.Tx.OnCommit, under the writer lock), as mongod 7.0
// writes a transaction that fits in one entry:
//
//	{lsid, txnNumber, op: "c", ns: "admin.$cmd", o: {applyOps: [ops]},
//	 ts, t, v, wall, prevOpTime: {ts: Timestamp(0, 0), t: -1}}
//
// An aborted transaction's operations are dropped (DropTxn). A
// transaction whose operations would make the entry larger than
// MaxTxnBytes is refused (TransactionTooLarge): mongod chains larger ones
// over several entries, which Cairn does not.

import (
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// MaxTxnBytes bounds the operations of one transaction's applyOps entry:
// mongod's BSONObjMaxInternalSize less room for the entry's own fields.
const MaxTxnBytes = 16*1024*1024 + 16*1024 - 4096

type txnOps struct {
	ops   []bson.Doc
	bytes int
}

type txnBuffers struct {
	mu sync.Mutex
	m  map[*kv.Tx]*txnOps
}

// add buffers e for concurrent transaction tx.
func (t *txnBuffers) add(tx *kv.Tx, e *Entry, undo bool) error {
	var b bson.Builder
	// Sized for the fields appendOp writes, so that the buffer is not
	// regrown from nothing field by field.
	b.Reset(make([]byte, 0, len(e.O)+len(e.O2)+len(e.Pre)+len(e.NS)+96))
	e.appendOp(&b)
	if e.Pre != nil && e.UI != nil {
		b.AppendDocument(preImageField, e.Pre)
	}
	if undo && e.Old != nil {
		b.AppendDocument(oldField, e.Old)
	}
	op := b.Finish()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[*kv.Tx]*txnOps)
	}
	p := t.m[tx]
	if p == nil {
		p = &txnOps{}
		t.m[tx] = p
	}
	if p.bytes+len(op)+16 > MaxTxnBytes {
		return mongoerr.New(mongoerr.TransactionTooLarge, "Total size of all transaction operations must be less than %d. Actual size is %d", MaxTxnBytes, p.bytes+len(op)+16)
	}
	p.ops = append(p.ops, op)
	p.bytes += len(op) + 16
	return nil
}

// TakeTxn returns (and forgets) the operations buffered for concurrent
// transaction tx, in the order they were written.
func (l *Log) TakeTxn(tx *kv.Tx) []bson.Doc {
	if l == nil {
		return nil
	}
	l.txns.mu.Lock()
	defer l.txns.mu.Unlock()
	p := l.txns.m[tx]
	delete(l.txns.m, tx)
	if p == nil {
		return nil
	}
	return p.ops
}

// DropTxn forgets the operations of a transaction that aborted.
func (l *Log) DropTxn(tx *kv.Tx) { l.TakeTxn(tx) }

// PendingTxns is the number of transactions with buffered operations.
func (l *Log) PendingTxns() int {
	if l == nil {
		return 0
	}
	l.txns.mu.Lock()
	defer l.txns.mu.Unlock()
	return len(l.txns.m)
}

// AppendTxn appends the applyOps entry of a committing transaction of
// session lsid with txnNumber in wt (the commit's write transaction,
// holding kv's writer) and returns its ts.
func (l *Log) AppendTxn(wt *kv.Tx, lsid bson.Doc, txnNumber int64, ops []bson.Doc) (repl.Timestamp, error) {
	type pre struct {
		index int
		doc   bson.Doc
	}
	var pres []pre
	size := 32
	for _, op := range ops {
		size += len(op) + 8 // type, index key and NUL
	}
	var b, olds bson.Builder
	b.Reset(make([]byte, 0, size))
	b.StartArray("applyOps")
	olds.StartArray("olds")
	for i, op := range ops {
		op, p := takePreImage(op)
		if p != nil {
			pres = append(pres, pre{i, p})
		}
		op, old := takeOld(op)
		if old != nil {
			olds.AppendDocument(bson.Index(i), old)
		} else {
			olds.AppendNull(bson.Index(i))
		}
		b.AppendDocument(bson.Index(i), op)
	}
	b.End()
	olds.End()
	var rec bson.Doc
	if l.undo.Load() {
		rec = olds.Finish()
	}
	ts, err := l.append(wt, &Entry{Op: OpCommand, NS: "admin.$cmd", O: b.Finish()},
		&repl.Stmt{LSID: lsid, TxnNumber: txnNumber, StmtID: -1}, rec)
	if err != nil {
		return 0, err
	}
	for _, p := range pres {
		ui, ok := bson.Doc(ops[p.index]).Lookup("ui")
		if !ok || ui.Type != bson.TypeBinary {
			continue
		}
		_, data := ui.Binary()
		var uuid [16]byte
		copy(uuid[:], data)
		if err := l.writePreImage(wt, ts, int64(p.index), uuid, p.doc); err != nil {
			return 0, err
		}
	}
	return ts, nil
}
