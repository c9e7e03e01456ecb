package e2e

import (
	"bytes"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// TestExhaustGetMore: a getMore sent with exhaustAllowed (pymongo's
// CursorType.EXHAUST) streams every remaining batch, each reply flagged
// moreToCome and answering the server's previous reply, the last one
// (cursor id 0) without the flag; the connection then serves commands as
// before. The Go driver does not use exhaust for getMore, so the test
// speaks OP_MSG itself.
func TestExhaustGetMore(t *testing.T) {
	srv := cairndtest.Start(t)
	client := dial(t, srv.URI)
	coll := client.Database("ex").Collection("c")
	docs := make([]any, 25)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}}
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	c := rawDial(t, srv)
	first := c.command(marshal(t, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 4}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "$db", Value: "ex"}}))
	id := first.Lookup("cursor", "id").Int64()
	if id == 0 {
		t.Fatalf("find closed its cursor: %v", first)
	}
	got := 4
	c.id++
	req := c.id
	c.send(wire.AppendMsg(nil, c.id, 0, wire.FlagExhaustAllowed, marshal(t, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 4}, {Key: "$db", Value: "ex"}})))
	prev := req
	replies := 0
	for {
		c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		m, err := c.r.ReadMessage()
		if err != nil {
			t.Fatalf("exhaust reply %d: %v", replies, err)
		}
		replies++
		if m.Msg == nil {
			t.Fatalf("reply %d is not OP_MSG", replies)
		}
		if m.Header.ResponseTo != prev {
			t.Fatalf("reply %d answers %d, want %d (the previous message)", replies, m.Header.ResponseTo, prev)
		}
		prev = m.Header.RequestID
		body := bson.Raw(bytes.Clone(m.Msg.Body))
		if ok := body.Lookup("ok").Double(); ok != 1 {
			t.Fatalf("reply %d: %v", replies, body)
		}
		batch, _ := body.Lookup("cursor", "nextBatch").Array().Values()
		for j, v := range batch {
			if want := int32(got + j); v.Document().Lookup("_id").Int32() != want {
				t.Fatalf("reply %d document %d is %v, want _id %d", replies, j, v, want)
			}
		}
		got += len(batch)
		more := m.Msg.Flags&wire.FlagMoreToCome != 0
		cid := body.Lookup("cursor", "id").Int64()
		if more != (cid != 0) {
			t.Fatalf("reply %d: moreToCome %v with cursor id %d", replies, more, cid)
		}
		if !more {
			break
		}
		if replies > 20 {
			t.Fatal("the stream does not end")
		}
	}
	if got != 25 || replies != 6 {
		t.Fatalf("streamed %d documents in %d replies, want 25 in 6 (batches of 4)", got, replies)
	}
	// The connection serves ordinary commands again.
	if r := c.command(marshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})); r.Lookup("ok").Double() != 1 {
		t.Fatalf("ping after the stream: %v", r)
	}
	// An exhaust getMore of an unknown cursor answers its error once,
	// without moreToCome.
	c.id++
	c.send(wire.AppendMsg(nil, c.id, 0, wire.FlagExhaustAllowed, marshal(t, bson.D{{Key: "getMore", Value: int64(12345)}, {Key: "collection", Value: "c"}, {Key: "$db", Value: "ex"}})))
	c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	m, err := c.r.ReadMessage()
	if err != nil || m.Msg == nil || m.Msg.Flags&wire.FlagMoreToCome != 0 || codeOf(bson.Raw(m.Msg.Body)) != 43 {
		t.Fatalf("exhaust getMore of a missing cursor: %v %+v", err, m)
	}
}
