package query

import (
	"bytes"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// gen turns fuzz bytes into structured specifications, so the fuzzer
// explores operators and values rather than malformed BSON.
type gen struct {
	data []byte
	pos  int
}

func (g *gen) byte() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

func (g *gen) pick(n int) int { return int(g.byte()) % n }

var genPaths = []string{"a", "b", "a.b", "a.0", "a.b.c", "_id", "c.1.d", "0", "a.$", "a.$[]", "a.$[x]", "", "a..b", "$x"}

var genOps = []string{"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$type", "$size",
	"$all", "$elemMatch", "$mod", "$regex", "$options", "$not", "$bitsAllSet", "$bitsAnyClear", "$foo", "$comment"}

var genUpdOps = []string{"$set", "$unset", "$inc", "$mul", "$min", "$max", "$rename", "$setOnInsert", "$currentDate",
	"$push", "$addToSet", "$pop", "$pull", "$pullAll", "$bit", "$foo"}

func (g *gen) value(b *bson.Builder, key string, depth int) {
	switch g.pick(14) {
	case 0:
		b.AppendInt32(key, int32(g.pick(7))-2)
	case 1:
		b.AppendInt64(key, int64(g.pick(5))-1)
	case 2:
		b.AppendDouble(key, float64(g.pick(9))/2-1)
	case 3:
		b.AppendString(key, []string{"", "x", "ab", "^a", "(", "a$", "number", "int", "y"}[g.pick(9)])
	case 4:
		b.AppendNull(key)
	case 5:
		b.AppendBool(key, g.pick(2) == 0)
	case 6, 7:
		b.StartArray(key)
		if depth < 4 {
			for i, n := 0, g.pick(4); i < n; i++ {
				g.value(b, bson.Index(i), depth+1)
			}
		}
		b.End()
	case 8, 9:
		b.StartDocument(key)
		if depth < 4 {
			for i, n := 0, g.pick(3); i < n; i++ {
				if g.pick(2) == 0 {
					g.value(b, genOps[g.pick(len(genOps))], depth+1)
				} else {
					g.value(b, genPaths[g.pick(len(genPaths))], depth+1)
				}
			}
		}
		b.End()
	case 10:
		b.AppendRegex(key, []string{"x", "^a", "(?=a)", "a|b"}[g.pick(4)], []string{"", "i", "mx", "q"}[g.pick(4)])
	case 11:
		b.AppendDecimal128(key, 0x3040000000000000, uint64(g.pick(10)))
	case 12:
		b.AppendBinary(key, 0, []byte{g.byte(), g.byte()})
	default:
		b.AppendMinKey(key)
	}
}

func (g *gen) filter(b *bson.Builder, depth int) {
	for i, n := 0, 1+g.pick(3); i < n; i++ {
		switch g.pick(6) {
		case 0:
			if depth < 3 {
				b.StartArray([]string{"$and", "$or", "$nor"}[g.pick(3)])
				for j, m := 0, g.pick(3); j < m; j++ {
					b.StartDocument(bson.Index(j))
					g.filter(b, depth+1)
					b.End()
				}
				b.End()
			}
		case 1, 2:
			g.value(b, genPaths[g.pick(len(genPaths))], depth)
		default:
			b.StartDocument(genPaths[g.pick(len(genPaths))])
			for j, m := 0, 1+g.pick(2); j < m; j++ {
				g.value(b, genOps[g.pick(len(genOps))], depth+1)
			}
			b.End()
		}
	}
}

func (g *gen) update(b *bson.Builder) {
	if g.pick(8) == 0 {
		g.value(b, genPaths[g.pick(len(genPaths))], 1)
		return
	}
	for i, n := 0, 1+g.pick(3); i < n; i++ {
		b.StartDocument(genUpdOps[g.pick(len(genUpdOps))])
		for j, m := 0, g.pick(3); j < m; j++ {
			g.value(b, genPaths[g.pick(len(genPaths))], 1)
		}
		b.End()
	}
}

func FuzzGeneratedFilter(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte{3, 5, 0, 12, 7, 1, 6, 2, 8, 3, 9, 1})
	docs := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		var b bson.Builder
		g.filter(&b, 0)
		spec := b.Finish()
		var db bson.Builder
		g.value(&db, "a", 0)
		g.value(&db, "b", 0)
		flt, err := ParseFilter(spec, nil)
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("%s: error without a code: %v", spec, err)
			}
			return
		}
		for _, doc := range append(docs, db.Finish()) {
			var md MatchDetails
			flt.MatchDetails(doc, &md)
			checkGroups(t, flt.root, doc)
		}
		var sb bson.Builder
		_ = flt.UpsertSeed(&sb)
	})
}

