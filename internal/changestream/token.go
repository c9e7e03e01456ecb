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
	"encoding/binary"
	"encoding/hex"

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

// Data returns the token's _data string.
func (t Token) Data() string {
	var buf [96]byte
	k := t.appendKey(buf[:0])
	out := make([]byte, 2*len(k))
	for i, c := range k {
		out[2*i], out[2*i+1] = upperHex[c>>4], upperHex[c&15]
	}
	return string(out)
}

const upperHex = "0123456789ABCDEF"

// appendKey appends the token's fields in their key encoding.
func (t Token) appendKey(k []byte) []byte {
	var scratch [16]byte
	le := func(n int) []byte { return scratch[:n] }
	binary.LittleEndian.PutUint32(scratch[:], t.TS.I())
	binary.LittleEndian.PutUint32(scratch[4:], t.TS.T())
	k = bson.AppendKey(k, bson.Value{Type: bson.TypeTimestamp, Data: le(8)}, false)
	binary.LittleEndian.PutUint32(scratch[:], tokenVersion)
	k = bson.AppendKey(k, bson.Value{Type: bson.TypeInt32, Data: le(4)}, false)
	binary.LittleEndian.PutUint32(scratch[:], uint32(t.Type))
	k = bson.AppendKey(k, bson.Value{Type: bson.TypeInt32, Data: le(4)}, false)
	binary.LittleEndian.PutUint64(scratch[:], uint64(t.TxnOpIndex))
	k = bson.AppendKey(k, bson.Value{Type: bson.TypeInt64, Data: le(8)}, false)
	scratch[0] = 0
	if t.FromInvalidate {
		scratch[0] = 1
	}
	k = bson.AppendKey(k, bson.Value{Type: bson.TypeBoolean, Data: le(1)}, false)
	if t.UUID != nil {
		var bin [21]byte
		binary.LittleEndian.PutUint32(bin[:], 16)
		bin[4] = 4
		copy(bin[5:], t.UUID[:])
		k = bson.AppendKey(k, bson.Value{Type: bson.TypeBinary, Data: bin[:]}, false)
	} else {
		k = bson.AppendKey(k, bson.Value{Type: bson.TypeNull}, false)
	}
	ev := t.EventID
	if ev == nil {
		ev = emptyDoc
	}
	return bson.AppendKey(k, bson.Value{Type: bson.TypeDocument, Data: ev}, false)
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
