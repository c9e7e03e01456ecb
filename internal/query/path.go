package query

import (
	"strings"

	"github.com/cairndb/cairn/bson"
)

// leafMode says how a path treats an array found at its last component.
type leafMode uint8

const (
	// leafTraverse offers each element of a leaf array to the matcher, then
	// the array itself (comparison, $in, $type, $exists, $regex...).
	leafTraverse leafMode = iota
	// leafWhole offers only the array itself ($size, $elemMatch).
	leafWhole
)

// valueMatcher tests one value produced by walking a path. A missing field
// is offered as the zero Value.
type valueMatcher interface {
	matchValue(v bson.Value) bool
}

// splitPath splits a dotted path into its components.
func splitPath(p string) []string { return strings.Split(p, ".") }

// isAllDigits reports whether s is a non-empty string of ASCII digits, the
// form of a path component that can address an array position.
func isAllDigits(s string) bool {
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

// walkResult carries the array position through which the first matching
// value was reached, for the positional $ operator.
type walkResult struct {
	offset    string
	hasOffset bool
}

// walkDoc offers m every value that path parts[i:] designates in d, in
// MongoDB's order, and reports whether m accepted one. On success res holds
// the outermost implicit array offset of the accepted value.
func walkDoc(d bson.Doc, parts []string, i int, mode leafMode, m valueMatcher, res *walkResult) bool {
	// Descend through embedded documents until the path ends, is missing,
	// or meets an array.
	for {
		v, ok := d.Lookup(parts[i])
		if !ok {
			return m.matchValue(bson.Value{})
		}
		if i == len(parts)-1 {
			if v.Type == bson.TypeArray && mode == leafTraverse {
				return walkLeafArray(v, m, res)
			}
			return m.matchValue(v)
		}
		switch v.Type {
		case bson.TypeDocument:
			d = bson.Doc(v.Data)
			i++
		case bson.TypeArray:
			return walkArray(bson.Doc(v.Data), parts, i+1, mode, m, res)
		default:
			return m.matchValue(bson.Value{})
		}
	}
}

// walkLeafArray offers each element of a leaf array, then the array.
func walkLeafArray(arr bson.Value, m valueMatcher, res *walkResult) bool {
	it := bson.Doc(arr.Data).Iter()
	for it.Next() {
		e := it.Element()
		if m.matchValue(e.Value) {
			res.offset, res.hasOffset = e.Key, true
			return true
		}
	}
	return m.matchValue(arr)
}

// walkArray handles an array met before the end of the path; parts[j] is the
// next component (there is one).
func walkArray(arr bson.Doc, parts []string, j int, mode leafMode, m valueMatcher, res *walkResult) bool {
	numeric := isAllDigits(parts[j])
	last := j == len(parts)-1
	it := arr.Iter()
	for it.Next() {
		e := it.Element()
		offsetMatch := numeric && e.Key == parts[j]
		switch {
		case e.Value.Type == bson.TypeDocument:
			var sub walkResult
			if walkDoc(bson.Doc(e.Value.Data), parts, j, mode, m, &sub) {
				res.offset, res.hasOffset = e.Key, true
				return true
			}
			if offsetMatch {
				if last {
					if m.matchValue(e.Value) {
						*res = walkResult{}
						return true
					}
				} else if walkDoc(bson.Doc(e.Value.Data), parts, j+1, mode, m, res) {
					return true
				}
			}
		case offsetMatch:
			if last {
				if m.matchValue(e.Value) {
					*res = walkResult{}
					return true
				}
			} else if e.Value.Type == bson.TypeArray {
				if walkArray(bson.Doc(e.Value.Data), parts, j+1, mode, m, res) {
					return true
				}
			}
		}
	}
	return false
}
