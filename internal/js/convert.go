package js

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/dop251/goja"
)

// BSON ↔ JavaScript, as mongod's mozjs ValueReader and ValueWriter map
// them:
//
//	BSON                 JavaScript                 back to BSON
//	double, int32        number                     double
//	int64                NumberLong                 int64
//	decimal128           NumberDecimal              decimal128
//	string, symbol       string                     string
//	bool, null, undef.   boolean, null, undefined   the same
//	date                 Date                       date
//	ObjectId             ObjectId                   ObjectId
//	binary               BinData                    binary
//	regex                RegExp                     regex
//	timestamp            Timestamp                  timestamp
//	minKey, maxKey       MinKey(), MaxKey()         the same
//	JavaScript code      Code                       code
//	code with scope      Code (with .scope)         code with scope
//	DBPointer            DBPointer                  DBPointer
//	document, array      object, array              document, array
//	(NumberInt)          NumberInt                  int32
//	(a function)         function                   code (its source)
//
// Every JavaScript number becomes a double, as in mongod (an emitted 1 is
// 1.0). A regex's options outside JavaScript's (x, l) are dropped when the
// RegExp is built. Strings and keys are copied out of the BSON (a
// document's bytes may be reused after the call).

// maxWriteDepth is mozjs's ObjectWrapper::kMaxWriteFieldDepth.
const maxWriteDepth = 150

func (h *helpers) toJS(v bson.Value) (goja.Value, error) {
	rt := h.rt
	switch v.Type {
	case bson.TypeDouble:
		return rt.ToValue(v.Double()), nil
	case bson.TypeInt32:
		return rt.ToValue(int64(v.Int32())), nil
	case bson.TypeInt64:
		return rt.New(h.long, rt.ToValue(strconv.FormatInt(v.Int64(), 10)))
	case bson.TypeDecimal128:
		hi, lo := v.Decimal128()
		return rt.New(h.dec, rt.ToValue(bson.FormatDecimal128(hi, lo)))
	case bson.TypeString, bson.TypeSymbol:
		return rt.ToValue(strings.Clone(v.StringValue())), nil
	case bson.TypeBoolean:
		return rt.ToValue(v.Boolean()), nil
	case bson.TypeNull:
		return goja.Null(), nil
	case bson.TypeUndefined:
		return goja.Undefined(), nil
	case bson.TypeDateTime:
		return rt.New(h.date, rt.ToValue(v.DateTime()))
	case bson.TypeObjectID:
		id := v.ObjectID()
		return rt.New(h.oid, rt.ToValue(hex.EncodeToString(id[:])))
	case bson.TypeBinary:
		st, data := v.Binary()
		return rt.New(h.bin, rt.ToValue(int64(st)), rt.ToValue(base64.StdEncoding.EncodeToString(data)))
	case bson.TypeRegex:
		pat, opts := v.Regex()
		var flags strings.Builder
		for _, c := range opts {
			if strings.ContainsRune("imsu", c) {
				flags.WriteRune(c)
			}
		}
		return rt.New(h.regexp, rt.ToValue(strings.Clone(pat)), rt.ToValue(flags.String()))
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		return rt.New(h.ts, rt.ToValue(int64(t)), rt.ToValue(int64(i)))
	case bson.TypeMinKey:
		return h.minKey, nil
	case bson.TypeMaxKey:
		return h.maxKey, nil
	case bson.TypeJavaScript:
		return rt.New(h.code, rt.ToValue(strings.Clone(v.StringValue())))
	case bson.TypeCodeWithScope:
		code, scope := v.CodeWithScope()
		sc, err := h.docToJS(scope, false)
		if err != nil {
			return nil, err
		}
		return rt.New(h.code, rt.ToValue(strings.Clone(code)), sc)
	case bson.TypeDBPointer:
		ns, id := v.DBPointer()
		oid, err := rt.New(h.oid, rt.ToValue(hex.EncodeToString(id[:])))
		if err != nil {
			return nil, err
		}
		return rt.New(h.dbptr, rt.ToValue(strings.Clone(ns)), oid)
	case bson.TypeDocument:
		return h.docToJS(v.Document(), false)
	case bson.TypeArray:
		return h.docToJS(v.Document(), true)
	}
	return nil, mongoerr.New(mongoerr.BadValue, "cannot convert BSON type %s to JavaScript", v.Type)
}

