package server

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/command"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/wire"
)

// Legacy opcodes, as MongoDB up to 5.0 answered them, for drivers and tools
// that predate OP_MSG (mgo and the programs built on it):
//
//   - OP_QUERY on <db>.$cmd runs any command and answers with OP_REPLY;
//     getnonce, which MongoDB 3.x answered for MONGODB-CR clients, is
//     answered with a random nonce.
//   - OP_QUERY on a collection is a find (the filter plain or wrapped as
//     {$query, $orderby, $hint, ...}), with numberToSkip, numberToReturn
//     and the returnFieldsSelector projection; OP_GET_MORE continues its
//     cursor and OP_KILL_CURSORS closes cursors.
//
// MongoDB 6.0+ refuses all but the hello handshake with code 352; Cairn
// keeps answering (docs/compatibility.md).

// legacyPositions remembers, per cursor opened by OP_QUERY, how many
// documents it has returned (OP_REPLY's startingFrom).
type legacyPositions map[int64]int32

// handleQuery answers an OP_QUERY with OP_REPLY.
func (c *conn) handleQuery(msg *wire.Message) bool {
	q := msg.Query
	body := bson.Doc(q.Query)
	if err := bson.Validate(body, maxMessageDepth); err != nil {
		return c.writeReply(msg.Header.RequestID, msg.Compressor, command.ErrorReply(invalidBSON(err)), true)
	}
	db, coll, _ := cutNS(q.FullCollectionName)
	switch {
	case coll == "$cmd":
		return c.legacyCommand(msg, db, unwrapQuery(body))
	case coll == "$cmd.sys.inprog":
		return c.legacyCommand(msg, "admin", withFirst("currentOp", 1, unwrapQuery(body)))
	case coll == "$cmd.sys.killop":
		return c.legacyCommand(msg, "admin", withFirst("killOp", 1, unwrapQuery(body)))
	case strings.HasPrefix(coll, "$cmd"):
		return c.queryFailure(msg, mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace for OP_QUERY: %s", q.FullCollectionName))
	}
	return c.legacyFind(msg, db, coll, body)
}

// unwrapQuery returns the query of a wrapped OP_QUERY ({$query: {...},
// $readPreference: ...} or {query: {...}, ...}), else the document itself.
func unwrapQuery(body bson.Doc) bson.Doc {
	it := body.Iter()
	if it.Next() {
		e := it.Element()
		if (e.Key == "$query" || e.Key == "query") && e.Value.Type == bson.TypeDocument {
			return e.Value.Document()
		}
	}
	return body
}

// withFirst returns d with name: n as its first field.
func withFirst(name string, n int32, d bson.Doc) bson.Doc {
	var b bson.Builder
	b.AppendInt32(name, n)
	it := d.Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
	return b.Finish()
}

// legacyCommand runs a command sent as OP_QUERY on db.$cmd.
func (c *conn) legacyCommand(msg *wire.Message, db string, body bson.Doc) bool {
	name := ""
	if it := body.Iter(); it.Next() {
		name = it.Element().Key
	}
	if name == "getnonce" {
		var nonce [8]byte
		_, _ = rand.Read(nonce[:])
		var b bson.Builder
		b.AppendString("nonce", hex.EncodeToString(nonce[:]))
		b.AppendDouble("ok", 1)
		return c.writeReply(msg.Header.RequestID, msg.Compressor, b.Finish(), true)
	}
	// Rebuild the command with $db, as an OP_MSG would carry it.
	var b bson.Builder
	it := body.Iter()
	for it.Next() {
		if it.Element().Key != "$db" {
			b.AppendElement(it.Element())
		}
	}
	b.AppendString("$db", db)
	reply, _ := c.run(b.Finish(), nil)
	if c.drop {
		return false
	}
	return c.writeReply(msg.Header.RequestID, msg.Compressor, reply, true)
}

// legacyFindModifiers maps the $-modifiers of a wrapped OP_QUERY to find
// command fields (nil: accepted and ignored).
var legacyFindModifiers = map[string]string{
	"$orderby": "sort", "orderby": "sort", "$hint": "hint", "$comment": "comment", "$maxTimeMS": "maxTimeMS",
	"$min": "min", "$max": "max", "$returnKey": "returnKey", "$showDiskLoc": "showRecordId",
	"$readPreference": "", "$snapshot": "", "$maxScan": "",
}

// legacyFind runs an OP_QUERY on a collection as a find command and
// answers with the first batch.
func (c *conn) legacyFind(msg *wire.Message, db, coll string, body bson.Doc) bool {
	q := msg.Query
	var b bson.Builder
	b.AppendString("find", coll)
	filter, wrapped := body, false
	if it := body.Iter(); it.Next() {
		e := it.Element()
		if (e.Key == "$query" || e.Key == "query") && e.Value.Type == bson.TypeDocument {
			filter, wrapped = e.Value.Document(), true
		}
	}
	b.AppendDocument("filter", filter)
	if wrapped {
		it := body.Iter()
		it.Next()
		for it.Next() {
			e := it.Element()
			field, ok := legacyFindModifiers[e.Key]
			switch {
			case e.Key == "$explain":
				return c.queryFailure(msg, mongoerr.New(mongoerr.BadValue, "$explain in a legacy OP_QUERY is not supported by Cairn; run the explain command"))
			case !ok:
				return c.queryFailure(msg, mongoerr.New(mongoerr.BadValue, "unknown legacy query modifier %s", e.Key))
			case field != "":
				b.AppendValue(field, e.Value)
			}
		}
	}
	if len(q.ReturnFieldsSelector) > 0 {
		proj := bson.Doc(q.ReturnFieldsSelector)
		if err := bson.Validate(proj, maxMessageDepth); err != nil {
			return c.queryFailure(msg, invalidBSON(err))
		}
		b.AppendDocument("projection", proj)
	}
	if q.NumberToSkip > 0 {
		b.AppendInt64("skip", int64(q.NumberToSkip))
	}
	switch n := q.NumberToReturn; {
	case n < 0 || n == 1: // a single batch of at most |n| documents
		b.AppendInt64("limit", int64(max(-n, n)))
		b.AppendBool("singleBatch", true)
	case n > 1:
		b.AppendInt64("batchSize", int64(n))
	}
	if q.Flags&wire.QueryFlagTailableCursor != 0 {
		b.AppendBool("tailable", true)
	}
	if q.Flags&wire.QueryFlagAwaitData != 0 {
		b.AppendBool("awaitData", true)
	}
	if q.Flags&wire.QueryFlagNoCursorTimeout != 0 {
		b.AppendBool("noCursorTimeout", true)
	}
	if q.Flags&wire.QueryFlagPartial != 0 {
		b.AppendBool("allowPartialResults", true)
	}
	b.AppendString("$db", db)
	reply, _ := c.run(b.Finish(), nil)
	if c.drop {
		return false
	}
	return c.cursorReply(msg, reply, "firstBatch", 0)
}

// handleGetMore continues a cursor for OP_GET_MORE.
func (c *conn) handleGetMore(msg *wire.Message) bool {
	g := msg.GetMore
	db, coll, _ := cutNS(g.FullCollectionName)
	var b bson.Builder
	b.AppendInt64("getMore", g.CursorID)
	b.AppendString("collection", coll)
	if n := g.NumberToReturn; n != 0 {
		b.AppendInt64("batchSize", int64(max(n, -n)))
	}
	b.AppendString("$db", db)
	reply, _ := c.run(b.Finish(), nil)
	if c.drop {
		return false
	}
	if code, ok := reply.Lookup("code"); ok {
		if n, _ := code.AsInt64(); n == int64(mongoerr.CursorNotFound) {
			delete(c.legacyPos, g.CursorID)
			c.nextID++
			c.out = wire.AppendReply(c.out[:0], c.nextID, msg.Header.RequestID, wire.ReplyFlagCursorNotFound, 0, 0)
			return c.send(msg.Compressor)
		}
	}
	return c.cursorReply(msg, reply, "nextBatch", g.CursorID)
}

// handleKillCursors closes cursors for OP_KILL_CURSORS (no reply). With
// access control on, an unauthenticated connection may not (killCursors
// needs an authenticated user), and a user kills only the cursors it may
// (its own, or any with killAnyCursor); the others are skipped.
func (c *conn) handleKillCursors(msg *wire.Message) {
	if c.s.env.Auth.Enabled() && !c.info.Auth.Authenticated() {
		return
	}
	for _, id := range msg.KillCursors.CursorIDs {
		c.s.env.KillCursorFor(&c.info, id)
		delete(c.legacyPos, id)
	}
}

// cursorReply turns a find or getMore reply into an OP_REPLY carrying the
// batch's documents, the cursor id and the position of the batch.
func (c *conn) cursorReply(msg *wire.Message, reply bson.Doc, batchField string, prevID int64) bool {
	if ok, _ := reply.Lookup("ok"); !ok.Truthy() {
		return c.queryFailureDoc(msg, reply)
	}
	cur, _ := reply.Lookup("cursor")
	var id int64
	var docs [][]byte
	if cur.Type == bson.TypeDocument {
		if v, ok := cur.Document().Lookup("id"); ok {
			id, _ = v.AsInt64()
		}
		if batch, ok := cur.Document().Lookup(batchField); ok && batch.Type == bson.TypeArray {
			it := batch.Document().Iter()
			for it.Next() {
				docs = append(docs, it.Element().Value.Data)
			}
		}
	}
	start := c.legacyPos[prevID]
	delete(c.legacyPos, prevID)
	if id != 0 {
		if c.legacyPos == nil {
			c.legacyPos = legacyPositions{}
		}
		c.legacyPos[id] = start + int32(len(docs))
	}
	c.nextID++
	c.out = wire.AppendReply(c.out[:0], c.nextID, msg.Header.RequestID, wire.ReplyFlagAwaitCapable, id, start, docs...)
	return c.send(msg.Compressor)
}

// queryFailure answers a failed legacy query: OP_REPLY with the
// QueryFailure flag and {$err, code}.
func (c *conn) queryFailure(msg *wire.Message, err error) bool {
	return c.queryFailureDoc(msg, command.ErrorReply(err))
}

func (c *conn) queryFailureDoc(msg *wire.Message, reply bson.Doc) bool {
	var b bson.Builder
	if m, ok := reply.Lookup("errmsg"); ok {
		b.AppendString("$err", m.StringValue())
	}
	if code, ok := reply.Lookup("code"); ok {
		b.AppendValue("code", code)
	}
	c.nextID++
	c.out = wire.AppendReply(c.out[:0], c.nextID, msg.Header.RequestID, wire.ReplyFlagQueryFailure, 0, 0, b.Finish())
	return c.send(msg.Compressor)
}
