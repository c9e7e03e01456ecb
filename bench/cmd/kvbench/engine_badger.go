package main

import (
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

func init() {
	register(engine{name: "badger", order: 4, open: openBadger})
}

// badgerStore is Badger with SyncWrites=true and a 4 GiB block cache.
//
// A Badger transaction is bounded in size (ErrTxnTooBig). When a write
// transaction reaches the bound, the adapter commits it durably and goes on
// in a new one, as Badger's documentation advises; so Badger's bulk load and
// removals are several transactions, not one. Notes reports how many.
type badgerStore struct {
	db     *badger.DB
	splits int
}

func openBadger(dir string) (store, error) {
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithBlockCacheSize(cacheSize).
		WithLogger(nil)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("badger: open: %w", err)
	}
	return &badgerStore{db: db}, nil
}

func (s *badgerStore) BeginWrite() (writeTx, error) {
	return &badgerWriteTx{s: s, txn: s.db.NewTransaction(true)}, nil
}

func (s *badgerStore) BeginRead() (readTx, error) {
	return &badgerReadTx{txn: s.db.NewTransaction(false)}, nil
}

// Compact flattens the LSM tree into one level and garbage-collects the
// value log until there is nothing left to rewrite.
func (s *badgerStore) Compact() (bool, error) {
	if err := s.db.Flatten(2); err != nil {
		return false, fmt.Errorf("badger: flatten: %w", err)
	}
	for {
		err := s.db.RunValueLogGC(0.5)
		if errors.Is(err, badger.ErrNoRewrite) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("badger: value log GC: %w", err)
		}
	}
}

func (s *badgerStore) Notes() string {
	return fmt.Sprintf("SyncWrites=true, 4 GiB block cache; transactions are size-bounded, so %d extra durable commits split the large write transactions; compaction = Flatten + value-log GC", s.splits)
}

func (s *badgerStore) Close() error { return s.db.Close() }

type badgerWriteTx struct {
	s   *badgerStore
	txn *badger.Txn
	a   arena
}

// retry runs op; if the transaction is full, it commits it, starts a new one
// and runs op again.
func (t *badgerWriteTx) retry(op func(*badger.Txn) error) error {
	err := op(t.txn)
	if !errors.Is(err, badger.ErrTxnTooBig) {
		return err
	}
	if err := t.txn.Commit(); err != nil {
		return fmt.Errorf("badger: commit of a full transaction: %w", err)
	}
	t.s.splits++
	t.txn = t.s.db.NewTransaction(true)
	return op(t.txn)
}

// Put and Delete copy their arguments: Badger keeps references to them until
// the transaction ends.
func (t *badgerWriteTx) Put(key, value []byte) error {
	key, value = t.a.copy(key), t.a.copy(value)
	return t.retry(func(txn *badger.Txn) error { return txn.Set(key, value) })
}

func (t *badgerWriteTx) Delete(key []byte) error {
	key = t.a.copy(key)
	return t.retry(func(txn *badger.Txn) error { return txn.Delete(key) })
}

func (t *badgerWriteTx) Commit() error {
	if err := t.txn.Commit(); err != nil {
		return fmt.Errorf("badger: commit: %w", err)
	}
	return nil
}

type badgerReadTx struct {
	txn *badger.Txn
	it  *badger.Iterator
	buf []byte
}

func (t *badgerReadTx) Get(key []byte) ([]byte, error) {
	item, err := t.txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("badger: get: %w", err)
	}
	t.buf, err = item.ValueCopy(t.buf[:0])
	return t.buf, err
}

func (t *badgerReadTx) Len() (int64, error) {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	it := t.txn.NewIterator(opts)
	defer it.Close()
	var n int64
	for it.Rewind(); it.Valid(); it.Next() {
		n++
	}
	return n, nil
}

func (t *badgerReadTx) Scan(start []byte, n int, fn func(key, value []byte)) error {
	if t.it == nil {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		t.it = t.txn.NewIterator(opts)
	}
	t.it.Seek(start)
	for i := 0; i < n && t.it.Valid(); i++ {
		item := t.it.Item()
		err := item.Value(func(v []byte) error {
			fn(item.Key(), v)
			return nil
		})
		if err != nil {
			return fmt.Errorf("badger: value: %w", err)
		}
		t.it.Next()
	}
	return nil
}

func (t *badgerReadTx) Close() error {
	if t.it != nil {
		t.it.Close()
	}
	t.txn.Discard()
	return nil
}