// docToJS converts a document (or, with array, an array) to an object.
func (h *helpers) docToJS(d bson.Doc, array bool) (*goja.Object, error) {
	rt := h.rt
	if array {
		var items []any
		it := d.Iter()
		for it.Next() {
			v, err := h.toJS(it.Element().Value)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		return rt.NewArray(items...), nil
	}
	o := rt.NewObject()
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		v, err := h.toJS(e.Value)
		if err != nil {
			return nil, err
		}
		if err := o.Set(strings.Clone(e.Key), v); err != nil {
			return nil, err
		}
	}
	if it.Corrupt() {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid BSON converted to JavaScript")
	}
	return o, nil
}

// toBSONValue converts a script's value to BSON (a copy, owned by the
// caller).
func (h *helpers) toBSONValue(v goja.Value) (bson.Value, error) {
	b := bson.NewBuilder(nil)
	if err := h.write(b, "", v, 0); err != nil {
		return bson.Value{}, err
	}
	d := b.Finish()
	if len(d) > bson.MaxDocumentSize {
		return bson.Value{}, errTooLarge(len(d))
	}
	it := d.Iter()
	it.Next()
	return it.Element().Value, nil
}

// toBSONDoc converts an object to a document.
func (h *helpers) toBSONDoc(o *goja.Object) (bson.Doc, error) {
	b := bson.NewBuilder(nil)
	if err := h.writeFields(b, o, 0); err != nil {
		return nil, err
	}
	d := b.Finish()
	if len(d) > bson.MaxDocumentSize {
		return nil, errTooLarge(len(d))
	}
	return d, nil
}

func (h *helpers) write(b *bson.Builder, key string, v goja.Value, depth int) error {
	if depth >= maxWriteDepth {
		return mongoerr.New(mongoerr.JSObjectTooDeep, "Exceeded depth limit of %d when converting js object to BSON. Do you have a cycle?", maxWriteDepth)
	}
	if b.Len() > bson.MaxDocumentSize {
		return errTooLarge(b.Len())
	}
	if strings.IndexByte(key, 0) >= 0 {
		return mongoerr.New(mongoerr.JSPropertyNullChar, "JavaScript property (name) contains a null char which is not allowed in BSON. ")
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		b.AppendValue(key, bson.Value{Type: bson.TypeUndefined})
		return nil
	case goja.IsNull(v):
		b.AppendNull(key)
		return nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		switch x := v.Export().(type) {
		case string:
			b.AppendString(key, x)
		case bool:
			b.AppendBool(key, x)
		case int64:
			b.AppendDouble(key, float64(x))
		case float64:
			b.AppendDouble(key, x)
		default:
			return mongoerr.New(mongoerr.JSPropertyUnconvertible, "unable to convert JavaScript property to mongo element %s", key)
		}
		return nil
	}
	return h.writeObject(b, key, o, depth)
}

