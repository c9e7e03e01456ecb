package changestream

// Events from oplog entries. An entry yields at most two events (a drop or
// rename of a watched collection, or a watched database's drop, is
// followed by an invalidate); a transaction's applyOps entry yields one
// event per operation, in the operation's order, each with the entry's
// lsid and txnNumber and its own txnOpIndex in its token. Entries the
// stream cannot use are rejected on their raw fields (ns, op, the
// command's name, documentKey._id) before any event is built: the scope
// and the pipeline's leading $match on operationType and documentKey._id
// are pushed down to the entries.

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// op is one operation of an entry: the entry itself or one operation of
// its applyOps.
type op struct {
	ts    repl.Timestamp
	index int64
	wall  bson.Value
	lsid  bson.Value // set for a transaction's operations
	txn   bson.Value
	kind  byte
	ns    string
	ui    *[16]byte
	o, o2 bson.Doc
}

// wallMillis is the operation's wall time in milliseconds since the epoch
// (0: the entry has none).
func wallMillis(o *op) int64 {
	if o.wall.Type != bson.TypeDateTime {
		return 0
	}
	return o.wall.DateTime()
}

// readOp reads the fields of an entry or an applyOps operation.
func readOp(d bson.Doc, o *op) {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "op":
			if e.Value.Type == bson.TypeString {
				if s := e.Value.StringValue(); len(s) == 1 {
					o.kind = s[0]
				}
			}
		case "ns":
			if e.Value.Type == bson.TypeString {
				o.ns = e.Value.StringValue()
			}
		case "ui":
			if e.Value.Type == bson.TypeBinary {
				if _, data := e.Value.Binary(); len(data) == 16 {
					var u [16]byte
					copy(u[:], data)
					o.ui = &u
				}
			}
		case "o":
			if e.Value.Type == bson.TypeDocument {
				o.o = e.Value.Document()
			}
		case "o2":
			if e.Value.Type == bson.TypeDocument {
				o.o2 = e.Value.Document()
			}
		case "wall":
			o.wall = e.Value
		}
	}
}

func splitNS(ns string) (db, coll string) {
	if i := strings.IndexByte(ns, '.'); i >= 0 {
		return ns[:i], ns[i+1:]
	}
	return ns, ""
}

func firstElement(d bson.Doc) (bson.Element, bool) {
	it := d.Iter()
	if !it.Next() {
		return bson.Element{}, false
	}
	return it.Element(), true
}

// inScope reports whether the stream sees changes to db.coll.
func (s *Stream) inScope(db, coll string) bool {
	if strings.HasPrefix(coll, "system.") {
		return false
	}
	switch {
	case s.cluster:
		return db != "admin" && db != "config" && db != "local"
	case s.coll == "":
		return db == s.db
	}
	return db == s.db && coll == s.coll
}

// kindOf returns the event's operationType and the namespace it is about
// ("" when the operation yields no event; expanded: showExpandedEvents).
func kindOf(o *op, expanded bool) (opType, db, coll string) {
	switch o.kind {
	case oplog.OpInsert, oplog.OpDelete, oplog.OpUpdate:
		db, coll = splitNS(o.ns)
		switch o.kind {
		case oplog.OpInsert:
			opType = "insert"
		case oplog.OpDelete:
			opType = "delete"
		default:
			opType = "replace"
			if v, ok := o.o.Lookup("$v"); ok {
				if n, _ := v.AsInt64(); n == 2 {
					opType = "update"
				}
			}
		}
		return opType, db, coll
	case oplog.OpCommand:
	default:
		return "", "", ""
	}
	db, _ = splitNS(o.ns)
	first, ok := firstElement(o.o)
	if !ok {
		return "", "", ""
	}
	str := func() string {
		if first.Value.Type == bson.TypeString {
			return first.Value.StringValue()
		}
		return ""
	}
	switch first.Key {
	case "drop":
		return "drop", db, str()
	case "renameCollection":
		db, coll = splitNS(str())
		return "rename", db, coll
	case "dropDatabase":
		return "dropDatabase", db, ""
	}
	if !expanded {
		return "", "", ""
	}
	switch first.Key {
	case "create":
		return "create", db, str()
	case "createIndexes", "commitIndexBuild":
		return "createIndexes", db, str()
	case "dropIndexes":
		return "dropIndexes", db, str()
	case "collMod":
		return "modify", db, str()
	}
	return "", "", ""
}

