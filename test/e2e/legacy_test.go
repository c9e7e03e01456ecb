package e2e

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// opReply is a parsed OP_REPLY.
type opReply struct {
	flags        int32
	cursorID     int64
	startingFrom int32
	docs         []bson.Raw
}

// legacyConn speaks the pre-OP_MSG protocol, as mgo does.
type legacyConn struct {
	t  *testing.T
	nc net.Conn
	id int32
}

func legacyDial(t *testing.T, srv *cairndtest.Server) *legacyConn {
	t.Helper()
	nc, err := net.Dial("tcp", srv.URI[len("mongodb://"):strings.Index(srv.URI, "/?")])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &legacyConn{t: t, nc: nc}
}

func (c *legacyConn) send(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *legacyConn) query(ns string, skip, n int32, query bson.D, fields bson.D) opReply {
	c.t.Helper()
	c.id++
	q := &wire.Query{FullCollectionName: ns, NumberToSkip: skip, NumberToReturn: n, Query: marshal(c.t, query)}
	if fields != nil {
		q.ReturnFieldsSelector = marshal(c.t, fields)
	}
	c.send(wire.AppendQuery(nil, c.id, 0, q))
	return c.reply()
}

func (c *legacyConn) command(db string, cmd bson.D) bson.Raw {
	c.t.Helper()
	r := c.query(db+".$cmd", 0, -1, cmd, nil)
	if len(r.docs) != 1 {
		c.t.Fatalf("command %v: %d documents in the reply", cmd, len(r.docs))
	}
	return r.docs[0]
}

func (c *legacyConn) getMore(ns string, n int32, id int64) opReply {
	c.t.Helper()
	c.id++
	c.send(wire.AppendGetMore(nil, c.id, &wire.GetMore{FullCollectionName: ns, NumberToReturn: n, CursorID: id}))
	return c.reply()
}