func FuzzGeneratedUpdate(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, true)
	f.Add([]byte{2, 9, 0, 12, 7, 1, 6, 2, 8, 3, 9, 1}, false)
	docs := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, upsert bool) {
		g := &gen{data: data}
		var b bson.Builder
		g.update(&b)
		spec := b.Finish()
		var filters []bson.Doc
		if g.pick(3) == 0 {
			var fb bson.Builder
			g.value(&fb, "x", 1)
			filters = append(filters, fb.Finish())
		}
		upd, err := ParseUpdate(bson.Value{Type: bson.TypeDocument, Data: spec}, filters, nil)
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("%s: error without a code: %v", spec, err)
			}
			return
		}
		var db bson.Builder
		db.AppendInt32("_id", 9)
		g.value(&db, "a", 0)
		g.value(&db, "c", 0)
		for _, doc := range append(docs, db.Finish()) {
			out, _, err := upd.Apply(nil, doc, &MatchDetails{HasKey: true, ElemMatchKey: "0"}, upsert)
			if err != nil {
				if errCode(err) == 0 {
					t.Fatalf("%s on %s: error without a code: %v", spec, doc, err)
				}
				continue
			}
			if verr := bson.Validate(out, 200); verr != nil {
				t.Fatalf("%s on %s: invalid BSON: %v", spec, doc, verr)
			}
		}
	})
}

// checkGroups verifies that every grouped path answers (and records
// positions) exactly as its operators evaluated one by one.
func checkGroups(t *testing.T, n node, doc bson.Doc) {
	switch n := n.(type) {
	case andNode:
		for _, c := range n {
			checkGroups(t, c, doc)
		}
	case orNode:
		for _, c := range n {
			checkGroups(t, c, doc)
		}
	case norNode:
		for _, c := range n {
			checkGroups(t, c, doc)
		}
	case notNode:
		checkGroups(t, n.n, doc)
	case *groupNode:
		var a, b MatchDetails
		ra := n.match(doc, &a)
		rb := andNode(n.nodes).match(doc, &b)
		if ra != rb || (ra && (a.HasKey != b.HasKey || a.ElemMatchKey != b.ElemMatchKey)) {
			t.Fatalf("grouped path %v on %s: %v %+v, one by one: %v %+v", n.parts, doc, ra, a, rb, b)
		}
	}
}

// FuzzGeneratedSort checks that sort keys order documents exactly as
// Compare does, for random documents and sort specifications.
func FuzzGeneratedSort(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{6, 6, 6, 0, 1, 8, 3, 2, 7, 7, 7, 1, 9})
	paths := []string{"a", "b", "a.b", "a.c", "a.0", "b.0.c", "c"}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		var sb bson.Builder
		for i, n := 0, 1+g.pick(3); i < n; i++ {
			if g.pick(2) == 0 {
				sb.AppendInt32(paths[g.pick(len(paths))], 1)
			} else {
				sb.AppendInt32(paths[g.pick(len(paths))], -1)
			}
		}
		s, err := ParseSort(sb.Finish(), nil)
		if err != nil {
			return
		}
		var docs []bson.Doc
		for i := 0; i < 3; i++ {
			var db bson.Builder
			g.value(&db, "a", 0)
			g.value(&db, "b", 1)
			g.value(&db, "c", 2)
			docs = append(docs, db.Finish())
		}
		for _, x := range docs {
			for _, y := range docs {
				if s.Check(x) != nil || s.Check(y) != nil {
					continue
				}
				c := s.Compare(x, y)
				k := bytes.Compare(s.Key(nil, x), s.Key(nil, y))
				if sign(c) != sign(k) {
					t.Fatalf("sort %s: Compare(%s, %s) = %d but keys compare %d", sb.Finish(), x, y, c, k)
				}
			}
		}
	})
}
