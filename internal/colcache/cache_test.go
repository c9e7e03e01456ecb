package colcache

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

func openDB(t *testing.T) *kv.DB {
	t.Helper()
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), PageSize: 4096, JournalSize: 1 << 20, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func docKey(i int) []byte { return []byte(fmt.Sprintf("k%08d", i)) }

// testDoc is document i: fields present, missing, null, arrays,
// embedded documents and mixed types by turns, with filler around them.
func testDoc(i int, tag string) bson.Doc {
	var b bson.Builder
	b.AppendInt32("_id", int32(i))
	b.AppendString("pad0", "some filler that a scan must walk past")
	switch i % 5 {
	case 0:
		b.AppendInt32("a", int32(i))
	case 1:
		b.AppendString("a", fmt.Sprintf("s%d-%s", i, tag))
	case 2:
		b.AppendNull("a")
	case 3:
		b.StartArray("a")
		b.AppendInt32("0", int32(i))
		b.AppendString("1", tag)
		b.End()
	}
	if i%3 != 0 {
		b.StartDocument("b")
		b.AppendInt64("x", int64(i))
		b.AppendDouble("y", float64(i)/2)
		b.End()
	}
	c := func() {
		if i%7 == 0 {
			b.AppendDouble("c", float64(i))
		} else {
			b.AppendInt64("c", int64(i))
		}
	}
	if i%11 == 0 || i >= chunkRows { // the field order varies, in the later chunks
		c()
		b.AppendString("pad1", tag)
	} else {
		b.AppendString("pad1", tag)
		c()
	}
	return b.Finish()
}