// emitFn receives an event (with its token); false stops the scan. The
// event is only valid during the call.
type emitFn func(ev *builtEvent) (bool, error)

// shares reports whether the stream's events depend on the entry alone
// (no updateLookup, no images), so that it can use the hub's shared
// event documents.
func (s *Stream) shares() bool {
	return s.spec.FullDocument == FullDefault && s.spec.FullDocumentBeforeChange == BeforeOff
}

// event returns the event of the entry's operation i: the shared one
// when the stream shares and the entry is cached (built now by the first
// stream that needs it), or one built into the stream's own builder.
func (s *Stream) event(tx *kv.Tx, e *entry, i, v int, opType, db, coll string) (*builtEvent, error) {
	o := &e.ops[i]
	tok := Token{TS: o.ts, Type: eventToken, TxnOpIndex: o.index, UUID: o.ui}
	if e.events[v] == nil || !s.shares() {
		doc, err := s.buildEvent(&s.b, tx, o, opType, db, coll, &tok)
		if err != nil {
			return nil, err
		}
		s.own = builtEvent{tok: tok, doc: doc, wall: wallMillis(o)}
		return &s.own, nil
	}
	slot := &e.events[v][i]
	if be := slot.Load(); be != nil {
		return be, nil
	}
	var b bson.Builder
	doc, err := s.buildEvent(&b, tx, o, opType, db, coll, &tok)
	if err != nil {
		return nil, err
	}
	be := &builtEvent{tok: tok, doc: doc, shared: true, wall: wallMillis(o)}
	if id, ok := doc.Lookup("_id"); ok && id.Type == bson.TypeDocument {
		be.tokDoc = id.Document()
	}
	if s.hub != nil {
		s.hub.Builds.Add(1)
	}
	if !slot.CompareAndSwap(nil, be) {
		return slot.Load(), nil
	}
	return be, nil
}

// entryEvents derives the events of entry e, in order.
func (s *Stream) entryEvents(tx *kv.Tx, e *entry, out emitFn) (bool, error) {
	for i := range e.ops {
		if ok, err := s.opEvents(tx, e, i, out); !ok || err != nil {
			return ok, err
		}
	}
	return true, nil
}

// variant is the stream's index into an entry's kinds and events.
func (s *Stream) variant() int {
	if s.spec.ShowExpandedEvents {
		return 1
	}
	return 0
}

// opEvents derives the events of the entry's operation i.
func (s *Stream) opEvents(tx *kv.Tx, e *entry, i int, out emitFn) (bool, error) {
	o := &e.ops[i]
	v := s.variant()
	k := e.kinds[v][i]
	opType, db, coll := k.opType, k.db, k.coll
	if opType == "" {
		return true, nil
	}
	invalidates := false
	switch opType {
	case "dropDatabase":
		if s.cluster || s.coll != "" || db != s.db {
			if !s.cluster || !s.inScope(db, "") {
				return true, nil
			}
		} else {
			invalidates = true
		}
	default:
		if !s.inScope(db, coll) {
			return true, nil
		}
		invalidates = s.coll != "" && !s.cluster && (opType == "drop" || opType == "rename")
	}
	if s.ops != nil && !s.ops[opType] {
		// The pipeline's $match would drop the event; an invalidate
		// still ends the stream.
		if !invalidates {
			return true, nil
		}
	} else {
		if s.docID != nil && (opType == "insert" || opType == "update" || opType == "replace" || opType == "delete") {
			key := o.o2
			if o.kind == oplog.OpDelete {
				key = o.o
			}
			if id, ok := key.Lookup("_id"); !ok || bson.Compare(id, *s.docID) != 0 {
				return true, nil
			}
		}
		be, err := s.event(tx, e, i, v, opType, db, coll)
		if err != nil {
			return false, err
		}
		if ok, err := out(be); !ok || err != nil {
			return ok, err
		}
	}
	if invalidates {
		tok := Token{TS: o.ts, Type: eventToken, TxnOpIndex: o.index, FromInvalidate: true, UUID: o.ui, EventID: eventID("invalidate", nil)}
		var b bson.Builder
		tok.Append(&b, "_id")
		b.AppendString("operationType", "invalidate")
		b.AppendTimestamp("clusterTime", o.ts.T(), o.ts.I())
		if o.wall.Type == bson.TypeDateTime {
			b.AppendValue("wallTime", o.wall)
		}
		return out(&builtEvent{tok: tok, doc: b.Finish()})
	}
	return true, nil
}

