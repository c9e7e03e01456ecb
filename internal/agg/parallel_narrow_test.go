package agg

import (
	"slices"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// narrowBatches is a NarrowSource over documents in memory: it cuts each
// to its fields (in the document's order) into a buffer owned by the slice it returns, and scribbles
// over that buffer when the slice comes back (as a source that reuses its
// buffers may), so a worker that kept a document past its batch would see
// garbage.
type narrowBatches struct {
	docs   []bson.Doc
	fields []string
	pos    int
	bufs   map[*bson.Doc][]byte
}

func (s *narrowBatches) NarrowFields() []string { return s.fields }

func (s *narrowBatches) NextBatch(dst []bson.Doc, max int) ([]bson.Doc, error) {
	var buf []byte
	if cap(dst) > 0 {
		k := &dst[:1][0]
		buf = s.bufs[k]
		for i := range buf {
			buf[i] = 0xEE
		}
		buf = buf[:0]
	}
	dst = dst[:0]
	var ends []int
	for s.pos < len(s.docs) && len(dst)+len(ends) < max {
		var b bson.Builder
		b.Reset(nil)
		it := s.docs[s.pos].Iter()
		for it.Next() {
			if e := it.Element(); slices.Contains(s.fields, e.Key) {
				b.AppendElement(e)
			}
		}
		buf = append(buf, b.Finish()...)
		ends = append(ends, len(buf))
		s.pos++
	}
	at := 0
	for _, e := range ends {
		dst = append(dst, bson.Doc(buf[at:e:e]))
		at = e
	}
	if len(dst) > 0 {
		s.bufs[&dst[:1][0]] = buf
	}
	return dst, nil
}

// TestParallelNarrowSource runs pipelines over documents cut to
// ParallelFields by a source that reuses its buffers: the answers must be
// the serial ones over whole documents.
func TestParallelNarrowSource(t *testing.T) {
	docs := mixedDocs(t, 5000)
	for _, tc := range []struct {
		pipeline string
		fields   []string // what ParallelFields must name
	}{
		{`[{"$group": {"_id": "$k", "sum": {"$sum": "$v"}, "min": {"$min": "$v"}, "max": {"$max": "$s"},
			"f": {"$first": "$s"}, "l": {"$last": "$v"}}}]`, []string{"_id", "k", "v", "s"}},
		{`[{"$match": {"v": {"$gt": 3}}}, {"$count": "n"}]`, []string{"_id", "v"}},
		{`[{"$count": "n"}]`, []string{"_id"}},
		{`[{"$match": {"s": {"$ne": "x3"}}}, {"$project": {"k": 1, "v": 1}}, {"$group": {"_id": "$k", "u": {"$addToSet": "$v"}}},
			{"$set": {"u": {"$size": "$u"}}}, {"$sort": {"_id": 1}}]`, []string{"_id", "s", "k", "v"}},
		{`[{"$match": {"s": {"$ne": "x3"}}}, {"$project": {"_id": 0, "v": 1}}, {"$sort": {"k": 1}}, {"$limit": 5}]`, []string{"_id", "s", "v"}},
		{`[{"$match": {"v": {"$ne": null}}}, {"$project": {"k": 1, "v": 1, "w": {"$toString": "$s"}}}, {"$sort": {"v": -1, "k": 1}}, {"$limit": 30}]`,
			[]string{"_id", "v", "k", "w", "s"}}, // w: a projection names its outputs among what it reads
	} {
		mk := func() *Pipeline {
			p, err := Parse(&Context{DB: "test", Coll: "c", AllowDiskUse: true, TempDir: t.TempDir()}, parseJSONArray(t, tc.pipeline))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		fields := mk().ParallelFields()
		if !sameSet(fields, tc.fields) {
			t.Fatalf("%s: ParallelFields %v, want %v", tc.pipeline, fields, tc.fields)
		}
		serial, err := runSerial(t, mk(), docs)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2, 4} {
			pit, ok, err := mk().RunParallel(&narrowBatches{docs: docs, fields: fields, bufs: map[*bson.Doc][]byte{}}, workers)
			if err != nil || !ok {
				t.Fatalf("RunParallel: %v, %v", ok, err)
			}
			par, err := Drain(pit)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := canonical(t, par), canonical(t, serial); got != want {
				t.Fatalf("%s, %d workers:\n got %s\nwant %s", tc.pipeline, workers, got, want)
			}
		}
	}
	// A narrow source missing a field the run reads, or a run that passes
	// whole documents on (a top-k $sort), is refused.
	for _, pl := range []string{
		`[{"$group": {"_id": "$k", "n": {"$sum": 1}}}]`,
		`[{"$sort": {"v": 1}}, {"$limit": 3}]`,
		`[{"$set": {"w": 1}}, {"$sort": {"v": 1}}, {"$limit": 3}]`,
		`[{"$project": {"k": 0}}, {"$sort": {"v": 1}}, {"$limit": 3}]`,
	} {
		p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, pl))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := p.RunParallel(&narrowBatches{docs: docs, fields: []string{"_id", "v"}, bufs: map[*bson.Doc][]byte{}}, 2); ok || err != nil {
			t.Errorf("%s: a narrow source without the fields it reads was used (%v)", pl, err)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