func (c *legacyConn) reply() opReply {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var hdr [16]byte
	if _, err := readFull(c.nc, hdr[:]); err != nil {
		c.t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if op := binary.LittleEndian.Uint32(hdr[12:]); op != uint32(wire.OpReply) {
		c.t.Fatalf("reply opcode %d, want OP_REPLY", op)
	}
	if to := int32(binary.LittleEndian.Uint32(hdr[8:])); to != c.id {
		c.t.Fatalf("responseTo %d, want %d", to, c.id)
	}
	body := make([]byte, n-16)
	if _, err := readFull(c.nc, body); err != nil {
		c.t.Fatal(err)
	}
	r := opReply{
		flags:        int32(binary.LittleEndian.Uint32(body)),
		cursorID:     int64(binary.LittleEndian.Uint64(body[4:])),
		startingFrom: int32(binary.LittleEndian.Uint32(body[12:])),
	}
	count := int(binary.LittleEndian.Uint32(body[16:]))
	rest := body[20:]
	for range count {
		l := binary.LittleEndian.Uint32(rest)
		r.docs = append(r.docs, bson.Raw(rest[:l]))
		rest = rest[l:]
	}
	if len(rest) != 0 {
		c.t.Fatalf("OP_REPLY has %d bytes after its %d documents", len(rest), count)
	}
	return r
}

func ids(docs []bson.Raw) []int32 {
	var out []int32
	for _, d := range docs {
		out = append(out, d.Lookup("_id").Int32())
	}
	return out
}

func sameIDs(a []int32, b ...int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLegacyOpQuery: commands sent as OP_QUERY on <db>.$cmd are answered
// with OP_REPLY (as MongoDB up to 5.0 answered them), and the legacy find
// protocol — OP_QUERY on a collection, OP_GET_MORE, OP_KILL_CURSORS —
// works, so that mgo-based tools can talk to Cairn.
func TestLegacyOpQuery(t *testing.T) {
	srv := cairndtest.Start(t)
	c := legacyDial(t, srv)

	for _, name := range []string{"isMaster", "ismaster", "hello"} {
		if doc := c.command("admin", bson.D{{Key: name, Value: 1}}); doc.Lookup("maxWireVersion").Int32() != 21 {
			t.Errorf("OP_QUERY %s answered %v", name, doc)
		}
	}
	if doc := c.command("admin", bson.D{{Key: "getnonce", Value: 1}}); len(doc.Lookup("nonce").StringValue()) != 16 || doc.Lookup("ok").Double() != 1 {
		t.Errorf("getnonce answered %v", doc)
	}
	if doc := c.command("admin", bson.D{{Key: "serverStatus", Value: 1}}); doc.Lookup("ok").Double() != 1 || doc.Lookup("opcounters", "command").Type != bson.TypeInt64 {
		t.Errorf("serverStatus answered %.300v", doc)
	}
	// The wrapped form mongos and mgo send ({$query: cmd, $readPreference}).
	wrapped := bson.D{{Key: "$query", Value: bson.D{{Key: "ping", Value: 1}}}, {Key: "$readPreference", Value: bson.D{{Key: "mode", Value: "primary"}}}}
	if doc := c.command("admin", wrapped); doc.Lookup("ok").Double() != 1 {
		t.Errorf("wrapped ping answered %v", doc)
	}
	// Write and read commands; a command error is an ordinary ok: 0 reply.
	var docs bson.A
	for i := range 10 {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "k", Value: int32(i % 3)}, {Key: "s", Value: "x"}})
	}
	if doc := c.command("db", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}}); doc.Lookup("n").Int32() != 10 {
		t.Fatalf("insert answered %v", doc)
	}
	if doc := c.command("db", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "k", Value: 1}}}}); doc.Lookup("cursor", "firstBatch", "2", "_id").Int32() != 7 {
		t.Errorf("find command answered %v", doc)
	}
	if doc := c.command("db", bson.D{{Key: "noSuchCommand", Value: 1}}); doc.Lookup("code").Int32() != 59 {
		t.Errorf("unknown command answered %v", doc)
	}

	// Legacy find: plain filter, default batch.
	r := c.query("db.c", 0, 0, bson.D{{Key: "k", Value: 0}}, nil)
	if r.flags&wire.ReplyFlagQueryFailure != 0 || r.cursorID != 0 || !sameIDs(ids(r.docs), 0, 3, 6, 9) {
		t.Fatalf("plain find: %+v", r)
	}
	// Wrapped with $orderby, a projection, numberToSkip, and a batch of 3
	// continued with OP_GET_MORE.
	q := bson.D{{Key: "$query", Value: bson.D{}}, {Key: "$orderby", Value: bson.D{{Key: "_id", Value: -1}}}}
	r = c.query("db.c", 1, 3, q, bson.D{{Key: "s", Value: 0}})
	if r.cursorID == 0 || r.startingFrom != 0 || !sameIDs(ids(r.docs), 8, 7, 6) {
		t.Fatalf("wrapped find: %+v", r)
	}
	if _, err := r.docs[0].LookupErr("s"); err == nil {
		t.Fatalf("projection ignored: %v", r.docs[0])
	}
	id := r.cursorID
	r = c.getMore("db.c", 4, id)
	if r.cursorID != id || r.startingFrom != 3 || !sameIDs(ids(r.docs), 5, 4, 3, 2) {
		t.Fatalf("OP_GET_MORE: %+v", r)
	}
	// OP_KILL_CURSORS closes it: the next OP_GET_MORE finds no cursor.
	c.send(wire.AppendKillCursors(nil, 99, id))
	r = c.getMore("db.c", 4, id)
	if r.flags&wire.ReplyFlagCursorNotFound == 0 || len(r.docs) != 0 {
		t.Fatalf("OP_GET_MORE after OP_KILL_CURSORS: %+v", r)
	}
	// A negative numberToReturn is a limit in one batch (and 1 means -1).
	for _, n := range []int32{-2, 1} {
		r = c.query("db.c", 0, n, bson.D{}, nil)
		if r.cursorID != 0 || len(r.docs) != int(max(n, -n)) {
			t.Fatalf("numberToReturn %d: %+v", n, r)
		}
	}
	// A bad filter is a query failure with $err and code.
	r = c.query("db.c", 0, 0, bson.D{{Key: "k", Value: bson.D{{Key: "$bogus", Value: 1}}}}, nil)
	if r.flags&wire.ReplyFlagQueryFailure == 0 || len(r.docs) != 1 || r.docs[0].Lookup("code").Int32() != 2 || r.docs[0].Lookup("$err").StringValue() == "" {
		t.Fatalf("bad filter: %+v", r)
	}
}

func readFull(nc net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := nc.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
