package server

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/wire"
)

// Exhaust cursors. A getMore sent with OP_MSG's exhaustAllowed flag (as
// pymongo's CursorType.EXHAUST sends it) asks the server to stream the
// cursor: mongod answers the getMore and, while the cursor stays open,
// runs the same getMore again on its own, each reply flagged moreToCome and
// answering the server's previous reply (its responseTo is that reply's
// requestID). The stream ends with a reply without moreToCome: the last
// batch (cursor id 0), an error, or — Cairn's rule, so that a tailable
// cursor with nothing new does not spin — an empty batch, after which the
// client sends its next getMore itself. Each batch is a full getMore
// (access checks, maxTimeMS, killOp, awaitData waits), run through the
// same path as a client's.

// isGetMore reports whether body is a getMore command.
func isGetMore(body []byte) bool {
	it := bson.Doc(body).Iter()
	return it.Next() && it.Element().Key == "getMore"
}

// streamGetMore answers an exhaust getMore and keeps streaming its batches.
func (c *conn) streamGetMore(msg *wire.Message) bool {
	m := msg.Msg
	body := append([]byte(nil), m.Body...)
	seqs := m.Sequences
	responseTo := msg.Header.RequestID
	for {
		reply, _ := c.run(body, seqs)
		if c.drop {
			return false
		}
		more := exhaustContinues(reply)
		var flags uint32
		if more {
			flags = wire.FlagMoreToCome
		}
		if !c.writeReplyFlags(responseTo, msg.Compressor, reply, false, flags) {
			return false
		}
		if !more {
			return true
		}
		select {
		case <-c.s.closed:
			return false
		default:
		}
		responseTo = c.nextID // the next reply answers our own
	}
}

// exhaustContinues reports whether a getMore reply leaves more to stream:
// ok, a cursor still open, and a batch that was not empty.
func exhaustContinues(reply bson.Doc) bool {
	if ok, _ := reply.Lookup("ok"); !ok.Truthy() {
		return false
	}
	cur, found := reply.Lookup("cursor")
	if !found || cur.Type != bson.TypeDocument {
		return false
	}
	id, _ := cur.Document().Lookup("id")
	if n, _ := id.AsInt64(); n == 0 {
		return false
	}
	batch, _ := cur.Document().Lookup("nextBatch")
	return batch.Type == bson.TypeArray && len(batch.Document()) > 5
}
