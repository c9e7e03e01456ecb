package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

var (
	nullValue      = bson.Value{Type: bson.TypeNull}
	undefinedValue = bson.Value{Type: bson.TypeUndefined}
)

// Applies reports whether doc belongs in the index: partial indexes hold
// only the documents their filter matches; sparse ones only documents that
// have at least one of the indexed fields.
func (s *Spec) Applies(doc bson.Doc) bool {
	if s.Partial != nil && !s.Partial.Match(doc) {
		return false
	}
	if s.Sparse && s.Text == nil && s.Wildcard == nil {
		for _, f := range s.Fields {
			if vals, _ := fieldValues(doc, f.Parts); len(vals) > 0 {
				return true
			}
		}
		return false
	}
	return true
}

// Keys returns the index values of doc, encoded (without the _id suffix),
// sorted and without duplicates, and whether any field held an array
// (the index is then multikey). A document with arrays in two indexed
// fields is refused with CannotIndexParallelArrays (171).
func (s *Spec) Keys(doc bson.Doc) (keys [][]byte, multikey bool, err error) {
	if s.Text != nil || s.IsGeo() {
		return s.pluginKeys(doc)
	}
	var kb keyBuf
	var bounds [][2]int
	buf, multikey, err := s.appendKeys(&kb, nil, doc, func(dst []byte, start int) []byte {
		bounds = append(bounds, [2]int{start, len(dst)})
		return dst
	})
	if err != nil {
		return nil, false, err
	}
	keys = make([][]byte, len(bounds))
	for i, b := range bounds {
		keys[i] = buf[b[0]:b[1]:b[1]]
	}
	return keys, multikey, nil
}

// KeysContext is Keys for a write that ctx may interrupt: a text index's
// terms are scored checking ctx as they go (a huge document takes
// seconds), other keys are checked once generated. Interruption is
// MongoDB's Interrupted (11601), or MaxTimeMSExpired (50) for a deadline.
func (s *Spec) KeysContext(ctx context.Context, doc bson.Doc) (keys [][]byte, multikey bool, err error) {
	if s.Text != nil {
		keys, multikey, err = s.textKeys(ctx, doc)
	} else {
		keys, multikey, err = s.Keys(doc)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, false, interruption(err)
	}
	return keys, multikey, nil
}

// interruption maps a context's error to MongoDB's error for its reason
// (as the command layer does) and leaves other errors alone.
func interruption(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return mongoerr.New(mongoerr.MaxTimeMSExpired, "operation exceeded time limit")
	case errors.Is(err, context.Canceled):
		return mongoerr.New(mongoerr.Interrupted, "operation was interrupted")
	}
	return err
}

// pluginKeys returns the keys of a text or 2dsphere index.
func (s *Spec) pluginKeys(doc bson.Doc) ([][]byte, bool, error) {
	if s.Text != nil {
		return s.textKeys(context.Background(), doc)
	}
	return s.geoKeys(doc)
}

// HashedValue is the 64-bit hash a hashed index stores for v: FNV-1a of
// the value's key encoding, so numbers that compare equal hash equally.
func HashedValue(v bson.Value) int64 {
	return int64(fnv64a(bson.AppendKey(nil, v, false)))
}

// fnv64a is the 64-bit FNV-1a hash (as hash/fnv's New64a, without its
// allocation).
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func (s *Spec) appendHashed(dst []byte, v bson.Value, desc bool) []byte {
	return appendHashedSum(dst, fnv64a(s.appendValue(nil, v, false)), desc)
}

// appendValue encodes one indexed value: strings by the index's
// collation key when it has one.
func (s *Spec) appendValue(dst []byte, v bson.Value, desc bool) []byte {
	if s.Collation != nil {
		return bson.AppendKeyCollated(dst, v, desc, s.Collation)
	}
	return bson.AppendKey(dst, v, desc)
}

// appendHashedSum appends the key of a hash (stored as an int64).
func appendHashedSum(dst []byte, h uint64, desc bool) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h)
	return bson.AppendKey(dst, bson.Value{Type: bson.TypeInt64, Data: b[:]}, desc)
}

// fieldValues returns the values an index stores for a dotted path: a
// path through an array of documents yields each element's value; an array
// at the end of the path yields its elements (an empty array yields
// undefined, as MongoDB indexes it). isArray reports that an array was
// expanded. No values means the field is missing (indexed as null).
func fieldValues(doc bson.Doc, parts []string) (vals []bson.Value, isArray bool) {
	collect(bson.Value{Type: bson.TypeDocument, Data: doc}, parts, &vals, &isArray, false)
	return vals, isArray
}

func collect(v bson.Value, parts []string, out *[]bson.Value, isArray *bool, inArray bool) {
	if len(parts) == 0 {
		if v.Type == bson.TypeArray {
			*isArray = true
			n := 0
			it := v.Document().Iter()
			for it.Next() {
				*out = append(*out, it.Element().Value)
				n++
			}
			if n == 0 {
				*out = append(*out, undefinedValue)
			}
			return
		}
		*out = append(*out, v)
		return
	}
	switch v.Type {
	case bson.TypeDocument:
		child, ok := v.Document().Lookup(parts[0])
		if !ok {
			if inArray {
				*out = append(*out, nullValue)
			}
			return
		}
		collect(child, parts[1:], out, isArray, inArray)
	case bson.TypeArray:
		*isArray = true
		if isPosition(parts[0]) {
			if child, ok := v.Document().Lookup(parts[0]); ok {
				collect(child, parts[1:], out, isArray, inArray)
				return
			}
		}
		n := 0
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element().Value
			if e.Type == bson.TypeDocument {
				collect(e, parts, out, isArray, true)
				n++
			}
		}
		if n == 0 {
			*out = append(*out, nullValue)
		}
	default:
		if inArray {
			*out = append(*out, nullValue)
		}
	}
}

func isPosition(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// SameCollation reports whether two collations order strings the same
// way (nil is binary order).
func SameCollation(a, b *query.Collation) bool {
	if a == nil || b == nil {
		return a == b
	}
	var x, y bson.Builder
	a.AppendSpec(&x, "c")
	b.AppendSpec(&y, "c")
	return bytes.Equal(x.Finish(), y.Finish())
}
