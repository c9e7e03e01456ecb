package changestream

// updateDescription from an update entry's $v: 2 diff (oplog/diff.go has
// the format): u and i sections are updatedFields, d is removedFields, an
// array diff's l is a truncatedArrays entry and its u<index> an updated
// field "<path>.<index>"; s<field> and s<index> recurse. With
// showExpandedEvents, disambiguatedPaths maps every path that holds a
// numeric field name or an array index to its components (indices as
// ints, names as strings), as mongod 6.1+.

import (
	"strconv"

	"github.com/cairndb/cairn/bson"
)

type pathPart struct {
	name  string
	index bool // an array index
}

type updateDesc struct {
	updated   bson.Builder
	removed   []string
	truncated []truncation
	ambiguous []ambiguousPath
}

type truncation struct {
	field string
	size  int32
}

type ambiguousPath struct {
	path  string
	parts []pathPart
}

func joinPath(parts []pathPart) string {
	n := 0
	for _, p := range parts {
		n += len(p.name) + 1
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, p.name...)
	}
	return string(b)
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (u *updateDesc) note(parts []pathPart) string {
	p := joinPath(parts)
	for _, x := range parts {
		if x.index || numeric(x.name) {
			u.ambiguous = append(u.ambiguous, ambiguousPath{p, append([]pathPart(nil), parts...)})
			break
		}
	}
	return p
}

// walkDiff adds the changes of an object diff at prefix.
func (u *updateDesc) walkDiff(prefix []pathPart, diff bson.Doc) {
	it := diff.Iter()
	for it.Next() {
		e := it.Element()
		switch {
		case e.Key == "u" || e.Key == "i":
			if e.Value.Type != bson.TypeDocument {
				continue
			}
			f := e.Value.Document().Iter()
			for f.Next() {
				path := u.note(append(prefix, pathPart{name: f.Element().Key}))
				u.updated.AppendValue(path, f.Element().Value)
			}
		case e.Key == "d":
			if e.Value.Type != bson.TypeDocument {
				continue
			}
			f := e.Value.Document().Iter()
			for f.Next() {
				u.removed = append(u.removed, u.note(append(prefix, pathPart{name: f.Element().Key})))
			}
		case len(e.Key) > 1 && e.Key[0] == 's' && e.Value.Type == bson.TypeDocument:
			sub := append(prefix[:len(prefix):len(prefix)], pathPart{name: e.Key[1:]})
			d := e.Value.Document()
			if a, ok := d.Lookup("a"); ok && a.Truthy() {
				u.walkArray(sub, d)
			} else {
				u.walkDiff(sub, d)
			}
		}
	}
}

// walkArray adds the changes of an array diff of the array at path.
func (u *updateDesc) walkArray(path []pathPart, diff bson.Doc) {
	it := diff.Iter()
	for it.Next() {
		e := it.Element()
		switch {
		case e.Key == "a":
		case e.Key == "l":
			n, _ := e.Value.AsInt64()
			u.truncated = append(u.truncated, truncation{field: u.note(path), size: int32(n)})
		case len(e.Key) > 1 && (e.Key[0] == 'u' || e.Key[0] == 's'):
			if _, err := strconv.Atoi(e.Key[1:]); err != nil {
				continue
			}
			el := append(path[:len(path):len(path)], pathPart{name: e.Key[1:], index: true})
			if e.Key[0] == 'u' {
				u.updated.AppendValue(u.note(el), e.Value)
				continue
			}
			if e.Value.Type != bson.TypeDocument {
				continue
			}
			d := e.Value.Document()
			if a, ok := d.Lookup("a"); ok && a.Truthy() {
				u.walkArray(el, d)
			} else {
				u.walkDiff(el, d)
			}
		}
	}
}

// appendUpdateDescription appends updateDescription for the diff.
func appendUpdateDescription(b *bson.Builder, diff bson.Doc, expanded bool) {
	var u updateDesc
	u.walkDiff(nil, diff)
	b.StartDocument("updateDescription")
	b.AppendDocument("updatedFields", u.updated.Finish())
	b.StartArray("removedFields")
	for i, r := range u.removed {
		b.AppendString(bson.Index(i), r)
	}
	b.End()
	b.StartArray("truncatedArrays")
	for i, t := range u.truncated {
		b.StartDocument(bson.Index(i))
		b.AppendString("field", t.field)
		b.AppendInt32("newSize", t.size)
		b.End()
	}
	b.End()
	if expanded {
		b.StartDocument("disambiguatedPaths")
		for _, a := range u.ambiguous {
			b.StartArray(a.path)
			for i, p := range a.parts {
				if p.index {
					n, _ := strconv.Atoi(p.name)
					b.AppendInt32(bson.Index(i), int32(n))
				} else {
					b.AppendString(bson.Index(i), p.name)
				}
			}
			b.End()
		}
		b.End()
	}
	b.End()
}
