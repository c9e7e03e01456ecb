//go:build !nokv

package main

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/kv"
)

// The kv adapter lives in its own file so that the other engines can be
// built and run without it: go build -tags nokv.

func init() {
	register(engine{name: "kv", order: 0, open: openKV})
}

const kvTree = "bench"

// kvStore is Cairn's kv with Durability Sync (a commit returns once its
// journal record is fdatasynced) and a 4 GiB cache budget; every other
// option is the engine's default.
type kvStore struct {
	db *kv.DB
}

func openKV(dir string) (store, error) {
	db, err := kv.Open(dir, &kv.Options{Durability: kv.Sync, CacheSize: cacheSize})
	if err != nil {
		return nil, fmt.Errorf("kv: open: %w", err)
	}
	err = db.Update(context.Background(), func(tx *kv.Tx) error {
		_, err := tx.CreateTreeIfNotExists(kvTree)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("kv: create tree: %w", err)
	}
	return &kvStore{db: db}, nil
}

func (s *kvStore) BeginWrite() (writeTx, error) {
	tx, err := s.db.BeginWrite(context.Background())
	if err != nil {
		return nil, fmt.Errorf("kv: begin write: %w", err)
	}
	t, err := tx.Tree(kvTree)
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("kv: tree: %w", err)
	}
	return &kvTx{tx: tx, t: t}, nil
}

func (s *kvStore) BeginRead() (readTx, error) {
	tx, err := s.db.BeginRead()
	if err != nil {
		return nil, fmt.Errorf("kv: begin read: %w", err)
	}
	t, err := tx.Tree(kvTree)
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("kv: tree: %w", err)
	}
	return &kvTx{tx: tx, t: t}, nil
}

func (s *kvStore) Compact() (bool, error) {
	if err := s.db.Compact(context.Background()); err != nil {
		return false, fmt.Errorf("kv: compact: %w", err)
	}
	return true, nil
}

func (s *kvStore) Notes() string {
	st := s.db.Stats()
	return fmt.Sprintf("Durability Sync, CacheSize 4 GiB, other options default; compaction = DB.Compact. "+
		"At the end: page size %d, data file %s, journal file %s, %d commits, %d journal fdatasyncs, %d data fdatasyncs, %d checkpoints, largest commit group %d",
		st.PageSize, fmtBytes(st.DataFileBytes), fmtBytes(st.JournalFileBytes), st.Commits, st.JournalFsyncs, st.DataFsyncs, st.Checkpoints, st.GroupCommitMax)
}

func (s *kvStore) Close() error { return s.db.Close() }

type kvTx struct {
	tx *kv.Tx
	t  *kv.Tree
	c  *kv.Cursor
}

func (t *kvTx) Put(key, value []byte) error { return t.t.Put(key, value) }

// Delete is Tree.Discard: the benchmark's deletes, like pebble's, badger's
// and bbolt's, do not ask whether the key was there, and kv then applies a
// transaction's removals together, in key order (kv/discard.go).
func (t *kvTx) Delete(key []byte) error { return t.t.Discard(key) }

func (t *kvTx) Commit() error                  { return t.tx.Commit() }
func (t *kvTx) Get(key []byte) ([]byte, error) { return t.t.Get(key) }
func (t *kvTx) Len() (int64, error)            { return t.t.Len(), nil }

func (t *kvTx) Scan(start []byte, n int, fn func(key, value []byte)) error {
	if t.c == nil {
		t.c = t.t.Cursor()
	}
	k, v := t.c.Seek(start)
	for i := 0; i < n && k != nil; i++ {
		fn(k, v)
		k, v = t.c.Next()
	}
	return t.c.Err()
}

func (t *kvTx) Close() error { return t.tx.Rollback() }