func putDocs(t *testing.T, db *kv.DB, lo, hi int, tag string) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *kv.Tx) error {
		tr, err := tx.CreateTreeIfNotExists("data")
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			if err := tr.Put(docKey(i), testDoc(i, tag)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// narrow is the document a Scan must serve for d: d's elements whose key
// is one of fields, in d's order, first occurrences only.
func narrow(d bson.Doc, fields []string) bson.Doc {
	var b bson.Builder
	b.Reset(nil)
	seen := map[string]bool{}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if !seen[e.Key] && slices.Contains(fields, e.Key) {
			seen[e.Key] = true
			b.AppendElement(e)
		}
	}
	return b.Finish()
}

// checkSet compares every document a Set's Scan serves with the tree's.
func checkSet(t *testing.T, s *Set, tr *kv.Tree) {
	t.Helper()
	sc := s.Scan()
	cur := tr.Cursor()
	_, v := cur.First()
	n := 0
	var batch []bson.Doc
	for {
		var err error
		batch, err = sc.NextBatch(batch, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) == 0 {
			break
		}
		for _, d := range batch {
			if v == nil {
				t.Fatalf("scan serves more documents than the tree holds (%d)", n)
			}
			if want := narrow(v, s.Fields()); !bytes.Equal(d, want) {
				t.Fatalf("document %d: got %s, want %s", n, d, want)
			}
			n++
			_, v = cur.Next()
		}
	}
	if v != nil || n != s.Rows() {
		t.Fatalf("scan served %d documents, the tree holds more (rows %d)", n, s.Rows())
	}
}

// get reads fields through c in a new read transaction.
func get(t *testing.T, c *Cache, db *kv.DB, fields ...string) *Set {
	t.Helper()
	var s *Set
	err := db.View(func(tx *kv.Tx) error {
		tr, err := tx.Tree("data")
		if err != nil {
			return err
		}
		if s, err = c.Get(context.Background(), tr, fields, false); err != nil {
			return err
		}
		if s != nil {
			checkSet(t, s, tr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScanServesTheDocumentsFields(t *testing.T) {
	db := openDB(t)
	n := 2*chunkRows + 123 // three chunks, the last partial
	putDocs(t, db, 0, n, "t")
	c := New(Options{})
	for _, fields := range [][]string{
		{"a"}, {"c", "a"}, {"_id", "a", "b", "c"}, {"missing"}, {"b", "missing", "pad1"}, {"c", "pad1"},
	} {
		if s := get(t, c, db, fields...); s == nil || s.Rows() != n {
			t.Fatalf("%v: not served (%v)", fields, s)
		}
	}
	st := c.Stats()
	if st.Builds != 5 || st.Fields != 6 || st.Hits != 1 || st.Built != 6 {
		t.Errorf("stats %+v: want 5 builds (one per request but the last), 6 fields built and held, 1 hit", st)
	}
	// Repeats are hits.
	get(t, c, db, "a", "b")
	if st2 := c.Stats(); st2.Builds != st.Builds || st2.Hits != st.Hits+1 {
		t.Errorf("a repeat built: %+v", st2)
	}
}

func TestEmptyTree(t *testing.T) {
	db := openDB(t)
	if err := db.Update(context.Background(), func(tx *kv.Tx) error { _, err := tx.CreateTree("data"); return err }); err != nil {
		t.Fatal(err)
	}
	c := New(Options{})
	if s := get(t, c, db, "a"); s == nil || s.Rows() != 0 {
		t.Fatalf("empty tree: %v", s)
	}
}

// TestInvalidation changes the tree in other transactions: each change
// makes the next reader build anew and see the change.
func TestInvalidation(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	putDocs(t, db, 0, 1000, "v1")
	c := New(Options{})
	changes := []struct {
		name string
		fn   func(tx *kv.Tx) error
	}{
		{"insert", func(tx *kv.Tx) error {
			tr, _ := tx.Tree("data")
			return tr.Put(docKey(5000), testDoc(5000, "new"))
		}},
		{"update", func(tx *kv.Tx) error {
			tr, _ := tx.Tree("data")
			return tr.Put(docKey(10), testDoc(11, "changed"))
		}},
		{"delete", func(tx *kv.Tx) error {
			tr, _ := tx.Tree("data")
			_, err := tr.Delete(docKey(20))
			return err
		}},
		{"drop and recreate", func(tx *kv.Tx) error {
			if err := tx.DropTree("data"); err != nil {
				return err
			}
			tr, err := tx.CreateTree("data")
			if err != nil {
				return err
			}
			return tr.Put(docKey(1), testDoc(2, "recreated"))
		}},
	}
	get(t, c, db, "a", "c")
	for _, ch := range changes {
		before := c.Stats()
		if err := db.Update(ctx, ch.fn); err != nil {
			t.Fatal(err)
		}
		get(t, c, db, "a", "c") // checkSet compares with the new state
		after := c.Stats()
		if after.Builds != before.Builds+1 || after.Dropped != before.Dropped+2 {
			t.Errorf("%s: want one build and two dropped columns: %+v -> %+v", ch.name, before, after)
		}
	}
	// A write elsewhere keeps the columns.
	before := c.Stats()
	if err := db.Update(ctx, func(tx *kv.Tx) error {
		if _, err := tx.Tree("data"); err != nil {
			return err
		}
		o, err := tx.CreateTreeIfNotExists("other")
		if err != nil {
			return err
		}
		return o.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	get(t, c, db, "a", "c")
	if after := c.Stats(); after.Builds != before.Builds || after.Hits != before.Hits+1 {
		t.Errorf("a write to another tree invalidated: %+v -> %+v", before, after)
	}
}

// TestSnapshotIsolation: an older reader never uses columns of a newer
// version, and a newer reader never those of an older one.
func TestSnapshotIsolation(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	putDocs(t, db, 0, 500, "old")
	c := New(Options{})
	old, err := db.BeginRead()
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback()
	oldTree, err := old.Tree("data")
	if err != nil {
		t.Fatal(err)
	}
	// The older reader builds first; then the tree changes.
	if s, err := c.Get(ctx, oldTree, []string{"a"}, false); err != nil || s == nil {
		t.Fatalf("old reader: %v %v", s, err)
	}
	putDocs(t, db, 0, 500, "new")
	// The newer reader must not use the old columns (checkSet checks the
	// values), and replaces them.
	get(t, c, db, "a")
	// The older reader is now refused rather than served new values.
	if s, err := c.Get(ctx, oldTree, []string{"a"}, false); err != nil || s != nil {
		t.Fatalf("old reader after a newer build: %v %v, want nil", s, err)
	}
	if s, err := c.Get(ctx, oldTree, []string{"c"}, false); err != nil || s != nil {
		t.Fatalf("old reader, new field, after a newer build: %v %v, want nil", s, err)
	}
	// A write transaction that changed the tree is not served; one that
	// did not is served the committed columns.
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	wt, err := tx.Tree("data")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.Get(ctx, wt, []string{"a"}, false); err != nil || s == nil {
		t.Fatalf("unchanged tree in a write tx: %v %v", s, err)
	} else {
		checkSet(t, s, wt)
	}
	if err := wt.Put(docKey(1), testDoc(1, "uncommitted")); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Get(ctx, wt, []string{"a"}, false); err != nil || s != nil {
		t.Fatalf("tree changed by its write tx: %v %v, want nil", s, err)
	}
}

func TestBudgetAndEviction(t *testing.T) {
	db := openDB(t)
	putDocs(t, db, 0, 2000, "b")
	probe := New(Options{})
	get(t, probe, db, "_id", "c", "pad1")
	// Any two of the three fields fit, not all three.
	c := New(Options{Budget: probe.Stats().Bytes - 1})
	get(t, c, db, "c")
	get(t, c, db, "_id")
	get(t, c, db, "c") // c is now more recent than _id
	get(t, c, db, "pad1")
	st := c.Stats()
	if st.Evictions != 1 || st.Fields != 2 || st.Bytes > st.Budget {
		t.Fatalf("after three fields in a budget of two: %+v", st)
	}
	if !coversFields(t, c, db, "c", "pad1") || coversFields(t, c, db, "_id") {
		t.Errorf("the least recently used field (_id) should be the one evicted")
	}
	// A request larger than the budget is not served, and not retried.
	if s := get(t, c, db, "pad0", "pad1", "a", "b"); s != nil {
		t.Fatalf("request over the budget served")
	}
	builds := c.Stats().Builds
	if s := get(t, c, db, "pad0", "pad1", "a", "b"); s != nil || c.Stats().Builds != builds {
		t.Fatalf("request over the budget rebuilt")
	}
	// Disabled cache.
	if s := get(t, New(Options{Budget: -1}), db, "c"); s != nil {
		t.Fatalf("disabled cache served")
	}
}

func coversFields(t *testing.T, c *Cache, db *kv.DB, fields ...string) bool {
	t.Helper()
	var ok bool
	if err := db.View(func(tx *kv.Tx) error {
		tr, err := tx.Tree("data")
		ok = err == nil && c.Covers(tr, fields)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestWantedOnly(t *testing.T) {
	db := openDB(t)
	putDocs(t, db, 0, 100, "w")
	c := New(Options{})
	err := db.View(func(tx *kv.Tx) error {
		tr, _ := tx.Tree("data")
		if s, err := c.Get(context.Background(), tr, []string{"a"}, true); s != nil || err != nil {
			t.Errorf("unwanted field built: %v %v", s, err)
		}
		c.Want(tr, []string{"a"})
		if s, err := c.Get(context.Background(), tr, []string{"a"}, true); s == nil || err != nil {
			t.Errorf("wanted field not built: %v %v", s, err)
		}
		// A held field that was not wanted is not served either.
		if s, err := c.Get(context.Background(), tr, []string{"c"}, false); s == nil || err != nil {
			t.Errorf("field c not built: %v %v", s, err)
		}
		if s, err := c.Get(context.Background(), tr, []string{"a", "c"}, true); s != nil || err != nil {
			t.Errorf("unwanted held field served: %v %v", s, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The note outlives a change of the tree.
	putDocs(t, db, 0, 10, "w2")
	err = db.View(func(tx *kv.Tx) error {
		tr, _ := tx.Tree("data")
		if s, err := c.Get(context.Background(), tr, []string{"a"}, true); s == nil || err != nil {
			t.Errorf("wanted field not rebuilt after a change: %v %v", s, err)
		} else {
			checkSet(t, s, tr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentReadersAndWriter runs readers beside a writer (for the race
// detector); every reader checks what it is served against its snapshot.
func TestConcurrentReadersAndWriter(t *testing.T) {
	db := openDB(t)
	putDocs(t, db, 0, 3000, "c0")
	c := New(Options{})
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				fields := [][]string{{"a"}, {"a", "c"}, {"b"}}[(r+i)%3]
				get(t, c, db, fields...)
			}
		}()
	}
	for i := range 6 {
		putDocs(t, db, i*100, i*100+50, fmt.Sprintf("w%d", i))
	}
	wg.Wait()
}
