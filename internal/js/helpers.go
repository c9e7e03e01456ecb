package js

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/dop251/goja"
)

//go:embed prelude.js
var preludeSource string

// prelude is the helpers' program, compiled once for every runtime.
var prelude = goja.MustCompile("prelude.js", preludeSource, false)

// newObjectID makes ObjectId() values as MongoDB generates them (time,
// then random bytes).
func newObjectID() [12]byte {
	var id [12]byte
	binary := uint32(time.Now().Unix())
	id[0], id[1], id[2], id[3] = byte(binary>>24), byte(binary>>16), byte(binary>>8), byte(binary)
	_, _ = rand.Read(id[4:])
	return id
}

// helpers holds one runtime's helper constructors, for the conversions.
type helpers struct {
	rt                                   *goja.Runtime
	ctx                                  context.Context
	long, int32, dec, oid, bin, ts, code *goja.Object // constructors
	dbptr                                *goja.Object
	longP, intP, decP, oidP, binP, tsP   *goja.Object // their prototypes
	codeP, dbptrP, minKey, maxKey        *goja.Object
	date, regexp                         *goja.Object
}

func installHelpers(rt *goja.Runtime, ctx context.Context) (*helpers, error) {
	h := &helpers{rt: rt, ctx: ctx}
	native := rt.NewObject()
	set := func(name string, f func(goja.FunctionCall) goja.Value) {
		_ = native.Set(name, f)
	}
	throw := func(format string, args ...any) {
		panic(rt.NewTypeError(fmt.Sprintf(format, args...)))
	}
	set("toLong", func(c goja.FunctionCall) goja.Value {
		v := c.Argument(0)
		if o, ok := v.(*goja.Object); ok && h.longP != nil && o.Prototype() == h.longP {
			return o.Get("__v")
		}
		if s, ok := v.Export().(string); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				throw("could not convert \"%s\" to NumberLong", s)
			}
			return rt.ToValue(strconv.FormatInt(n, 10))
		}
		f := v.ToFloat()
		if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
			throw("number passed to NumberLong must be representable as an int64_t")
		}
		return rt.ToValue(strconv.FormatInt(int64(f), 10))
	})
	set("compareLong", func(c goja.FunctionCall) goja.Value {
		a, _ := strconv.ParseInt(c.Argument(0).String(), 10, 64)
		b, _ := strconv.ParseInt(c.Argument(1).String(), 10, 64)
		switch {
		case a < b:
			return rt.ToValue(-1)
		case a > b:
			return rt.ToValue(1)
		}
		return rt.ToValue(0)
	})
	set("toDecimal", func(c goja.FunctionCall) goja.Value {
		v := c.Argument(0)
		var hi, lo uint64
		if o, ok := v.(*goja.Object); ok && o.Prototype() == h.decP {
			return o.Get("__v")
		}
		switch x := v.Export().(type) {
		case string:
			var err error
			if hi, lo, err = bson.ParseDecimal128(x); err != nil {
				throw("Invalid NumberDecimal: %s", x)
			}
		case int64:
			hi, lo = bson.Decimal128FromInt64(x)
		default:
			hi, lo = bson.Decimal128FromFloat64(v.ToFloat())
		}
		return rt.ToValue(bson.FormatDecimal128(hi, lo))
	})
	set("newOid", func(goja.FunctionCall) goja.Value {
		id := newObjectID()
		return rt.ToValue(hex.EncodeToString(id[:]))
	})
	set("checkOid", func(c goja.FunctionCall) goja.Value {
		s := c.Argument(0).String()
		if b, err := hex.DecodeString(s); err != nil || len(b) != 12 {
			throw("Invalid object id: %s", s)
		}
		return rt.ToValue(s)
	})
	set("checkSubtype", func(c goja.FunctionCall) goja.Value {
		f := c.Argument(0).ToFloat()
		if f < 0 || f > 255 || f != math.Trunc(f) {
			throw("BinData subtype must be between 0 and 255")
		}
		return rt.ToValue(int64(f))
	})
	set("checkBase64", func(c goja.FunctionCall) goja.Value {
		s := c.Argument(0).String()
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			throw("BinData: invalid base64: %s", s)
		}
		return rt.ToValue(s)
	})
	set("base64ToHex", func(c goja.FunctionCall) goja.Value {
		b, _ := base64.StdEncoding.DecodeString(c.Argument(0).String())
		return rt.ToValue(hex.EncodeToString(b))
	})
	set("base64Len", func(c goja.FunctionCall) goja.Value {
		b, _ := base64.StdEncoding.DecodeString(c.Argument(0).String())
		return rt.ToValue(len(b))
	})
	set("hexToBase64", func(c goja.FunctionCall) goja.Value {
		b, err := hex.DecodeString(c.Argument(0).String())
		if err != nil {
			throw("invalid hex: %s", c.Argument(0).String())
		}
		return rt.ToValue(base64.StdEncoding.EncodeToString(b))
	})
	set("newUUID", func(goja.FunctionCall) goja.Value {
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return rt.ToValue(hex.EncodeToString(b[:]))
	})
	set("checkUint32", func(c goja.FunctionCall) goja.Value {
		f := c.Argument(0).ToFloat()
		if f < 0 || f > math.MaxUint32 || f != math.Trunc(f) {
			throw("%s must be a 32-bit unsigned integer", c.Argument(1).String())
		}
		return rt.ToValue(int64(f))
	})
	set("parseISODate", func(c goja.FunctionCall) goja.Value {
		s := c.Argument(0).String()
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05Z0700",
			"2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return rt.ToValue(t.UnixMilli())
			}
		}
		throw("invalid ISO date: %s", s)
		return nil
	})
	set("formatISODate", func(c goja.FunctionCall) goja.Value {
		ms := c.Argument(0).ToInteger()
		return rt.ToValue(time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	})
	set("bsonsize", func(c goja.FunctionCall) goja.Value {
		o, ok := c.Argument(0).(*goja.Object)
		if !ok {
			throw("argument to bsonsize has to be an object")
		}
		d, err := h.toBSONDoc(o)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		return rt.ToValue(len(d))
	})
	set("md5", func(c goja.FunctionCall) goja.Value {
		sum := md5.Sum([]byte(c.Argument(0).String()))
		return rt.ToValue(hex.EncodeToString(sum[:]))
	})
	set("sleep", func(c goja.FunctionCall) goja.Value {
		d := time.Duration(c.Argument(0).ToFloat() * float64(time.Millisecond))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-h.ctx.Done():
			// The script stops at its next instruction.
			rt.Interrupt(h.ctx)
		}
		return goja.Undefined()
	})
	if err := rt.Set("__native", native); err != nil {
		return nil, err
	}
	if _, err := rt.RunProgram(prelude); err != nil {
		return nil, err
	}
	g := rt.GlobalObject()
	if err := g.Delete("__native"); err != nil {
		return nil, err
	}
	obj := func(name string) *goja.Object { return g.Get(name).ToObject(rt) }
	proto := func(o *goja.Object) *goja.Object { return o.Get("prototype").ToObject(rt) }
	h.long, h.int32, h.dec, h.oid = obj("NumberLong"), obj("NumberInt"), obj("NumberDecimal"), obj("ObjectId")
	h.bin, h.ts, h.code, h.dbptr = obj("BinData"), obj("Timestamp"), obj("Code"), obj("DBPointer")
	h.longP, h.intP, h.decP, h.oidP = proto(h.long), proto(h.int32), proto(h.dec), proto(h.oid)
	h.binP, h.tsP, h.codeP, h.dbptrP = proto(h.bin), proto(h.ts), proto(h.code), proto(h.dbptr)
	minF, _ := goja.AssertFunction(g.Get("MinKey"))
	maxF, _ := goja.AssertFunction(g.Get("MaxKey"))
	mk, _ := minF(goja.Undefined())
	xk, _ := maxF(goja.Undefined())
	h.minKey, h.maxKey = mk.ToObject(rt), xk.ToObject(rt)
	h.date, h.regexp = obj("Date"), obj("RegExp")
	return h, nil
}

// errTooLarge is a converted value past the BSON size limit.
func errTooLarge(n int) error {
	return mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB)", n, n)
}
