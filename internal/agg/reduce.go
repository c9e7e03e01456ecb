package agg

import (
	"encoding/binary"
	"math/bits"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// A parallel $group's workers read few of a document's fields, and
// documents of a hundred fields are common: each lookup walks the fields
// before the one it wants. The workers therefore first cut each document
// down to the top-level fields the stages up to the $group read (one walk,
// stopping once all are found), so later lookups walk a handful of fields.

// matchDeps lists the top-level fields a $match specification reads, or
// reports whole when it may read the whole document.
func matchDeps(spec bson.Doc, add func(string)) (whole bool) {
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		switch {
		case e.Key == "$and" || e.Key == "$or" || e.Key == "$nor":
			if e.Value.Type != bson.TypeArray {
				return true
			}
			ait := e.Value.Document().Iter()
			for ait.Next() {
				v := ait.Element().Value
				if v.Type != bson.TypeDocument || matchDeps(v.Document(), add) {
					return true
				}
			}
		case e.Key == "$expr":
			deps := topLevelDeps(e.Value)
			if deps == nil {
				return true
			}
			for _, d := range deps {
				add(d)
			}
		case e.Key == "$comment":
		case strings.HasPrefix(e.Key, "$"):
			return true
		default:
			f, _, _ := strings.Cut(e.Key, ".")
			add(f)
		}
	}
	return false
}

// projectionDeps lists the top-level fields a $project/$set/$addFields
// specification may read: every field it names and every field its
// expressions reference.
func projectionDeps(v bson.Value, add func(string)) (whole bool) {
	if v.Type != bson.TypeDocument {
		return true
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if strings.HasPrefix(e.Key, "$") {
			return true
		}
		f, _, _ := strings.Cut(e.Key, ".")
		add(f)
		if e.Value.Type == bson.TypeString || e.Value.Type == bson.TypeDocument || e.Value.Type == bson.TypeArray {
			deps := topLevelDeps(e.Value)
			if deps == nil {
				return true
			}
			for _, d := range deps {
				add(d)
			}
		}
	}
	return false
}

// readFields returns the top-level fields the stages read (with _id), or
// nil when some stage may read the whole document.
func readFields(stages []stage, specs []bson.Doc) []string {
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	add("_id")
	for i, s := range stages {
		it := specs[i].Iter()
		it.Next()
		e := it.Element()
		switch st := s.(type) {
		case *matchStage:
			if e.Value.Type != bson.TypeDocument || matchDeps(e.Value.Document(), add) {
				return nil
			}
		case *projectStage:
			if e.Key == "$unset" {
				continue
			}
			if projectionDeps(e.Value, add) {
				return nil
			}
		case *countStage: // reads no field
		case *groupStage:
			if st.deps == nil {
				return nil
			}
			for _, d := range st.deps {
				add(d)
			}
		default:
			return nil
		}
	}
	return out
}

// fieldCutter copies the wanted top-level fields of documents.
type fieldCutter struct {
	fields []string
	lens   uint64 // bit n set: some field has n bytes (n < 64)
	buf    []byte
}

func newFieldCutter(fields []string) *fieldCutter {
	c := &fieldCutter{fields: fields}
	for _, f := range fields {
		if len(f) < 64 {
			c.lens |= 1 << len(f)
		}
	}
	return c
}

// cut returns the wanted fields of d (in d's order) in the cutter's buffer,
// valid until the next call. A malformed document is returned whole.
func (c *fieldCutter) cut(d bson.Doc) bson.Doc {
	n := len(d)
	if n < 5 {
		return d
	}
	out := append(c.buf[:0], 0, 0, 0, 0)
	found := 0
	for pos := 4; pos < n-1 && found < len(c.fields); {
		t := bson.Type(d[pos])
		if t == 0 {
			break
		}
		ks := pos + 1
		i := keyEnd(d, ks)
		if i < 0 {
			return d
		}
		vs := i + 1
		var sz int
		switch t {
		case bson.TypeInt32:
			sz = 4
		case bson.TypeInt64, bson.TypeDouble, bson.TypeDateTime, bson.TypeTimestamp:
			sz = 8
		case bson.TypeString:
			if vs+4 > n {
				return d
			}
			sz = 4 + int(int32(binary.LittleEndian.Uint32(d[vs:])))
			if sz < 5 {
				return d
			}
		default:
			sz = bson.ValueSize(t, d[vs:])
		}
		end := vs + sz
		if sz < 0 || end > n {
			return d
		}
		if kl := i - ks; kl >= 64 || c.lens&(1<<kl) != 0 {
			key := d[ks:i]
			for _, f := range c.fields {
				if f == string(key) {
					out = append(out, d[pos:end]...)
					found++
					break
				}
			}
		}
		pos = end
	}
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	c.buf = out
	return bson.Doc(out)
}

// keyEnd returns the index of the NUL ending the key that starts at i in
// d (-1 if there is none), testing eight bytes at a time.
func keyEnd(d []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(d); i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		if m := (x - lo) &^ x & hi; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(d); i++ {
		if d[i] == 0 {
			return i
		}
	}
	return -1
}
