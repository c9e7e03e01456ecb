package main

import (
	"fmt"
	"sort"
)

// cacheSize is the block/page cache budget given to every engine that has
// one, the 4 GiB that redb's lmdb_benchmark gives its peers.
const cacheSize = 4 << 30

// An engine opens a store of one kind in a directory. Every engine opens its
// store in its fully durable commit mode: a Commit returns only once the
// transaction is on stable storage.
type engine struct {
	name string
	// order places the engine's column in the table (smaller first).
	order int
	open  func(dir string) (store, error)
}

// store is one open database. Implementations are not shared between
// goroutines except through BeginRead, which must be safe for concurrent use.
type store interface {
	BeginWrite() (writeTx, error)
	BeginRead() (readTx, error)
	// Compact returns free space to the file system, if the engine can; it
	// reports false when it cannot. It may close and reopen the store.
	Compact() (bool, error)
	// Notes returns engine-specific remarks for the report (settings that
	// differ from the benchmark's model, internal counters), or "".
	Notes() string
	Close() error
}

// writeTx is one write transaction.
type writeTx interface {
	Put(key, value []byte) error
	Delete(key []byte) error
	// Commit makes the transaction durable before returning.
	Commit() error
}

// readTx is one read-only snapshot.
type readTx interface {
	// Get returns the value of key or nil if absent. The slice is valid
	// until the next call on the transaction.
	Get(key []byte) ([]byte, error)
	// Len returns the number of keys.
	Len() (int64, error)
	// Scan calls fn for up to n entries from the first key >= start, in key
	// order. The slices are valid only during the call.
	Scan(start []byte, n int, fn func(key, value []byte)) error
	Close() error
}

var engines = map[string]engine{}

// register adds an engine; engine files call it from init.
func register(e engine) {
	if _, dup := engines[e.name]; dup {
		panic(fmt.Sprintf("engine %q registered twice", e.name))
	}
	engines[e.name] = e
}

// engineNames returns the compiled-in engines in column order.
func engineNames() []string {
	names := make([]string, 0, len(engines))
	for n := range engines {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := engines[names[i]], engines[names[j]]
		if a.order != b.order {
			return a.order < b.order
		}
		return a.name < b.name
	})
	return names
}

// joinErr returns the first non-nil error.
func joinErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// arena hands out copies of keys and values that stay valid for the life of
// a write transaction, for engines that keep references to the caller's
// slices until commit (bbolt and Badger document that the caller must not
// modify them), carved out of large chunks to spare the garbage collector
// millions of small objects.
type arena struct{ chunk []byte }

func (a *arena) copy(b []byte) []byte {
	if len(b) > cap(a.chunk)-len(a.chunk) {
		a.chunk = make([]byte, 0, max(1<<20, len(b)))
	}
	n := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return a.chunk[n:len(a.chunk):len(a.chunk)]
}