// eventID is a token's eventIdentifier.
func eventID(opType string, key bson.Doc) bson.Doc {
	var b bson.Builder
	b.AppendString("operationType", opType)
	if key != nil {
		b.AppendDocument("documentKey", key)
	}
	return b.Finish()
}

func appendNS(b *bson.Builder, key, db, coll string) {
	b.StartDocument(key)
	b.AppendString("db", db)
	if coll != "" {
		b.AppendString("coll", coll)
	}
	b.End()
}

// without returns d without its first field.
func without(d bson.Doc, skip string) bson.Doc {
	var b bson.Builder
	it := d.Iter()
	for it.Next() {
		if it.Element().Key != skip {
			b.AppendElement(it.Element())
		}
	}
	return b.Finish()
}

// buildEvent builds the event document into b; it sets tok's
// eventIdentifier.
func (s *Stream) buildEvent(b *bson.Builder, tx *kv.Tx, o *op, opType, db, coll string, tok *Token) (bson.Doc, error) {
	var key bson.Doc
	switch o.kind {
	case oplog.OpInsert, oplog.OpUpdate:
		key = o.o2
		if key == nil {
			if id, ok := o.o.Lookup("_id"); ok {
				var kb bson.Builder
				kb.AppendValue("_id", id)
				key = kb.Finish()
			}
		}
	case oplog.OpDelete:
		key = o.o
	}
	tok.EventID = eventID(opType, key)
	b.Reset(nil)
	tok.Append(b, "_id")
	b.AppendString("operationType", opType)
	b.AppendTimestamp("clusterTime", o.ts.T(), o.ts.I())
	if o.wall.Type == bson.TypeDateTime {
		b.AppendValue("wallTime", o.wall)
	}
	if s.spec.ShowExpandedEvents && o.ui != nil {
		b.AppendBinary("collectionUUID", 4, o.ui[:])
	}
	switch opType {
	case "insert", "replace":
		b.AppendDocument("fullDocument", o.o)
	case "update":
		if err := s.appendPostImage(tx, b, o, db, coll, key); err != nil {
			return nil, err
		}
	}
	appendNS(b, "ns", db, coll)
	switch opType {
	case "insert", "update", "replace", "delete":
		b.AppendDocument("documentKey", key)
		if opType == "update" {
			diff, _ := o.o.Lookup("diff")
			d := bson.Doc(nil)
			if diff.Type == bson.TypeDocument {
				d = diff.Document()
			}
			appendUpdateDescription(b, d, s.spec.ShowExpandedEvents)
		}
		if s.spec.FullDocumentBeforeChange != BeforeOff && opType != "insert" {
			if err := s.appendPreImage(tx, b, o); err != nil {
				return nil, err
			}
		}
	case "rename":
		to, _ := o.o.Lookup("to")
		tdb, tcoll := splitNS(to.StringValue())
		appendNS(b, "to", tdb, tcoll)
		if s.spec.ShowExpandedEvents {
			b.StartDocument("operationDescription")
			appendNS(b, "to", tdb, tcoll)
			if dt, ok := o.o.Lookup("dropTarget"); ok && dt.Type == bson.TypeBinary {
				b.AppendValue("dropTarget", dt)
			}
			b.End()
		}
	case "create":
		b.AppendDocument("operationDescription", without(o.o, "create"))
	case "modify":
		b.AppendDocument("operationDescription", without(o.o, "collMod"))
	case "createIndexes":
		b.StartDocument("operationDescription")
		if first, _ := firstElement(o.o); first.Key == "commitIndexBuild" {
			if ix, ok := o.o.Lookup("indexes"); ok {
				b.AppendValue("indexes", ix)
			}
		} else {
			b.StartArray("indexes")
			b.AppendDocument("0", without(o.o, "createIndexes"))
			b.End()
		}
		b.End()
	case "dropIndexes":
		b.StartDocument("operationDescription")
		b.StartArray("indexes")
		if o.o2 != nil {
			b.AppendDocument("0", o.o2)
		}
		b.End()
		b.End()
	}
	if o.lsid.Type == bson.TypeDocument {
		b.AppendValue("lsid", o.lsid)
		if o.txn.Type != 0 {
			b.AppendValue("txnNumber", o.txn)
		}
	}
	return b.Finish(), nil
}

