package query

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// TestPlainProjection: which specs are plain, and that a plain one
// projects as ParseProjection's does.
func TestPlainProjection(t *testing.T) {
	doc := bson.Doc(d(t, `{"_id": "u1", "f": 1, "g": {"x": 1}, "h": [1, 2], "i": "s"}`))
	for _, tc := range []struct {
		spec  string
		plain bool
		whole bool
	}{
		{`{}`, true, true},
		{`{"_id": 1}`, true, false},
		{`{"_id": 0}`, true, false},
		{`{"_id": true, "f": 0}`, true, false},
		{`{"_id": 0, "f": 1, "field9": true, "i": 2.5}`, true, false},
		{`{"g": 0, "h": false}`, true, false},
		{`{"f": 1, "g": 0}`, false, false},
		{`{"f": 1, "f": 1}`, false, false},
		{`{"_id": 1, "_id": 0}`, false, false},
		{`{"g.x": 1}`, false, false},
		{`{"$f": 1}`, false, false},
		{`{"f": "$i"}`, false, false},
		{`{"f": {"$slice": 1}}`, false, false},
		{`{"f": {"$numberDecimal": "1"}}`, false, false},
		{`{"f": null}`, false, false},
	} {
		spec := bson.Doc(d(t, tc.spec))
		var p PlainProjection
		if got := ParsePlainProjection(spec, &p); got != tc.plain {
			t.Errorf("%s: plain = %v, want %v", tc.spec, got, tc.plain)
			continue
		}
		if !tc.plain {
			continue
		}
		if p.Whole() != tc.whole {
			t.Errorf("%s: whole = %v, want %v", tc.spec, p.Whole(), tc.whole)
		}
		if got, want := plainApply(&p, doc), generalApply(t, spec, doc); !bytes.Equal(got, want) {
			t.Errorf("%s: plain %s, general %s", tc.spec, got, want)
		}
	}
	many := []byte(`{`)
	for i := 0; i <= maxPlainFields; i++ {
		if i > 0 {
			many = append(many, ',')
		}
		many = append(many, `"f`...)
		many = append(many, byte('a'+i/26), byte('a'+i%26))
		many = append(many, `": 1`...)
	}
	many = append(many, '}')
	var p PlainProjection
	if ParsePlainProjection(bson.Doc(d(t, string(many))), &p) {
		t.Errorf("a projection of %d names is plain (limit %d)", maxPlainFields+1, maxPlainFields)
	}
}

// TestPlainProjectionAllocs: parsing and applying YCSB's projection
// allocates nothing.
func TestPlainProjectionAllocs(t *testing.T) {
	spec := bson.Doc(d(t, `{"_id": false, "field3": true, "field0": true, "field1": true, "field2": true, "field4": true, "field5": true, "field6": true, "field7": true, "field8": true, "field9": true}`))
	doc := bson.Doc(d(t, `{"_id": "user1", "field0": "a", "field1": "b", "field2": "c", "field3": "d", "field4": "e", "field5": "f", "field6": "g", "field7": "h", "field8": "i", "field9": "j"}`))
	b := &bson.Builder{}
	b.Reset(make([]byte, 0, 4096))
	var p PlainProjection
	n := testing.AllocsPerRun(100, func() {
		b.Reset(b.Finish()[:0])
		if !ParsePlainProjection(spec, &p) {
			t.Fatal("not plain")
		}
		p.AppendTo(b, "0", doc)
	})
	if n != 0 {
		t.Errorf("%v allocations per parse and apply, want 0", n)
	}
}

func plainApply(p *PlainProjection, doc bson.Doc) bson.Doc {
	var b bson.Builder
	p.AppendTo(&b, "d", doc)
	v, _ := b.Finish().Lookup("d")
	return v.Document()
}

func generalApply(t testing.TB, spec, doc bson.Doc) bson.Doc {
	gp, err := ParseProjection(spec, nil)
	if err != nil {
		t.Fatalf("%s is plain but ParseProjection fails: %v", spec, err)
	}
	if gp.plain == nil && !gp.empty {
		t.Fatalf("%s is plain but ParseProjection does not take the plain path", spec)
	}
	gp.plain = nil // compare against the path tree
	out, err := gp.Apply(nil, doc, nil)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return out
}

// FuzzPlainProjection: a spec ParsePlainProjection accepts is valid for
// ParseProjection, and both project the seed documents alike.
func FuzzPlainProjection(f *testing.F) {
	for _, s := range []string{
		`{"_id": 0, "a": 1, "b": 1}`,
		`{"a": 0}`,
		`{"_id": 1}`,
		`{"a": 1.5, "c": true}`,
	} {
		f.Add([]byte(d(f, s)))
	}
	docs := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, spec []byte) {
		if !validDoc(spec) {
			return
		}
		var p PlainProjection
		if !ParsePlainProjection(bson.Doc(spec), &p) {
			return
		}
		for _, doc := range append(docs, bson.Doc(spec)) {
			if got, want := plainApply(&p, doc), generalApply(t, bson.Doc(spec), doc); !bytes.Equal(got, want) {
				t.Fatalf("%s on %s: plain %s, general %s", bson.Doc(spec), doc, got, want)
			}
		}
	})
}

// BenchmarkProjectionApplyYCSB: Projection.Apply of go-ycsb's projection
// to a YCSB record, through the plain path and through the path tree.
func BenchmarkProjectionApplyYCSB(b *testing.B) {
	spec := bson.Doc(d(b, `{"_id": false, "field3": true, "field0": true, "field1": true, "field2": true, "field4": true, "field5": true, "field6": true, "field7": true, "field8": true, "field9": true}`))
	v := strings.Repeat("x", 100)
	doc := bson.Doc(d(b, `{"_id": "user1", "field0": "`+v+`", "field1": "`+v+`", "field2": "`+v+`", "field3": "`+v+`", "field4": "`+v+`", "field5": "`+v+`", "field6": "`+v+`", "field7": "`+v+`", "field8": "`+v+`", "field9": "`+v+`"}`))
	for _, path := range []string{"plain", "tree"} {
		b.Run(path, func(b *testing.B) {
			p, err := ParseProjection(spec, nil)
			if err != nil {
				b.Fatal(err)
			}
			if path == "tree" {
				p.plain = nil
			}
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := p.Apply(buf, doc, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
