package oplog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

func openKV(t *testing.T, fs vfs.FS, d kv.Durability) *kv.DB {
	t.Helper()
	db, err := kv.Open("/db", &kv.Options{FS: fs, Durability: d, JournalSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func openLog(t *testing.T, db *kv.DB, size int64, now func() time.Time) *oplog.Log {
	t.Helper()
	l, err := oplog.Open(db, repl.NewClock(now, 0), oplog.Config{MaxBytes: size, Now: now}, func() int64 { return size })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// owner is a writer's owner writing a retryable statement.
type owner struct{ stmt *repl.Stmt }

func (owner) Err() error                                 { return nil }
func (owner) WarnInvalid(ns string, doc, extra bson.Doc) {}
func (o owner) WriteStmt() *repl.Stmt                    { return o.stmt }

func doc(kv ...any) bson.Doc {
	var b bson.Builder
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		switch v := kv[i+1].(type) {
		case int:
			b.AppendInt32(k, int32(v))
		case string:
			b.AppendString(k, v)
		case bson.Doc:
			b.AppendDocument(k, v)
		}
	}
	return b.Finish()
}

// write runs fn with a logged writer of db.c (created, and its creation
// logged, on first use).
func write(db *kv.DB, l *oplog.Log, d kv.Durability, o exec.WriteOwner, fn func(w *exec.CollWriter) error) error {
	tx, err := db.BeginWrite(context.Background())
	if err != nil {
		return err
	}
	defer tx.Rollback()
	coll, err := exec.CollectionForWrite(tx, "db", "c", true, l)
	if err != nil {
		return err
	}
	w, err := exec.OpenWriter(tx, coll)
	if err != nil {
		return err
	}
	w.Oplog, w.C = l, o
	if err := fn(w); err != nil {
		return err
	}
	return tx.CommitWith(d)
}

func entries(t *testing.T, db *kv.DB) []bson.Doc {
	t.Helper()
	var out []bson.Doc
	err := db.View(func(tx *kv.Tx) error {
		r, err := oplog.Entries(tx, 0)
		if err != nil {
			return err
		}
		for r.Next() {
			out = append(out, append(bson.Doc(nil), r.Entry()...))
		}
		return r.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRetryableStatementEntries checks lsid, txnNumber, stmtId and the
// prevOpTime chain of a retryable write's entries.
func TestRetryableStatementEntries(t *testing.T) {
	db := openKV(t, vfs.NewMem(), kv.NoSync)
	defer db.Close()
	l := openLog(t, db, 1<<20, nil)
	lsid := doc("id", "session")
	st := &repl.Stmt{LSID: lsid, TxnNumber: 7}
	err := write(db, l, kv.NoSync, owner{st}, func(w *exec.CollWriter) error {
		for i := range 2 {
			st.StmtID = int32(i)
			if _, _, err := w.Insert(doc("_id", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	es := entries(t, db)
	if len(es) != 3 { // create, two inserts
		t.Fatalf("%d entries", len(es))
	}
	first, _ := es[1].Lookup("ts")
	ft, fi := first.Timestamp()
	for i, e := range es[1:] {
		var keys []string
		for _, el := range e.Elements() {
			keys = append(keys, el.Key)
		}
		if want := "[lsid txnNumber op ns ui o o2 stmtId ts t v wall prevOpTime]"; fmt.Sprint(keys) != want {
			t.Errorf("entry %d fields %v, want %s", i, keys, want)
		}
		if v, _ := e.Lookup("stmtId"); v.Type != bson.TypeInt32 || v.Int32() != int32(i) {
			t.Errorf("entry %d: stmtId %v", i, v)
		}
		if v, _ := e.Lookup("txnNumber"); v.Type != bson.TypeInt64 || v.Int64() != 7 {
			t.Errorf("entry %d: txnNumber %v", i, v)
		}
		prev, _ := e.LookupPath("prevOpTime", "ts")
		pt, pi := prev.Timestamp()
		pterm, _ := e.LookupPath("prevOpTime", "t")
		if i == 0 && (pt != 0 || pi != 0 || pterm.Int64() != -1) || i == 1 && (pt != ft || pi != fi || pterm.Int64() != 1) {
			t.Errorf("entry %d: prevOpTime %s", i, e.String())
		}
	}
	last, _ := es[2].Lookup("ts")
	lt, li := last.Timestamp()
	if st.LastOpTime != repl.MakeTimestamp(lt, li) {
		t.Errorf("LastOpTime %v, want the last entry's ts", st.LastOpTime)
	}
}

// figures checks the log's figures against a count of the tree.
func checkFigures(t *testing.T, db *kv.DB, l *oplog.Log) (bytes, count int64) {
	t.Helper()
	err := db.View(func(tx *kv.Tx) error {
		b, c, err := l.Figures(tx)
		if err != nil {
			return err
		}
		r, err := oplog.Entries(tx, 0)
		if err != nil {
			return err
		}
		for r.Next() {
			bytes += int64(len(r.Entry()))
			count++
		}
		if b != bytes || c != count {
			t.Fatalf("figures %d bytes %d entries, the tree has %d bytes %d entries", b, c, bytes, count)
		}
		return r.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return bytes, count
}

// TestTruncationKeepsSize writes past the size, with rolled-back
// transactions in between, and checks that the oldest entries go first,
// the size holds, the running figures stay exact without recounting, and
// survive a restart; then that the minimum retention keeps young entries.
func TestTruncationKeepsSize(t *testing.T) {
	mem := vfs.NewMem()
	db := openKV(t, mem, kv.NoSync)
	const size = 8 << 10
	l := openLog(t, db, size, nil)
	pad := string(make([]byte, 100))
	for i := range 600 {
		err := write(db, l, kv.NoSync, nil, func(w *exec.CollWriter) error {
			_, _, err := w.Insert(doc("_id", i, "pad", pad))
			if err == nil && i%7 == 3 {
				return fmt.Errorf("roll back")
			}
			return err
		})
		if err != nil && i%7 != 3 {
			t.Fatal(err)
		}
		if i%50 == 0 {
			checkFigures(t, db, l)
		}
	}
	bytes, count := checkFigures(t, db, l)
	if bytes > size || l.Truncated() == 0 || l.Recounts() != 0 {
		t.Fatalf("bytes %d (size %d), truncated %d, recounts %d", bytes, size, l.Truncated(), l.Recounts())
	}
	es := entries(t, db)
	if id, _ := es[len(es)-1].LookupPath("o", "_id"); id.Int32() != 599 {
		t.Fatalf("last entry %s", es[len(es)-1].String())
	}
	first, _ := es[0].LookupPath("o", "_id")
	if int64(599-first.Int32()) < count-1 {
		t.Fatalf("the oldest entries are not the ones removed: first %d, %d entries", first.Int32(), count)
	}
	// A restart reads the same figures (the record plus the entries
	// after it), and the clock continues after the last entry.
	var lastTS repl.Timestamp
	db.View(func(tx *kv.Tx) error { lastTS, _, _, _ = oplog.Last(tx); return nil })
	db.Close()
	db = openKV(t, mem, kv.NoSync)
	defer db.Close()
	past := func() time.Time { return time.Unix(1000, 0) } // the wall clock went back
	l = openLog(t, db, size, past)
	checkFigures(t, db, l)
	if next := l.Clock().Next(); next <= lastTS {
		t.Fatalf("after restart the clock gave %v, not after %v", next, lastTS)
	}
	// Minimum retention: nothing younger than it is removed.
	db.Close()
	db = openKV(t, mem, kv.NoSync)
	defer db.Close()
	l = openLog(t, db, size, nil)
	day := 24 * time.Hour
	l.SetLimits(0, &day)
	before := l.Truncated()
	for i := range 100 {
		if err := write(db, l, kv.NoSync, nil, func(w *exec.CollWriter) error {
			_, _, err := w.Insert(doc("_id", 1000+i, "pad", pad))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if bytes, _ := checkFigures(t, db, l); bytes <= size {
		t.Fatalf("with a day's retention the log was truncated to %d bytes", bytes)
	}
	if l.Truncated() != before {
		t.Fatalf("%d entries younger than the retention removed", l.Truncated()-before)
	}
}

// TestEntriesCarryTheTerm: an entry's t (and its prevOpTime's) is the term
// Log.Term gives when it is written — a restarted member's new term, not
// a constant.
func TestEntriesCarryTheTerm(t *testing.T) {
	db := openKV(t, vfs.NewMem(), kv.NoSync)
	defer db.Close()
	l := openLog(t, db, 1<<20, nil)
	term := int64(1)
	l.Term = func() int64 { return term }
	st := &repl.Stmt{LSID: doc("id", "session"), TxnNumber: 1}
	for i, want := range []int64{1, 3} {
		term = want
		st.StmtID = int32(i)
		if err := write(db, l, kv.NoSync, owner{st}, func(w *exec.CollWriter) error {
			_, _, err := w.Insert(doc("_id", i))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	es := entries(t, db)
	last := es[len(es)-1]
	if v, _ := last.Lookup("t"); v.Int64() != 3 {
		t.Fatalf("t = %v in %s, want 3", v, last)
	}
	if v, _ := last.LookupPath("prevOpTime", "t"); v.Int64() != 3 {
		t.Fatalf("prevOpTime.t = %v in %s, want 3", v, last)
	}
	if v, _ := es[1].Lookup("t"); v.Int64() != 1 {
		t.Fatalf("first insert's t = %v, want 1", v)
	}
}