func (h *helpers) writeObject(b *bson.Builder, key string, o *goja.Object, depth int) error {
	switch o.Prototype() {
	case h.oidP:
		raw, err := hex.DecodeString(o.Get("__v").String())
		if err != nil || len(raw) != 12 {
			return mongoerr.New(mongoerr.BadValue, "invalid ObjectId")
		}
		var id [12]byte
		copy(id[:], raw)
		b.AppendObjectID(key, id)
		return nil
	case h.longP:
		n, err := strconv.ParseInt(o.Get("__v").String(), 10, 64)
		if err != nil {
			return mongoerr.New(mongoerr.BadValue, "invalid NumberLong")
		}
		b.AppendInt64(key, n)
		return nil
	case h.intP:
		b.AppendInt32(key, int32(o.Get("__v").ToInteger()))
		return nil
	case h.decP:
		hi, lo, err := bson.ParseDecimal128(o.Get("__v").String())
		if err != nil {
			return mongoerr.New(mongoerr.BadValue, "invalid NumberDecimal")
		}
		b.AppendDecimal128(key, hi, lo)
		return nil
	case h.binP:
		data, err := base64.StdEncoding.DecodeString(o.Get("__v").String())
		if err != nil {
			return mongoerr.New(mongoerr.BadValue, "invalid BinData")
		}
		b.AppendBinary(key, byte(o.Get("__t").ToInteger()), data)
		return nil
	case h.tsP:
		b.AppendTimestamp(key, uint32(o.Get("t").ToInteger()), uint32(o.Get("i").ToInteger()))
		return nil
	case h.codeP:
		code := o.Get("code").String()
		if sc, ok := o.Get("scope").(*goja.Object); ok {
			scope, err := h.toBSONDoc(sc)
			if err != nil {
				return err
			}
			b.AppendValue(key, codeWithScope(code, scope))
			return nil
		}
		b.AppendValue(key, bson.Value{Type: bson.TypeJavaScript, Data: stringData(code)})
		return nil
	case h.dbptrP:
		id, ok := o.Get("id").(*goja.Object)
		if !ok || id.Prototype() != h.oidP {
			return mongoerr.New(mongoerr.BadValue, "DBPointer id must be an ObjectId")
		}
		raw, _ := hex.DecodeString(id.Get("__v").String())
		data := stringData(o.Get("ns").String())
		b.AppendValue(key, bson.Value{Type: bson.TypeDBPointer, Data: append(data, raw...)})
		return nil
	}
	if o == h.minKey {
		b.AppendMinKey(key)
		return nil
	}
	if o == h.maxKey {
		b.AppendMaxKey(key)
		return nil
	}
	switch o.ClassName() {
	case "Function":
		b.AppendValue(key, bson.Value{Type: bson.TypeJavaScript, Data: stringData(o.String())})
		return nil
	case "Date":
		t, ok := o.Export().(time.Time)
		if !ok {
			return mongoerr.New(mongoerr.BadValue, "invalid Date")
		}
		ms := o.Get("getTime")
		if f, ok := goja.AssertFunction(ms); ok {
			if r, err := f(o); err == nil && !math.IsNaN(r.ToFloat()) {
				b.AppendDateTime(key, r.ToInteger())
				return nil
			}
		}
		b.AppendDateTime(key, t.UnixMilli())
		return nil
	case "RegExp":
		b.AppendRegex(key, o.Get("source").String(), o.Get("flags").String())
		return nil
	case "Array":
		b.StartArray(key)
		n := int(o.Get("length").ToInteger())
		for i := 0; i < n; i++ {
			if err := h.write(b, bson.Index(i), o.Get(strconv.Itoa(i)), depth+1); err != nil {
				return err
			}
		}
		b.End()
		return nil
	}
	b.StartDocument(key)
	if err := h.writeFields(b, o, depth+1); err != nil {
		return err
	}
	b.End()
	return nil
}

// writeFields writes an object's enumerable own properties, in
// JavaScript's order.
func (h *helpers) writeFields(b *bson.Builder, o *goja.Object, depth int) error {
	for _, k := range o.Keys() {
		if err := h.write(b, k, o.Get(k), depth); err != nil {
			return err
		}
	}
	return nil
}

func stringData(s string) []byte {
	d := make([]byte, 4, 5+len(s))
	binary.LittleEndian.PutUint32(d, uint32(len(s)+1))
	d = append(d, s...)
	return append(d, 0)
}

func codeWithScope(code string, scope bson.Doc) bson.Value {
	s := stringData(code)
	d := make([]byte, 4, 4+len(s)+len(scope))
	d = append(d, s...)
	d = append(d, scope...)
	binary.LittleEndian.PutUint32(d, uint32(len(d)))
	return bson.Value{Type: bson.TypeCodeWithScope, Data: d}
}
