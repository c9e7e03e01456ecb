package exec

import (
	"github.com/cairndb/cairn/bson"
)

// PathValues calls fn with each value a dotted path reaches in d, walking
// into arrays of documents as distinct does (a numeric component indexes an
// array).
func PathValues(d bson.Doc, path []string, fn func(bson.Value)) {
	v, ok := d.Lookup(path[0])
	if !ok {
		return
	}
	if len(path) == 1 {
		fn(v)
		return
	}
	switch v.Type {
	case bson.TypeDocument:
		PathValues(v.Document(), path[1:], fn)
	case bson.TypeArray:
		if e, ok := v.Document().Lookup(path[1]); ok && isDigits(path[1]) {
			if len(path) == 2 {
				fn(e)
			} else if e.Type == bson.TypeDocument || e.Type == bson.TypeArray {
				PathValues(e.Document(), path[2:], fn)
			}
			return
		}
		it := v.Document().Iter()
		for it.Next() {
			if e := it.Element().Value; e.Type == bson.TypeDocument {
				PathValues(e.Document(), path[1:], fn)
			}
		}
	}
}

func isDigits(s string) bool {
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
