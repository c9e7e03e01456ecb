package main

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

func init() {
	register(engine{name: "bbolt", order: 2, open: openBbolt})
}

var boltBucket = []byte("bench")

// boltStore is bbolt with its default options: NoSync false, so every
// commit fdatasyncs the file.
//
// bbolt splits nodes only when a transaction commits, so every key inserted
// into a leaf within one transaction goes into that one node, and each
// insert moves the node's entries: a large transaction of random inserts
// costs time quadratic in its size (the 5,000,000 inserts of the bulk load
// into an empty bucket would take days). The adapter therefore commits a
// write transaction durably and continues in a new one once it holds
// max(10,000, keys already committed) inserts: the bulk load becomes about
// log2(N/10,000)+1 transactions of doubling size. Notes reports how many
// extra commits that took.
type boltStore struct {
	path      string
	db        *bolt.DB
	committed int // puts committed so far
	splits    int
}

func openBbolt(dir string) (store, error) {
	s := &boltStore{path: filepath.Join(dir, "bench.bolt")}
	if err := s.open(); err != nil {
		return nil, err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(boltBucket)
		return err
	})
	if err != nil {
		s.db.Close()
		return nil, fmt.Errorf("bbolt: create bucket: %w", err)
	}
	return s, nil
}

func (s *boltStore) open() error {
	db, err := bolt.Open(s.path, 0o644, &bolt.Options{NoSync: false})
	if err != nil {
		return fmt.Errorf("bbolt: open: %w", err)
	}
	s.db = db
	return nil
}

func (s *boltStore) BeginWrite() (writeTx, error) {
	tx, err := s.db.Begin(true)
	if err != nil {
		return nil, fmt.Errorf("bbolt: %w", err)
	}
	return &boltTx{s: s, tx: tx, b: tx.Bucket(boltBucket)}, nil
}

func (s *boltStore) BeginRead() (readTx, error) {
	tx, err := s.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("bbolt: %w", err)
	}
	return &boltTx{tx: tx, b: tx.Bucket(boltBucket)}, nil
}

// Compact copies the live data into a new file with bbolt.Compact (bbolt
// never shrinks its file in place) and replaces the old file with it.
func (s *boltStore) Compact() (bool, error) {
	tmp := s.path + ".compact"
	dst, err := bolt.Open(tmp, 0o644, nil)
	if err != nil {
		return false, fmt.Errorf("bbolt: open compaction target: %w", err)
	}
	if err := bolt.Compact(dst, s.db, 64<<20); err != nil {
		dst.Close()
		return false, fmt.Errorf("bbolt: compact: %w", err)
	}
	if err := dst.Close(); err != nil {
		return false, fmt.Errorf("bbolt: close compaction target: %w", err)
	}
	if err := s.db.Close(); err != nil {
		return false, fmt.Errorf("bbolt: close: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return false, fmt.Errorf("bbolt: replace file: %w", err)
	}
	return true, s.open()
}

func (s *boltStore) Notes() string {
	return fmt.Sprintf("default options (NoSync=false, array freelist); bbolt splits nodes only at commit, which makes one large transaction of random inserts quadratic, "+
		"so the adapter committed large write transactions in pieces of doubling size (%d extra durable commits); compaction = bbolt.Compact into a new file, then rename", s.splits)
}

func (s *boltStore) Close() error { return s.db.Close() }

type boltTx struct {
	s    *boltStore
	puts int
	tx   *bolt.Tx
	b    *bolt.Bucket
	c    *bolt.Cursor
	a    arena
}

// Put copies key and value: bbolt requires both to stay unchanged for the
// life of the transaction.
func (t *boltTx) Put(key, value []byte) error {
	if t.puts >= max(10_000, t.s.committed) {
		if err := t.Commit(); err != nil {
			return fmt.Errorf("bbolt: commit of a large transaction: %w", err)
		}
		t.s.splits++
		tx, err := t.s.db.Begin(true)
		if err != nil {
			return fmt.Errorf("bbolt: %w", err)
		}
		*t = boltTx{s: t.s, tx: tx, b: tx.Bucket(boltBucket)}
	}
	t.puts++
	return t.b.Put(t.a.copy(key), t.a.copy(value))
}

func (t *boltTx) Delete(key []byte) error { return t.b.Delete(key) }
func (t *boltTx) Commit() error {
	if err := t.tx.Commit(); err != nil {
		return err
	}
	t.s.committed += t.puts
	return nil
}
func (t *boltTx) Get(key []byte) ([]byte, error) {
	return t.b.Get(key), nil
}

// Len walks the bucket: bbolt keeps no key count (Bucket.Stats walks every
// page too).
func (t *boltTx) Len() (int64, error) {
	var n int64
	c := t.b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n, nil
}

func (t *boltTx) Scan(start []byte, n int, fn func(key, value []byte)) error {
	if t.c == nil {
		t.c = t.b.Cursor()
	}
	k, v := t.c.Seek(start)
	for i := 0; i < n && k != nil; i++ {
		fn(k, v)
		k, v = t.c.Next()
	}
	return nil
}

func (t *boltTx) Close() error { return t.tx.Rollback() }
