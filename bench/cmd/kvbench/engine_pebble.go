package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

func init() {
	register(engine{name: "pebble", order: 3, open: openPebble})
}

// pebbleStore is Pebble with a 4 GiB block cache, the newest format, and
// every batch applied with pebble.Sync (the WAL is fdatasynced before Apply
// returns). A write transaction is one batch; a read transaction is a
// snapshot.
type pebbleStore struct {
	db    *pebble.DB
	cache interface{ Unref() }
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

func openPebble(dir string) (store, error) {
	cache := pebble.NewCache(cacheSize)
	db, err := pebble.Open(dir, &pebble.Options{
		Cache:              cache,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             quietLogger{},
	})
	if err != nil {
		cache.Unref()
		return nil, fmt.Errorf("pebble: open: %w", err)
	}
	return &pebbleStore{db: db, cache: cache}, nil
}

func (s *pebbleStore) BeginWrite() (writeTx, error) {
	return &pebbleWriteTx{b: s.db.NewBatch()}, nil
}

func (s *pebbleStore) BeginRead() (readTx, error) {
	return &pebbleReadTx{snap: s.db.NewSnapshot()}, nil
}

// Compact compacts the whole key space (every key is 24 bytes, so 25 bytes
// of 0xff is past the last).
func (s *pebbleStore) Compact() (bool, error) {
	end := bytes.Repeat([]byte{0xff}, keySize+1)
	if err := s.db.Compact(context.Background(), nil, end, true); err != nil {
		return false, fmt.Errorf("pebble: compact: %w", err)
	}
	return true, nil
}

func (s *pebbleStore) Notes() string {
	return "4 GiB block cache, FormatNewest, batches applied with pebble.Sync; read tx = snapshot; len() iterates; compaction = DB.Compact over the whole key range"
}

func (s *pebbleStore) Close() error {
	err := s.db.Close()
	s.cache.Unref()
	return err
}

type pebbleWriteTx struct{ b *pebble.Batch }

func (t *pebbleWriteTx) Put(key, value []byte) error { return t.b.Set(key, value, nil) }
func (t *pebbleWriteTx) Delete(key []byte) error     { return t.b.Delete(key, nil) }
func (t *pebbleWriteTx) Commit() error {
	if err := t.b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebble: commit: %w", err)
	}
	return t.b.Close()
}

type pebbleReadTx struct {
	snap *pebble.Snapshot
	it   *pebble.Iterator
	buf  []byte
}

func (t *pebbleReadTx) Get(key []byte) ([]byte, error) {
	v, closer, err := t.snap.Get(key)
	if err == pebble.ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pebble: get: %w", err)
	}
	t.buf = append(t.buf[:0], v...)
	return t.buf, closer.Close()
}

func (t *pebbleReadTx) iter() (*pebble.Iterator, error) {
	if t.it == nil {
		it, err := t.snap.NewIter(nil)
		if err != nil {
			return nil, fmt.Errorf("pebble: iterator: %w", err)
		}
		t.it = it
	}
	return t.it, nil
}

func (t *pebbleReadTx) Len() (int64, error) {
	it, err := t.iter()
	if err != nil {
		return 0, err
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

func (t *pebbleReadTx) Scan(start []byte, n int, fn func(key, value []byte)) error {
	it, err := t.iter()
	if err != nil {
		return err
	}
	ok := it.SeekGE(start)
	for i := 0; i < n && ok; i++ {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("pebble: value: %w", err)
		}
		fn(it.Key(), v)
		ok = it.Next()
	}
	return it.Error()
}

func (t *pebbleReadTx) Close() error {
	var err error
	if t.it != nil {
		err = t.it.Close()
	}
	return joinErr(err, t.snap.Close())
}
