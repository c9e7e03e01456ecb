package session

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

func openDB(t *testing.T) *kv.DB {
	t.Helper()
	db, err := kv.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func key(b byte) Key {
	k := Key{UID: UserDigest("")}
	k.ID[0] = b
	return k
}

func code(err error) int32 {
	var e *mongoerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// countDocs counts config.coll's documents.
func countDocs(t *testing.T, db *kv.DB, coll string) int64 {
	t.Helper()
	var n int64
	err := db.View(func(tx *kv.Tx) error {
		c, err := catalog.Get(tx, ConfigDB, coll)
		if err != nil || c == nil {
			return err
		}
		tr, err := exec.DataTree(tx, c)
		if err != nil {
			return err
		}
		n = tr.Len()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRegistryLimitAndExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	r := New(Options{Timeout: time.Minute, Limit: 2, Now: func() time.Time { return now }})
	if err := r.Vivify(key(1), ""); err != nil {
		t.Fatal(err)
	}
	if err := r.Vivify(key(2), "u@admin"); err != nil {
		t.Fatal(err)
	}
	if err := r.Vivify(key(3), ""); code(err) != mongoerr.TooManyLogicalSessions {
		t.Fatalf("third session: %v", err)
	}
	if err := r.Vivify(key(1), ""); err != nil { // touching a known one is fine
		t.Fatal(err)
	}
	db := openDB(t)
	res, err := r.Flush(context.Background(), db)
	if err != nil || res.Written != 2 || len(res.Expired) != 0 {
		t.Fatalf("flush: %+v %v", res, err)
	}
	if n := countDocs(t, db, SessionsColl); n != 2 {
		t.Fatalf("config.system.sessions: %d", n)
	}
	// Session 1 keeps being used, session 2 idles past the timeout.
	now = now.Add(40 * time.Second)
	r.Vivify(key(1), "")
	now = now.Add(40 * time.Second)
	res, err = r.Flush(context.Background(), db)
	if err != nil || len(res.Expired) != 1 || res.Expired[0] != key(2) || res.Removed != 1 {
		t.Fatalf("flush after idling: %+v %v", res, err)
	}
	if r.Has(key(2)) || !r.Has(key(1)) || countDocs(t, db, SessionsColl) != 1 {
		t.Fatal("expiry kept the idle session or dropped the used one")
	}
	r.End([]Key{key(1)})
	if res, err = r.Flush(context.Background(), db); err != nil || res.Removed != 1 || countDocs(t, db, SessionsColl) != 0 {
		t.Fatalf("flush after endSessions: %+v %v", res, err)
	}
}

func TestTxnHistory(t *testing.T) {
	db := openDB(t)
	k := key(7)
	write := func(fn func(tx *kv.Tx) error) error { return db.Update(context.Background(), fn) }
	// txnNumber 5: statements 0 and 1 executed.
	err := write(func(tx *kv.Tx) error {
		txn, err := Begin(tx, k, 5)
		if err != nil {
			return err
		}
		if _, ok, err := txn.Executed(0); ok || err != nil {
			t.Fatalf("fresh txn executed: %v %v", ok, err)
		}
		for i := int32(0); i < 2; i++ {
			if err := txn.Record(i, StmtResult{N: 1, TS: 100}); err != nil {
				return err
			}
		}
		return txn.Finish(time.Now(), 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = write(func(tx *kv.Tx) error {
		txn, err := Begin(tx, k, 5)
		if err != nil {
			return err
		}
		if txn.LastOpTime != 100 {
			t.Errorf("LastOpTime = %v", txn.LastOpTime)
		}
		if r, ok, err := txn.Executed(1); !ok || err != nil || r.N != 1 {
			t.Errorf("statement 1: %+v %v %v", r, ok, err)
		}
		if _, ok, err := txn.Executed(2); ok || err != nil {
			t.Errorf("statement 2: %v %v", ok, err)
		}
		if _, err := Begin(tx, k, 4); code(err) != mongoerr.TransactionTooOld {
			t.Errorf("older txnNumber: %v", err)
		}
		// A new txnNumber replaces the history.
		txn, err = Begin(tx, k, 6)
		if err != nil {
			return err
		}
		if err := txn.Record(0, StmtResult{N: 1, TS: 200}); err != nil {
			return err
		}
		return txn.Finish(time.Now(), 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *kv.Tx) error {
		h, err := tx.Tree(stmtTree)
		if err != nil {
			return err
		}
		if h.Len() != 2 { // txnNumber 6's header and statement
			t.Errorf("history entries: %d", h.Len())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A record without history (written by hand) is incomplete.
	k2 := key(8)
	err = write(func(tx *kv.Tx) error {
		var b bson.Builder
		k2.AppendDoc(&b, "_id")
		b.AppendInt64("txnNum", 3)
		if err := putDoc(tx, TransactionsColl, k2, b.Finish()); err != nil {
			return err
		}
		txn, err := Begin(tx, k2, 3)
		if err != nil {
			return err
		}
		if _, _, err := txn.Executed(0); code(err) != mongoerr.IncompleteTransactionHistory {
			t.Errorf("incomplete history: %v", err)
		}
		if _, err := txn.Image(PreImage); code(err) != 5637601 {
			t.Errorf("missing image: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Sessions gone (not live, no record) for longer than the timeout
	// lose their state at the next flush.
	now := time.Now().Add(time.Hour)
	r := New(Options{Now: func() time.Time { return now }})
	if _, err := r.Flush(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	if n := countDocs(t, db, TransactionsColl); n != 0 {
		t.Errorf("config.transactions after reaping: %d", n)
	}
}

func TestKeyStrings(t *testing.T) {
	k := key(0xab)
	if got := k.UUID(); got != "ab000000-0000-0000-0000-000000000000" {
		t.Errorf("UUID() = %s", got)
	}
	if got := k.String(); got != "ab000000-0000-0000-0000-000000000000 - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" {
		t.Errorf("String() = %s", got)
	}
}

// TestUserDigest checks the digests of nobody (precomputed) and of a user
// against SHA-256 of their names.
func TestUserDigest(t *testing.T) {
	for _, u := range []string{"", "alice@admin", "bob@test"} {
		if got, want := UserDigest(u), sha256.Sum256([]byte(u)); got != want {
			t.Errorf("UserDigest(%q) = %x, want %x", u, got, want)
		}
	}
}

// TestKeyDoc checks the hand-encoded {id, uid} against the same document
// built with bson.Builder.
func TestKeyDoc(t *testing.T) {
	var k Key
	for i := range k.ID {
		k.ID[i] = byte(i + 1)
	}
	k.UID = UserDigest("alice@admin")
	var b bson.Builder
	b.AppendBinary("id", 4, k.ID[:])
	b.AppendBinary("uid", 0, k.UID[:])
	if got, want := k.Doc(), b.Finish(); string(got) != string(want) {
		t.Fatalf("Doc() = %v, want %v", got, want)
	}
}
