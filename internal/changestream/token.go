package changestream

// Resume tokens.
//
// A token is what mongod 7.0 puts in an event's _id and a batch's
// postBatchResumeToken: {_data: "<hex>"}, the hex (upper case, as mongod)
// of the fields of the event's position, each in an order-preserving key
// encoding (bson.AppendKey, Cairn's counterpart of mongod's KeyString), in
// mongod's order (resume_token.cpp, ResumeTokenData):
//
//	clusterTime     Timestamp  the ts of the oplog entry
//	version         int        2
//	tokenType       int        0 high-water mark, 128 event
//	txnOpIndex      long       the operation's index in an applyOps entry
//	fromInvalidate  bool       the invalidate that follows a drop/rename
//	uuid            BinData|null  the collection's UUID (null: none)
//	eventIdentifier object     {operationType, documentKey} of a CRUD event,
//	                           {operationType} of another; {} for a
//	                           high-water mark
//
// Because every field's encoding sorts as its value and the first field
// decides (ts order is commit order), comparing two tokens' _data strings
// compares their positions: the tokens are ordered as the events. A
// high-water-mark token at ts sorts before every event at ts: it stands
// for "every event before ts has been seen".

import (
	"encoding/hex"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
)

// Token types.
const (
	highWaterMark = 0
	eventToken    = 128
	tokenVersion  = 2
)

// Token is a decoded resume token.
type Token struct {
	TS             repl.Timestamp
	Type           int32 // highWaterMark or eventToken
	TxnOpIndex     int64
	FromInvalidate bool
	UUID           *[16]byte
	EventID        bson.Doc
}

// hwm returns the high-water-mark token at ts.
func hwm(ts repl.Timestamp) Token { return Token{TS: ts, Type: highWaterMark} }

// Compare orders tokens as the events they stand for.
func (t Token) Compare(u Token) int {
	switch {
	case t.TS != u.TS:
		return cmp(uint64(t.TS), uint64(u.TS))
	case t.Type != u.Type:
		return cmp(uint64(t.Type), uint64(u.Type))
	case t.TxnOpIndex != u.TxnOpIndex:
		return cmp(uint64(t.TxnOpIndex), uint64(u.TxnOpIndex))
	case t.FromInvalidate != u.FromInvalidate:
		if t.FromInvalidate {
			return 1
		}
		return -1
	}
	return 0
}

func cmp(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// value returns a single-field document's value.
func value(build func(b *bson.Builder)) bson.Value {
	var b bson.Builder
	build(&b)
	v, _ := b.Finish().Lookup("v")
	return v
}

// Data returns the token's _data string.
func (t Token) Data() string {
	var k []byte
	k = bson.AppendKey(k, value(func(b *bson.Builder) { b.AppendTimestamp("v", t.TS.T(), t.TS.I()) }), false)
	k = bson.AppendKey(k, value(func(b *bson.Builder) { b.AppendInt32("v", tokenVersion) }), false)
	k = bson.AppendKey(k, value(func(b *bson.Builder) { b.AppendInt32("v", t.Type) }), false)
	k = bson.AppendKey(k, value(func(b *bson.Builder) { b.AppendInt64("v", t.TxnOpIndex) }), false)
	k = bson.AppendKey(k, value(func(b *bson.Builder) { b.AppendBool("v", t.FromInvalidate) }), false)
	if t.UUID != nil {
		k = bson.AppendKey(k, value(func(b *bson.Builder) { b.AppendBinary("v", 4, t.UUID[:]) }), false)
	} else {
		k = bson.AppendKey(k, value(func(b *bson.Builder) { b.AppendNull("v") }), false)
	}
	ev := t.EventID
	if ev == nil {
		ev = emptyDoc
	}
	k = bson.AppendKey(k, bson.Value{Type: bson.TypeDocument, Data: ev}, false)
	return strings.ToUpper(hex.EncodeToString(k))
}

var emptyDoc = func() bson.Doc { var b bson.Builder; return b.Finish() }()

// Append appends the token as key: {_data: "<hex>"}.
func (t Token) Append(b *bson.Builder, key string) {
	b.StartDocument(key)
	b.AppendString("_data", t.Data())
	b.End()
}

// Doc returns the token as {_data: "<hex>"}.
func (t Token) Doc() bson.Doc {
	var b bson.Builder
	b.AppendString("_data", t.Data())
	return b.Finish()
}

// badToken is mongod's error for a token it cannot read.
func badToken(format string, args ...any) error {
	return mongoerr.New(mongoerr.BadValue, format, args...)
}

// DecodeToken reads a resume token ({_data: "<hex>"}).
func DecodeToken(d bson.Doc) (Token, error) {
	var t Token
	v, ok := d.Lookup("_data")
	if !ok {
		return t, badToken("resume token must contain a _data field: %s", d.String())
	}
	if v.Type != bson.TypeString {
		return t, badToken("resume token _data must be a hex string: %s", d.String())
	}
	raw, err := hex.DecodeString(v.StringValue())
	if err != nil {
		return t, badToken("resume token string was not a valid hex string: %s", v.StringValue())
	}
	next := func(want bson.Type) (bson.Value, error) {
		if len(raw) == 0 {
			return bson.Value{}, badToken("resume token is missing fields: %s", d.String())
		}
		val, rest, err := bson.DecodeKey(raw)
		if err != nil {
			return bson.Value{}, badToken("resume token could not be decoded: %s", d.String())
		}
		raw = rest
		if want != 0 && val.Type != want {
			return bson.Value{}, badToken("resume token has an unexpected field of type %s: %s", val.Type, d.String())
		}
		return val, nil
	}
	ts, err := next(bson.TypeTimestamp)
	if err != nil {
		return t, err
	}
	sec, inc := ts.Timestamp()
	t.TS = repl.MakeTimestamp(sec, inc)
	ver, err := next(0)
	if err != nil {
		return t, err
	}
	if n, ok := ver.AsInt64(); !ok || n != tokenVersion {
		return t, badToken("Invalid Resume Token: only supports version %d, got %s", tokenVersion, ver.String())
	}
	typ, err := next(0)
	if err != nil {
		return t, err
	}
	n, ok := typ.AsInt64()
	if !ok || (n != highWaterMark && n != eventToken) {
		return t, badToken("Invalid Resume Token: unknown token type %s", typ.String())
	}
	t.Type = int32(n)
	idx, err := next(0)
	if err != nil {
		return t, err
	}
	if t.TxnOpIndex, ok = idx.AsInt64(); !ok || t.TxnOpIndex < 0 {
		return t, badToken("Invalid Resume Token: txnOpIndex must be a non-negative number")
	}
	inv, err := next(bson.TypeBoolean)
	if err != nil {
		return t, err
	}
	t.FromInvalidate = inv.Boolean()
	uv, err := next(0)
	if err != nil {
		return t, err
	}
	switch uv.Type {
	case bson.TypeBinary:
		_, data := uv.Binary()
		if len(data) != 16 {
			return t, badToken("Invalid Resume Token: the UUID must have 16 bytes")
		}
		var u [16]byte
		copy(u[:], data)
		t.UUID = &u
	case bson.TypeNull:
	default:
		return t, badToken("Invalid Resume Token: unexpected UUID of type %s", uv.Type)
	}
	ev, err := next(bson.TypeDocument)
	if err != nil {
		return t, err
	}
	t.EventID = append(bson.Doc(nil), ev.Document()...)
	if len(raw) != 0 {
		return t, badToken("resume token has trailing bytes: %s", d.String())
	}
	return t, nil
}
