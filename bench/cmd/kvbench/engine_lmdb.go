//go:build lmdb && cgo

package main

/*
#cgo LDFLAGS: -llmdb
#include <stdlib.h>
#include <lmdb.h>

// Scratch space of one transaction for the results of C calls, in C memory
// so that no Go pointer is stored by C.
#define KVB_MAX_SCAN 64
typedef struct {
	MDB_val key;
	MDB_val val;
	MDB_val keys[KVB_MAX_SCAN];
	MDB_val vals[KVB_MAX_SCAN];
} kvb_out;

static int kvb_put(MDB_txn *txn, MDB_dbi dbi, void *k, size_t kl, void *v, size_t vl) {
	MDB_val key = {kl, k}, val = {vl, v};
	return mdb_put(txn, dbi, &key, &val, 0);
}

static int kvb_del(MDB_txn *txn, MDB_dbi dbi, void *k, size_t kl) {
	MDB_val key = {kl, k};
	return mdb_del(txn, dbi, &key, NULL);
}

static int kvb_get(MDB_txn *txn, MDB_dbi dbi, void *k, size_t kl, kvb_out *out) {
	MDB_val key = {kl, k};
	return mdb_get(txn, dbi, &key, &out->val);
}

// kvb_scan positions cur at the first key >= k and fills out with up to n
// entries; it returns how many (>= 0) or -rc on an error.
static int kvb_scan(MDB_cursor *cur, void *k, size_t kl, int n, kvb_out *out) {
	MDB_val key = {kl, k};
	int rc = mdb_cursor_get(cur, &key, &out->vals[0], MDB_SET_RANGE);
	int i = 0;
	if (n > KVB_MAX_SCAN) n = KVB_MAX_SCAN;
	while (rc == 0 && i < n) {
		out->keys[i] = key;
		i++;
		if (i == n) break;
		rc = mdb_cursor_get(cur, &key, &out->vals[i], MDB_NEXT);
	}
	if (rc != 0 && rc != MDB_NOTFOUND) return -rc;
	return i;
}

static int kvb_entries(MDB_txn *txn, MDB_dbi dbi, size_t *n) {
	MDB_stat st;
	int rc = mdb_stat(txn, dbi, &st);
	*n = st.ms_entries;
	return rc;
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"
)

func init() {
	register(engine{name: "lmdb", order: 1, open: openLMDB})
}

// lmdbMapSize bounds the database file; LMDB does not allocate it up front.
const lmdbMapSize = 64 << 30

// lmdbStore is LMDB (the system's liblmdb) with default flags plus
// MDB_NOTLS, so read transactions are not bound to OS threads: no MDB_NOSYNC,
// no MDB_NOMETASYNC, so a commit returns once its pages and the meta page are
// fdatasynced. Write transactions lock their goroutine to its OS thread, since
// LMDB's writer mutex belongs to the thread that took it.
type lmdbStore struct {
	dir string
	env *C.MDB_env
	dbi C.MDB_dbi
}

func lmdbErr(op string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("lmdb: %s: %s", op, C.GoString(C.mdb_strerror(rc)))
}

func openLMDB(dir string) (store, error) {
	s := &lmdbStore{dir: dir}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *lmdbStore) open() error {
	var env *C.MDB_env
	if rc := C.mdb_env_create(&env); rc != 0 {
		return lmdbErr("env create", rc)
	}
	if rc := C.mdb_env_set_mapsize(env, lmdbMapSize); rc != 0 {
		C.mdb_env_close(env)
		return lmdbErr("set map size", rc)
	}
	if rc := C.mdb_env_set_maxreaders(env, 256); rc != 0 {
		C.mdb_env_close(env)
		return lmdbErr("set max readers", rc)
	}
	cdir := C.CString(s.dir)
	defer C.free(unsafe.Pointer(cdir))
	if rc := C.mdb_env_open(env, cdir, C.MDB_NOTLS, 0o644); rc != 0 {
		C.mdb_env_close(env)
		return lmdbErr("env open", rc)
	}
	s.env = env
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var txn *C.MDB_txn
	if rc := C.mdb_txn_begin(env, nil, 0, &txn); rc != 0 {
		return lmdbErr("begin", rc)
	}
	if rc := C.mdb_dbi_open(txn, nil, C.MDB_CREATE, &s.dbi); rc != 0 {
		C.mdb_txn_abort(txn)
		return lmdbErr("dbi open", rc)
	}
	return lmdbErr("commit", C.mdb_txn_commit(txn))
}

func (s *lmdbStore) BeginWrite() (writeTx, error) {
	runtime.LockOSThread()
	var txn *C.MDB_txn
	if rc := C.mdb_txn_begin(s.env, nil, 0, &txn); rc != 0 {
		runtime.UnlockOSThread()
		return nil, lmdbErr("begin write", rc)
	}
	return &lmdbWriteTx{txn: txn, dbi: s.dbi}, nil
}

func (s *lmdbStore) BeginRead() (readTx, error) {
	var txn *C.MDB_txn
	if rc := C.mdb_txn_begin(s.env, nil, C.MDB_RDONLY, &txn); rc != 0 {
		return nil, lmdbErr("begin read", rc)
	}
	out := (*C.kvb_out)(C.malloc(C.sizeof_kvb_out))
	return &lmdbReadTx{txn: txn, dbi: s.dbi, out: out}, nil
}

// Compact writes a compacted copy of the environment (mdb_env_copy2 with
// MDB_CP_COMPACT; LMDB never shrinks its file in place) and replaces the
// data file with it.
func (s *lmdbStore) Compact() (bool, error) {
	tmp := filepath.Join(s.dir, "compact")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return false, fmt.Errorf("lmdb: compaction directory: %w", err)
	}
	ctmp := C.CString(tmp)
	defer C.free(unsafe.Pointer(ctmp))
	if rc := C.mdb_env_copy2(s.env, ctmp, C.MDB_CP_COMPACT); rc != 0 {
		return false, lmdbErr("compacting copy", rc)
	}
	C.mdb_env_close(s.env)
	s.env = nil
	if err := os.Rename(filepath.Join(tmp, "data.mdb"), filepath.Join(s.dir, "data.mdb")); err != nil {
		return false, fmt.Errorf("lmdb: replace data file: %w", err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return false, fmt.Errorf("lmdb: %w", err)
	}
	return true, s.open()
}

func (s *lmdbStore) Notes() string {
	var major, minor, patch C.int
	v := C.GoString(C.mdb_version(&major, &minor, &patch))
	return v + " through cgo; flags MDB_NOTLS only (durable commits), 64 GiB map; a range read is one cgo call; len() = mdb_stat; compaction = mdb_env_copy2(MDB_CP_COMPACT), then rename"
}

func (s *lmdbStore) Close() error {
	if s.env != nil {
		C.mdb_env_close(s.env)
		s.env = nil
	}
	return nil
}

type lmdbWriteTx struct {
	txn *C.MDB_txn
	dbi C.MDB_dbi
}

func (t *lmdbWriteTx) Put(key, value []byte) error {
	rc := C.kvb_put(t.txn, t.dbi, unsafe.Pointer(&key[0]), C.size_t(len(key)), unsafe.Pointer(&value[0]), C.size_t(len(value)))
	return lmdbErr("put", rc)
}

func (t *lmdbWriteTx) Delete(key []byte) error {
	rc := C.kvb_del(t.txn, t.dbi, unsafe.Pointer(&key[0]), C.size_t(len(key)))
	if rc == C.MDB_NOTFOUND {
		return nil
	}
	return lmdbErr("delete", rc)
}

func (t *lmdbWriteTx) Commit() error {
	defer runtime.UnlockOSThread()
	return lmdbErr("commit", C.mdb_txn_commit(t.txn))
}

type lmdbReadTx struct {
	txn *C.MDB_txn
	dbi C.MDB_dbi
	cur *C.MDB_cursor
	out *C.kvb_out
}

func mdbBytes(v *C.MDB_val) []byte {
	return unsafe.Slice((*byte)(v.mv_data), int(v.mv_size))
}

func (t *lmdbReadTx) Get(key []byte) ([]byte, error) {
	rc := C.kvb_get(t.txn, t.dbi, unsafe.Pointer(&key[0]), C.size_t(len(key)), t.out)
	if rc == C.MDB_NOTFOUND {
		return nil, nil
	}
	if rc != 0 {
		return nil, lmdbErr("get", rc)
	}
	return mdbBytes(&t.out.val), nil
}

func (t *lmdbReadTx) Len() (int64, error) {
	var n C.size_t
	if rc := C.kvb_entries(t.txn, t.dbi, &n); rc != 0 {
		return 0, lmdbErr("stat", rc)
	}
	return int64(n), nil
}

func (t *lmdbReadTx) Scan(start []byte, n int, fn func(key, value []byte)) error {
	if t.cur == nil {
		if rc := C.mdb_cursor_open(t.txn, t.dbi, &t.cur); rc != 0 {
			return lmdbErr("cursor open", rc)
		}
	}
	got := C.kvb_scan(t.cur, unsafe.Pointer(&start[0]), C.size_t(len(start)), C.int(n), t.out)
	if got < 0 {
		return lmdbErr("scan", -got)
	}
	for i := range int(got) {
		fn(mdbBytes(&t.out.keys[i]), mdbBytes(&t.out.vals[i]))
	}
	return nil
}

func (t *lmdbReadTx) Close() error {
	if t.cur != nil {
		C.mdb_cursor_close(t.cur)
	}
	C.mdb_txn_abort(t.txn)
	C.free(unsafe.Pointer(t.out))
	return nil
}
