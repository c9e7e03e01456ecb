package expr

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

var (
	vTrue    = bson.Value{Type: bson.TypeBoolean, Data: []byte{1}}
	vFalse   = bson.Value{Type: bson.TypeBoolean, Data: []byte{0}}
	vNull    = bson.Value{Type: bson.TypeNull, Data: []byte{}}
	missing  = bson.Value{}
	emptyArr = bson.Value{Type: bson.TypeArray, Data: []byte{5, 0, 0, 0, 0}}
	emptyObj = bson.Value{Type: bson.TypeDocument, Data: []byte{5, 0, 0, 0, 0}}
)

func vBool(b bool) bson.Value {
	if b {
		return vTrue
	}
	return vFalse
}

func errf(code int32, format string, args ...any) error {
	return mongoerr.New(code, format, args...)
}

// nullish reports whether v is missing, null or undefined.
func nullish(v bson.Value) bool {
	return v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

// typeName is MongoDB's typeName() for v: "missing" for the zero Value.
func typeName(v bson.Value) string {
	if v.Type == 0 {
		return "missing"
	}
	return v.Type.String()
}

// valueSize is the memory a value on the stack holds.
const valueSize = int(unsafe.Sizeof(bson.Value{}))

// used is the memory the evaluation has built: the arena and the value
// stack.
func (e *Env) used() int { return len(e.arena) + len(e.vs)*valueSize }

// fits reports whether n more bytes keep the evaluation within maxArena.
// When they do not it records the overflow: the builder then returns
// without allocating, and the evaluation fails with 146 (Eval, step and
// checkArena look at e.over). Accumulator results (resultEnv) are bounded
// by the accumulators' own limits and always fit.
func (e *Env) fits(n int) bool {
	if e.unlimited || e.used()+n <= maxArena {
		return true
	}
	e.over = true
	return false
}

// alloc reserves n bytes in the arena and returns them. Builders of
// values whose size depends on the input check fits first.
func (e *Env) alloc(n int) []byte {
	l := len(e.arena)
	if cap(e.arena)-l < n {
		c := 2*cap(e.arena) + n
		if !e.unlimited && c > maxArena {
			c = max(maxArena, l+n) // do not double past the limit
		}
		na := make([]byte, l, c)
		copy(na, e.arena)
		e.arena = na
	}
	e.arena = e.arena[:l+n]
	return e.arena[l : l+n : l+n]
}

func (e *Env) int32(n int32) bson.Value {
	b := e.alloc(4)
	binary.LittleEndian.PutUint32(b, uint32(n))
	return bson.Value{Type: bson.TypeInt32, Data: b}
}

func (e *Env) int64(n int64) bson.Value {
	b := e.alloc(8)
	binary.LittleEndian.PutUint64(b, uint64(n))
	return bson.Value{Type: bson.TypeInt64, Data: b}
}

// intOrLong returns n as int32 when it fits, else int64.
func (e *Env) intOrLong(n int64) bson.Value {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return e.int32(int32(n))
	}
	return e.int64(n)
}

func (e *Env) double(f float64) bson.Value {
	b := e.alloc(8)
	binary.LittleEndian.PutUint64(b, math.Float64bits(f))
	return bson.Value{Type: bson.TypeDouble, Data: b}
}

func (e *Env) date(ms int64) bson.Value {
	b := e.alloc(8)
	binary.LittleEndian.PutUint64(b, uint64(ms))
	return bson.Value{Type: bson.TypeDateTime, Data: b}
}

func (e *Env) decimal(hi, lo uint64) bson.Value {
	b := e.alloc(16)
	binary.LittleEndian.PutUint64(b, lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	return bson.Value{Type: bson.TypeDecimal128, Data: b}
}

func (e *Env) objectID(id [12]byte) bson.Value {
	b := e.alloc(12)
	copy(b, id[:])
	return bson.Value{Type: bson.TypeObjectID, Data: b}
}

func (e *Env) str(s string) bson.Value {
	if !e.fits(len(s) + 5) {
		// An empty string stands in (callers may rewrite its bytes);
		// the evaluation fails with 146.
		return bson.Value{Type: bson.TypeString, Data: []byte{1, 0, 0, 0, 0}}
	}
	b := e.alloc(len(s) + 5)
	binary.LittleEndian.PutUint32(b, uint32(len(s)+1))
	copy(b[4:], s)
	b[len(b)-1] = 0
	return bson.Value{Type: bson.TypeString, Data: b}
}

func (e *Env) strBytes(s []byte) bson.Value {
	return e.str(unsafe.String(unsafe.SliceData(s), len(s)))
}

// array encodes vals as a BSON array; missing values become null.
func (e *Env) array(vals []bson.Value) bson.Value {
	n := 5
	for i, v := range vals {
		n += 2 + len(bson.Index(i)) + len(v.Data)
	}
	if !e.fits(n) {
		return vNull
	}
	b := e.alloc(n)
	binary.LittleEndian.PutUint32(b, uint32(n))
	p := 4
	for i, v := range vals {
		t := v.Type
		if t == 0 {
			t = bson.TypeNull
		}
		b[p] = byte(t)
		p++
		p += copy(b[p:], bson.Index(i))
		b[p] = 0
		p++
		p += copy(b[p:], v.Data)
	}
	b[p] = 0
	return bson.Value{Type: bson.TypeArray, Data: b}
}

// document encodes keys/vals as a BSON document, skipping missing values.
func (e *Env) document(keys []string, vals []bson.Value) bson.Value {
	n := 5
	for i, v := range vals {
		if v.Type != 0 {
			n += 2 + len(keys[i]) + len(v.Data)
		}
	}
	if !e.fits(n) {
		return vNull
	}
	b := e.alloc(n)
	binary.LittleEndian.PutUint32(b, uint32(n))
	p := 4
	for i, v := range vals {
		if v.Type == 0 {
			continue
		}
		b[p] = byte(v.Type)
		p++
		p += copy(b[p:], keys[i])
		b[p] = 0
		p++
		p += copy(b[p:], v.Data)
	}
	b[p] = 0
	return bson.Value{Type: bson.TypeDocument, Data: b}
}

// pushElems appends the values of array (or document) v to the value stack and
// returns the start index; callers read e.vs[start:] and truncate.
func (e *Env) pushElems(v bson.Value) int {
	start := len(e.vs)
	it := bson.Doc(v.Data).Iter()
	for it.Next() {
		e.vs = append(e.vs, it.Element().Value)
	}
	return start
}

// pushEvals evaluates xs in order onto the value stack and returns where
// their values start; on an error the stack is left as it was.
func (e *Env) pushEvals(xs []node) (int, error) {
	start := len(e.vs)
	for _, x := range xs {
		v, err := x.eval(e)
		if err != nil {
			e.vs = e.vs[:start]
			return start, err
		}
		e.vs = append(e.vs, v)
	}
	return start, nil
}

// arrayLen counts the elements of an array value.
func arrayLen(v bson.Value) int { return bson.Doc(v.Data).Len() }

// copyValue returns a heap copy of v (for values kept beyond an Eval).
func copyValue(v bson.Value) bson.Value {
	if v.Type == 0 {
		return v
	}
	return bson.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)}
}

// CopyValue returns a copy of v that does not reference any Env's arena.
func CopyValue(v bson.Value) bson.Value { return copyValue(v) }

// heapBuild builds a value with a bson.Builder, outside any arena.
func heapBuild(f func(b *bson.Builder)) bson.Value {
	var b bson.Builder
	f(&b)
	v, _ := b.Finish().Lookup("v")
	return v
}