// appendPostImage appends an update event's fullDocument as the stream's
// fullDocument mode asks.
func (s *Stream) appendPostImage(tx *kv.Tx, b *bson.Builder, o *op, db, coll string, key bson.Doc) error {
	switch s.spec.FullDocument {
	case FullUpdateLookup:
		doc, err := lookupCurrent(tx, db, coll, key)
		if err != nil {
			return err
		}
		if doc == nil {
			b.AppendNull("fullDocument")
		} else {
			b.AppendDocument("fullDocument", doc)
		}
	case FullWhenAvailable, FullRequired:
		var post bson.Doc
		if o.ui != nil {
			pre, err := oplog.PreImage(tx, o.ts, o.index, *o.ui)
			if err != nil {
				return err
			}
			if pre != nil {
				diff, _ := o.o.Lookup("diff")
				if diff.Type == bson.TypeDocument {
					if post, err = oplog.ApplyDiff(pre, diff.Document()); err != nil {
						return err
					}
				}
			}
		}
		switch {
		case post != nil:
			b.AppendDocument("fullDocument", post)
		case s.spec.FullDocument == FullRequired:
			return mongoerr.New(mongoerr.NoMatchingDocument, "Change stream was configured to require a post-image for all update events, but the post-image was not found for event: %s", o.ts.String())
		default:
			b.AppendNull("fullDocument")
		}
	}
	return nil
}

// appendPreImage appends fullDocumentBeforeChange.
func (s *Stream) appendPreImage(tx *kv.Tx, b *bson.Builder, o *op) error {
	var pre bson.Doc
	if o.ui != nil {
		var err error
		if pre, err = oplog.PreImage(tx, o.ts, o.index, *o.ui); err != nil {
			return err
		}
	}
	switch {
	case pre != nil:
		b.AppendDocument("fullDocumentBeforeChange", pre)
	case s.spec.FullDocumentBeforeChange == FullRequired:
		return mongoerr.New(mongoerr.NoMatchingDocument, "Change stream was configured to require a pre-image for all update, delete and replace events, but the pre-image was not found for event: %s", o.ts.String())
	default:
		b.AppendNull("fullDocumentBeforeChange")
	}
	return nil
}

// lookupCurrent returns the current document of db.coll with the key's
// _id, as tx sees it (nil: none).
func lookupCurrent(tx *kv.Tx, db, coll string, key bson.Doc) (bson.Doc, error) {
	c, err := catalog.Get(tx, db, coll)
	if err != nil || c == nil {
		return nil, err
	}
	id, ok := key.Lookup("_id")
	if !ok {
		return nil, nil
	}
	data, err := exec.DataTree(tx, c)
	if err != nil {
		return nil, err
	}
	_, doc, err := exec.LookupID(tx, c, data, nil, id)
	if err != nil || doc == nil {
		return nil, err
	}
	return append(bson.Doc(nil), doc...), nil
}
