package query

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Sort is a compiled sort specification. It is safe for concurrent use.
type Sort struct {
	keys    []sortKey
	natural int
	coll    *Collation
}

type sortKey struct {
	path  string
	parts []string
	desc  bool
	meta  bool // {$meta: "textScore"}: the score is not known here and sorts all documents equal
}

// MaxSortKeys is the most keys a sort pattern may have (mongod's
// Ordering::kMaxCompoundIndexKeys).
const MaxSortKeys = 32

// ParseSort compiles a sort document: {field: 1 or -1 (any numeric type),
// ..., $natural: ±1, field: {$meta: "textScore"}}.
func ParseSort(spec bson.Doc, opts *Options) (*Sort, error) {
	s := &Sort{}
	if opts != nil {
		s.coll = opts.Collation
	}
	// mongod builds an Ordering of the pattern, which holds at most 32
	// keys (find's sort and $sort alike).
	if spec.Len() > MaxSortKeys {
		return nil, mongoerr.New(mongoerr.SortTooManyKeys, "too many compound keys")
	}
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		v := e.Value
		if e.Key == "$natural" {
			n, ok := sortDirection(v)
			if !ok {
				return nil, mongoerr.New(mongoerr.SortBadOrder, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
			}
			s.natural = n
			continue
		}
		if err := validateSortPath(e.Key); err != nil {
			return nil, err
		}
		switch {
		case v.IsNumber():
			n, ok := sortDirection(v)
			if !ok {
				return nil, mongoerr.New(mongoerr.SortBadOrder, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
			}
			s.keys = append(s.keys, sortKey{path: e.Key, parts: splitPath(e.Key), desc: n < 0})
		case v.Type == bson.TypeDocument:
			sub := bson.Doc(v.Data)
			if firstKey(sub) != "$meta" {
				return nil, mongoerr.New(mongoerr.SortExpressionNotMeta, "$meta is the only expression supported by $sort right now")
			}
			if sub.Len() != 1 {
				return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot have additional keys in a $meta sort specification")
			}
			m, _ := sub.Lookup("$meta")
			meta := bson.Element{Key: "$meta", Value: m}
			if m.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.SortIllegalMeta, "Illegal $meta sort: %s", elemString(meta))
			}
			switch m.StringValue() {
			case "textScore", "randVal":
			case "searchScore":
				return nil, mongoerr.New(mongoerr.SortMetaSearchScore, "$meta sort by 'searchScore' metadata is not supported")
			case "searchHighlights":
				return nil, mongoerr.New(mongoerr.SortMetaSearchHighlights, "$meta sort by 'searchHighlights' metadata is not supported")
			default:
				return nil, mongoerr.New(mongoerr.SortIllegalMeta, "Illegal $meta sort: %s", elemString(meta))
			}
			s.keys = append(s.keys, sortKey{path: e.Key, meta: true, desc: true})
		default:
			return nil, mongoerr.New(mongoerr.SortIllegalKey, "Illegal key in $sort specification: %s", elemString(e))
		}
	}
	if s.natural != 0 {
		// MongoDB answers a sort naming $natural with a collection scan in
		// that direction and ignores the other keys.
		s.keys = nil
	}
	return s, nil
}

func validateSortPath(p string) error {
	if p == "" {
		return mongoerr.New(mongoerr.FieldPathEmpty, "FieldPath cannot be constructed with empty string")
	}
	return validatePathNames(p)
}

