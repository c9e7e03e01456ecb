package e2e

import (
	"bytes"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// rawConn speaks the wire protocol directly, to send what drivers never do.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *wire.Reader
	id int32
}

func rawDial(t *testing.T, srv *cairndtest.Server) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", srv.URI[len("mongodb://"):strings.Index(srv.URI, "/?")])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, r: wire.NewReader(nc, 0)}
}

func (c *rawConn) send(b []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) read() bson.Raw {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	m, err := c.r.ReadMessage()
	if err != nil {
		c.t.Fatalf("reading reply: %v", err)
	}
	if m.Msg != nil {
		return bson.Raw(bytes.Clone(m.Msg.Body))
	}
	c.t.Fatalf("unexpected reply opcode %v", m.Header.OpCode)
	return nil
}

func (c *rawConn) command(body []byte, seqs ...wire.Sequence) bson.Raw {
	c.t.Helper()
	c.id++
	c.send(wire.AppendMsgSections(nil, c.id, 0, 0, body, seqs...))
	return c.read()
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func codeOf(r bson.Raw) int32 {
	v, err := r.LookupErr("code")
	if err != nil {
		return 0
	}
	return v.Int32()
}

func writeErrCode(r bson.Raw) int32 {
	v, err := r.LookupErr("writeErrors", "0", "code")
	if err != nil {
		return 0
	}
	return v.Int32()
}

func TestBadInputKeepsServing(t *testing.T) {
	srv := cairndtest.Start(t)
	c := rawDial(t, srv)
	ping := marshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})

	// Malformed BSON body: an error reply, and the connection carries on.
	bad := append([]byte{}, ping...)
	bad[len(bad)-1] = 7 // no terminator
	if r := c.command(bad); codeOf(r) == 0 {
		t.Fatalf("malformed body answered %v", r)
	} else {
		logAnswer(t, "malformed BSON", r)
	}
	if r := c.command(ping); r.Lookup("ok").Double() != 1 {
		t.Fatalf("ping after malformed body: %v", r)
	}

	// A document over 16 MiB: BadValue "object to insert too large".
	big := marshal(t, bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: strings.Repeat("x", 16*1024*1024)}})
	ins := marshal(t, bson.D{{Key: "insert", Value: "big"}, {Key: "$db", Value: "lim"}})
	r := c.command(ins, wire.Sequence{Identifier: "documents", Docs: [][]byte{big}})
	if writeErrCode(r) != 2 || !strings.Contains(r.String(), "object to insert too large") {
		t.Fatalf("16 MiB insert answered %v", truncate(r.String()))
	}
	logAnswer(t, "document over 16 MiB", r)

	// A command body over the internal limit: BSONObjectTooLarge.
	huge := marshal(t, bson.D{{Key: "insert", Value: "big"}, {Key: "documents", Value: bson.A{bson.D{{Key: "s", Value: strings.Repeat("y", 17*1024*1024)}}}}, {Key: "$db", Value: "lim"}})
	if r := c.command(huge); codeOf(r) != 10334 {
		t.Fatalf("oversized body answered %v", truncate(r.String()))
	} else {
		logAnswer(t, "command body over 16 MiB + 16 KiB", r)
	}

	// Nesting over 100 levels.
	var deep any = bson.D{{Key: "x", Value: 1}}
	for i := 0; i < 120; i++ {
		deep = bson.D{{Key: "a", Value: deep}}
	}
	r = c.command(ins, wire.Sequence{Identifier: "documents", Docs: [][]byte{marshal(t, deep)}})
	if writeErrCode(r) == 0 {
		t.Fatalf("deep insert answered %v", r)
	}
	logAnswer(t, "document nested 121 levels", r)

	// More than 100,000 statements.
	small := marshal(t, bson.D{{Key: "x", Value: 1}})
	docs := make([][]byte, 100001)
	for i := range docs {
		docs[i] = small
	}
	if r := c.command(ins, wire.Sequence{Identifier: "documents", Docs: docs}); codeOf(r) != 16 {
		t.Fatalf("oversized batch answered %v", truncate(r.String()))
	} else {
		logAnswer(t, "100,001 statements", r)
	}

	// Unknown or misused operators: the command fails, nothing else.
	for _, tc := range []struct {
		class string
		cmd   bson.D
		code  int32
	}{
		{"unknown query operator", bson.D{{Key: "find", Value: "big"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$bogus", Value: 1}}}}}}, 2},
		{"unknown top-level operator", bson.D{{Key: "find", Value: "big"}, {Key: "filter", Value: bson.D{{Key: "$bogus", Value: 1}}}}, 2},
		{"unknown update operator", bson.D{{Key: "update", Value: "big"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$bogus", Value: bson.D{{Key: "a", Value: 1}}}}}}}}}, 9},
		{"unknown pipeline stage", bson.D{{Key: "aggregate", Value: "big"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$bogus", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}}, 40324},
		{"unknown expression operator", bson.D{{Key: "aggregate", Value: "big"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$bogus", Value: 1}}}}}}}}, {Key: "cursor", Value: bson.D{}}}, 168},
	} {
		r := c.command(marshal(t, append(tc.cmd, bson.E{Key: "$db", Value: "lim"})))
		if got := max(codeOf(r), writeErrCode(r)); got != tc.code {
			t.Errorf("%s answered %v, want code %d", tc.class, r, tc.code)
		}
		logAnswer(t, tc.class, r)
	}

	// Bad wire messages: an OP_MSG with a required flag bit Cairn does not
	// know, and one with an unknown section kind, are answered with an
	// error; the connection carries on.
	for _, tc := range []struct {
		class string
		msg   func() []byte
		code  int32
		name  string
	}{
		{"OP_MSG with an unknown required flag", func() []byte { return wire.AppendMsg(nil, 90, 0, 1<<4, ping) }, 223, "IllegalOpMsgFlag"},
		{"OP_MSG with an unknown section kind", func() []byte {
			m := wire.AppendMsg(nil, 91, 0, 0, ping)
			m[20] = 7 // the body section's kind byte
			return m
		}, 40432, "Location40432"},
	} {
		c.send(tc.msg())
		r := c.read()
		if name, _ := r.Lookup("codeName").StringValueOK(); codeOf(r) != tc.code || name != tc.name {
			t.Errorf("%s answered %v, want code %d", tc.class, r, tc.code)
		}
		logAnswer(t, tc.class, r)
		if r := c.command(ping); r.Lookup("ok").Double() != 1 {
			t.Fatalf("ping after %s: %v", tc.class, r)
		}
	}

	// Nothing was stored by any of it.
	cnt := marshal(t, bson.D{{Key: "count", Value: "big"}, {Key: "$db", Value: "lim"}})
	if r := c.command(cnt); r.Lookup("n").Int32() != 0 {
		t.Fatalf("count after rejected inserts: %v", r)
	}

	// A message whose length is over 48,000,000 bytes: the connection is
	// closed, the server keeps serving others.
	var hdr [16]byte
	binary.LittleEndian.PutUint32(hdr[0:], 48000001)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(wire.OpMsg))
	c.send(hdr[:])
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.r.ReadMessage(); err == nil {
		t.Fatal("server answered an oversized message instead of closing")
	}
	c2 := rawDial(t, srv)
	if r := c2.command(ping); r.Lookup("ok").Double() != 1 {
		t.Fatalf("new connection after oversized message: %v", r)
	}
}

// logAnswer records the error a class of bad input got (the figures the
// issue's closing note reports).
func logAnswer(t *testing.T, class string, r bson.Raw) {
	t.Helper()
	if we, err := r.LookupErr("writeErrors", "0"); err == nil {
		r = we.Document()
	}
	code, _ := r.Lookup("code").AsInt64OK()
	name, _ := r.Lookup("codeName").StringValueOK()
	msg, _ := r.Lookup("errmsg").StringValueOK()
	t.Logf("%s: %d %s %q", class, code, name, truncate(msg))
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

func TestCompressionAndUnacknowledged(t *testing.T) {
	srv := cairndtest.Start(t)
	for _, comp := range []string{"snappy", "zstd", "zlib"} {
		client := dial(t, srv.URI, options.Client().SetCompressors([]string{comp}))
		coll := client.Database("comp").Collection(comp)
		doc := bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: strings.Repeat("compress me ", 1000)}}
		if _, err := coll.InsertOne(ctx(t), doc); err != nil {
			t.Fatalf("%s: %v", comp, err)
		}
		var got bson.D
		if err := coll.FindOne(ctx(t), bson.D{}).Decode(&got); err != nil || len(got) != 2 {
			t.Fatalf("%s: find = %v, %v", comp, got, err)
		}
	}
	// w: 0 writes send no reply but are applied.
	client := dial(t, srv.URI)
	coll := client.Database("w0").Collection("c", options.Collection().SetWriteConcern(writeconcern.Unacknowledged()))
	for i := 0; i < 10; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	acked := client.Database("w0").Collection("c")
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := acked.CountDocuments(ctx(t), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		if n == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("w:0 inserts visible: %d of 10", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	srv, err := cairndtest.StartDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, srv.URI)
	coll := client.Database("persist").Collection("c")
	for i := 0; i < 100; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "v", Value: i * i}}); err != nil {
			t.Fatal(err)
		}
	}
	client.Disconnect(ctx(t))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	srv, err = cairndtest.StartDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Registered before dial's cleanup, so it runs after the client has
	// disconnected (cleanups run last-in first-out).
	t.Cleanup(func() { srv.Stop() })
	client = dial(t, srv.URI)
	n, err := client.Database("persist").Collection("c").CountDocuments(ctx(t), bson.D{{Key: "v", Value: bson.D{{Key: "$gte", Value: 2500}}}})
	if err != nil || n != 50 {
		t.Fatalf("after restart: %d, %v", n, err)
	}
}