// validatePathNames checks the names of a field path p, as MongoDB's
// FieldPath does: no trailing dot, no empty name, no name starting with
// '$'.
func validatePathNames(p string) error {
	if strings.HasSuffix(p, ".") {
		return mongoerr.New(mongoerr.FieldPathTrailingDot, "FieldPath must not end with a '.'.")
	}
	for _, c := range splitPath(p) {
		if c == "" {
			return mongoerr.New(mongoerr.FieldPathEmptyName, "FieldPath field names may not be empty strings.")
		}
		if strings.HasPrefix(c, "$") {
			return mongoerr.New(mongoerr.FieldPathDollarPrefix, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return nil
}

func sortDirection(v bson.Value) (int, bool) {
	f, ok := v.AsFloat64()
	if !ok {
		return 0, false
	}
	switch f {
	case 1:
		return 1, true
	case -1:
		return -1, true
	}
	return 0, false
}

// Natural returns 0 for an ordinary sort, or the direction of a $natural
// sort.
func (s *Sort) Natural() int { return s.natural }

// Empty reports whether the sort orders nothing (no keys, not $natural).
func (s *Sort) Empty() bool { return len(s.keys) == 0 && s.natural == 0 }

// HasMeta reports whether the sort uses {$meta: ...}.
func (s *Sort) HasMeta() bool {
	for _, k := range s.keys {
		if k.meta {
			return true
		}
	}
	return false
}

// keyValue returns the value doc sorts by for key k: the smallest (or, for a
// descending key, the largest) of the values the path yields, arrays
// contributing their elements; a missing field sorts as null and an empty
// array below null.
func (s *Sort) keyValue(doc bson.Doc, k *sortKey) bson.Value {
	var c sortCollector
	c.desc = k.desc
	c.coll = s.comparer()
	collectSortValues(doc, k.parts, 0, &c)
	if !c.have {
		if c.empty {
			return bson.Value{Type: bson.TypeUndefined}
		}
		return bson.Value{Type: bson.TypeNull}
	}
	return c.best
}

func (s *Sort) comparer() bson.StringComparer {
	if s.coll == nil {
		return nil
	}
	return s.coll
}

type sortCollector struct {
	best  bson.Value
	have  bool
	empty bool // saw an empty array
	desc  bool
	coll  bson.StringComparer
}

func (c *sortCollector) add(v bson.Value) {
	if v.Type == 0 || v.Type == bson.TypeUndefined {
		v = bson.Value{Type: bson.TypeNull}
	}
	if !c.have {
		c.best, c.have = v, true
		return
	}
	r := bson.CompareCollated(v, c.best, c.coll)
	if (c.desc && r > 0) || (!c.desc && r < 0) {
		c.best = v
	}
}

func collectSortValues(d bson.Doc, parts []string, i int, c *sortCollector) {
	for {
		v, ok := d.Lookup(parts[i])
		if !ok {
			c.add(bson.Value{})
			return
		}
		if i == len(parts)-1 {
			addLeaf(v, c)
			return
		}
		switch v.Type {
		case bson.TypeDocument:
			d = bson.Doc(v.Data)
			i++
		case bson.TypeArray:
			arr := bson.Doc(v.Data)
			if isAllDigits(parts[i+1]) {
				if x, ok := arr.Lookup(parts[i+1]); ok {
					if i+1 == len(parts)-1 {
						addLeaf(x, c)
						return
					}
					if x.Type == bson.TypeDocument {
						d = bson.Doc(x.Data)
						i += 2
						continue
					}
				}
			}
			it := arr.Iter()
			n := 0
			for it.Next() {
				x := it.Element().Value
				n++
				if x.Type == bson.TypeDocument {
					collectSortValues(bson.Doc(x.Data), parts, i+1, c)
				} else {
					c.add(bson.Value{})
				}
			}
			if n == 0 {
				c.add(bson.Value{})
			}
			return
		default:
			c.add(bson.Value{})
			return
		}
	}
}

// addLeaf adds the value at the end of a path: an array contributes its
// elements.
func addLeaf(v bson.Value, c *sortCollector) {
	if v.Type != bson.TypeArray {
		c.add(v)
		return
	}
	n := 0
	it := bson.Doc(v.Data).Iter()
	for it.Next() {
		c.add(it.Element().Value)
		n++
	}
	if n == 0 {
		c.empty = true
	}
}

// Compare orders a and b by the sort: negative if a sorts first. A
// document whose sort keys are parallel arrays (see Check) compares by
// each key's own smallest or largest value.
func (s *Sort) Compare(a, b bson.Doc) int {
	if s.compound() {
		va, _ := s.tupleValues(a)
		vb, _ := s.tupleValues(b)
		j := 0
		for i := range s.keys {
			k := &s.keys[i]
			if k.meta {
				continue
			}
			if r := bson.CompareCollated(va[j], vb[j], s.comparer()); r != 0 {
				if k.desc {
					return -r
				}
				return r
			}
			j++
		}
		return 0
	}
	for i := range s.keys {
		k := &s.keys[i]
		if k.meta {
			continue
		}
		r := bson.CompareCollated(s.keyValue(a, k), s.keyValue(b, k), s.comparer())
		if r != 0 {
			if k.desc {
				return -r
			}
			return r
		}
	}
	return 0
}

// Check reports the error MongoDB raises when doc cannot be sorted: its
// sort keys go through two different arrays ("parallel arrays"). The
// server checks each document it sorts.
func (s *Sort) Check(doc bson.Doc) error {
	if !s.compound() {
		return nil
	}
	_, err := s.tupleValues(doc)
	return err
}

// KeyScore is Key for a document whose $text score is known: a
// {$meta: "textScore"} key orders by descending score.
func (s *Sort) KeyScore(dst []byte, doc bson.Doc, score float64) []byte {
	var sc [8]byte
	binary.LittleEndian.PutUint64(sc[:], math.Float64bits(score))
	scoreValue := bson.Value{Type: bson.TypeDouble, Data: sc[:]}
	var vals []bson.Value
	if s.compound() {
		vals, _ = s.tupleValues(doc)
	}
	j := 0
	for i := range s.keys {
		k := &s.keys[i]
		switch {
		case k.meta:
			dst = bson.AppendKey(dst, scoreValue, true)
		case vals != nil:
			dst = s.appendKey(dst, vals[j], k.desc)
			j++
		default:
			dst = s.appendKey(dst, s.keyValue(doc, k), k.desc)
		}
	}
	return dst
}

// Key appends to dst a byte string whose bytewise order is the sort order of
// doc (equal keys: equal under the sort).
func (s *Sort) Key(dst []byte, doc bson.Doc) []byte {
	if s.compound() {
		vals, _ := s.tupleValues(doc)
		j := 0
		for i := range s.keys {
			k := &s.keys[i]
			if k.meta {
				continue
			}
			dst = s.appendKey(dst, vals[j], k.desc)
			j++
		}
		return dst
	}
	for i := range s.keys {
		k := &s.keys[i]
		if k.meta {
			continue
		}
		dst = s.appendKey(dst, s.keyValue(doc, k), k.desc)
	}
	return dst
}

func (s *Sort) appendKey(dst []byte, v bson.Value, desc bool) []byte {
	if s.coll != nil {
		return bson.AppendKeyCollated(dst, v, desc, s.coll)
	}
	return bson.AppendKey(dst, v, desc)
}
