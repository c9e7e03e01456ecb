package changestream

// The hub: what the streams of one server share.
//
// A hundred streams on one collection see the same oplog entries and, when
// their options agree, the same event documents. Without sharing, each of
// them decodes every entry and builds every event itself (a token, the
// ns, the documentKey, the fullDocument copied into a builder): the
// server's cost per event per stream. The hub keeps, for the most recent
// entries, the entry decoded once (its operations, each operation's
// operationType and namespace under both values of showExpandedEvents)
// and, built by the first stream that needs it, each operation's event
// document with its token, immutable from then on. A stream whose
// fullDocument is default and fullDocumentBeforeChange off — an event
// that depends on the entry alone — appends those ready bytes to its
// reply; the other streams use the decoded operations and build their own
// events (an updateLookup reads the document in the batch's snapshot, a
// pre-image reads the pre-image tree). Filtering stays per stream: the
// scope, the pushed-down $match and the pipeline's later stages.
//
// The oplog stays the source of truth: each batch still opens a snapshot
// and seeks the oplog tree to its position (one seek, then the entries
// after it), and takes an entry's decoded form from the hub only when the
// hub holds that ts with the same bytes. So the cache changes no result,
// only who pays for the decoding: a stream behind the cache, or an entry
// the cache refused, is decoded by the stream as before.
//
// The cache is direct-mapped: a fixed array of slots, an entry's slot a
// hash of its ts, each slot an atomic pointer, so lookups and stores take
// no lock and a newer entry simply replaces whatever held its slot. Its
// memory is bounded by HubOptions.MaxBytes (an entry is charged three
// times its raw size: the entry and its two event variants) and entries
// larger than MaxEntryBytes are never cached.
//
// The hub also holds what the streams wait on: the commit point
// (HubOptions.CommitPoint; commit.go), with the channel its next advance
// closes. A waiting getMore loads that channel before it reads, and one
// advance — one journal flush, one Raft commit — wakes them all; no
// getMore registers a watch of its own or polls.

import (
	"bytes"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// HubOptions bound a hub's cache.
type HubOptions struct {
	// Slots is the number of cache slots, a power of two (default 4096;
	// another value is rounded up to one).
	Slots int
	// MaxBytes bounds the memory the cached entries are charged (default
	// 64 MiB).
	MaxBytes int64
	// MaxEntryBytes is the largest raw entry cached (default 64 KiB).
	MaxEntryBytes int
	// ShapeSlots is the number of outputs each pipeline shape keeps
	// (shape.go), a power of two (default 1024; another value is
	// rounded up to one).
	ShapeSlots int
	// LingerEvents, Linger and LingerAge are the linger policy of a
	// getMore whose read brought several events (Stream.Linger): the
	// events that count (default DefaultLingerEvents), how long a woken
	// getMore lingers at least (default DefaultLinger; negative: no
	// getMore ever lingers) and how old the batch's first event may grow
	// meanwhile (default DefaultLingerAge; negative: only the woken
	// getMore's Linger).
	LingerEvents int64
	Linger       time.Duration
	LingerAge    time.Duration
	// CommitPoint is what the streams deliver up to (commit.go): the
	// oplog's durable point when nil.
	CommitPoint CommitPoint
}

// Hub is what the change streams of one server share: a cache of decoded
// oplog entries and built events, and the commit point they deliver up
// to. Its methods are safe for concurrent use.
type Hub struct {
	kv          *kv.DB
	log         *oplog.Log
	opts        HubOptions
	shift       uint
	slots       []atomic.Pointer[entry]
	bytes       atomic.Int64
	shapesState // the pipeline shapes (shape.go)
	// hwm is the last high-water-mark token encoded: after each advance
	// of the commit point every caught-up stream answers the same one.
	hwm atomic.Pointer[hwmToken]

	// Hits, Misses and Builds count cache lookups that found the entry,
	// lookups that did not, and shared event documents built (tests and
	// benchmarks read them).
	Hits, Misses, Builds atomic.Int64
}

// NewHub returns the hub of the streams on kvdb's oplog log.
func NewHub(kvdb *kv.DB, log *oplog.Log, o HubOptions) *Hub {
	if o.Slots <= 0 {
		o.Slots = 4096
	}
	n, shift := 1, uint(64)
	for n < o.Slots {
		n <<= 1
		shift--
	}
	o.Slots = n
	if o.MaxBytes <= 0 {
		o.MaxBytes = 64 << 20
	}
	if o.MaxEntryBytes <= 0 {
		o.MaxEntryBytes = 64 << 10
	}
	if o.ShapeSlots <= 0 {
		o.ShapeSlots = defaultShapeSlots
	}
	for n := 1; ; n <<= 1 {
		if n >= o.ShapeSlots {
			o.ShapeSlots = n
			break
		}
	}
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	if o.LingerAge == 0 {
		o.LingerAge = DefaultLingerAge
	}
	if o.LingerEvents <= 0 {
		o.LingerEvents = DefaultLingerEvents
	}
	if o.CommitPoint == nil {
		o.CommitPoint = log.Durable
	}
	return &Hub{kv: kvdb, log: log, opts: o, shift: shift, slots: make([]atomic.Pointer[entry], n)}
}

// CachedBytes is the memory the cached entries are charged.
func (h *Hub) CachedBytes() int64 { return h.bytes.Load() }

func (h *Hub) slot(ts repl.Timestamp) *atomic.Pointer[entry] {
	return &h.slots[(uint64(ts)*0x9E3779B97F4A7C15)>>h.shift]
}

// entry returns the decoded entry at ts whose raw bytes are raw, from the
// cache or decoded now (and cached when it fits). raw is only valid in
// the caller's snapshot: a cached entry holds its own copy.
func (h *Hub) entry(ts repl.Timestamp, raw bson.Doc) *entry {
	sl := h.slot(ts)
	if e := sl.Load(); e != nil && e.ts == ts && bytes.Equal(e.raw, raw) {
		h.Hits.Add(1)
		return e
	}
	h.Misses.Add(1)
	if len(raw) > h.opts.MaxEntryBytes {
		return decodeEntry(ts, raw, false)
	}
	e := decodeEntry(ts, append(bson.Doc(nil), raw...), true)
	old := sl.Load()
	var freed int64
	if old != nil {
		freed = old.charge()
	}
	if h.bytes.Load()-freed+e.charge() > h.opts.MaxBytes {
		return e // full: served, not kept
	}
	if !sl.CompareAndSwap(old, e) {
		return e // another stream stored this slot meanwhile
	}
	h.bytes.Add(e.charge() - freed)
	return e
}

// hwmToken is a high-water-mark token's {_data} document.
type hwmToken struct {
	ts  repl.Timestamp
	doc bson.Doc
}

// hwmDoc returns the {_data} of the high-water-mark token at ts, encoded
// once for the streams that answer it (never modified once stored).
func (h *Hub) hwmDoc(ts repl.Timestamp) bson.Doc {
	if t := h.hwm.Load(); t != nil && t.ts == ts {
		return t.doc
	}
	t := &hwmToken{ts: ts, doc: hwm(ts).Doc()}
	h.hwm.Store(t)
	return t.doc
}

// entry is a decoded oplog entry: its operations (the entry itself, or the
// operations of its applyOps), each one's kind under both values of
// showExpandedEvents, and, when the entry is cached, each operation's
// shared event per variant, built on first use.
type entry struct {
	ts     repl.Timestamp
	raw    bson.Doc
	ops    []op
	kinds  [2][]opKind
	events [2][]atomic.Pointer[builtEvent] // nil unless cached
}

// charge is the memory a cached entry is charged: its bytes, and about as
// much again for each of its two event variants.
func (e *entry) charge() int64 { return 3*int64(len(e.raw)) + 256 }

// opKind is an operation's event type and the namespace it is about
// (opType "": no event).
type opKind struct {
	opType, db, coll string
}

// builtEvent is an event document with its token, shared by the streams
// whose events depend on the entry alone. Never modified once stored.
type builtEvent struct {
	tok    Token
	doc    bson.Doc
	tokDoc bson.Doc // the token's {_data}: the event's _id
	// shared is set on the events the hub keeps (the only ones a shape
	// caches outputs for: their pointer identifies the event).
	shared bool
	// wall is the operation's wall time, ms since the epoch (0: none):
	// how old the event is, for the linger (Stream.Linger).
	wall int64
}

// decodeEntry decodes the entry at ts (raw must outlive the entry);
// shared allocates the event slots of a cached entry.
func decodeEntry(ts repl.Timestamp, raw bson.Doc, shared bool) *entry {
	e := &entry{ts: ts, raw: raw}
	o := op{ts: ts}
	readOp(raw, &o)
	e.ops = nil
	if o.kind == oplog.OpCommand {
		if first, ok := firstElement(o.o); ok && first.Key == "applyOps" && first.Value.Type == bson.TypeArray {
			lsid, _ := raw.Lookup("lsid")
			txn, _ := raw.Lookup("txnNumber")
			it := first.Value.Document().Iter()
			for i := int64(0); it.Next(); i++ {
				if it.Element().Value.Type != bson.TypeDocument {
					continue
				}
				sub := op{ts: ts, index: i, wall: o.wall, lsid: lsid, txn: txn}
				readOp(it.Element().Value.Document(), &sub)
				e.ops = append(e.ops, sub)
			}
		} else {
			e.ops = []op{o}
		}
	} else {
		e.ops = []op{o}
	}
	for v := range e.kinds {
		e.kinds[v] = make([]opKind, len(e.ops))
		for i := range e.ops {
			k := &e.kinds[v][i]
			k.opType, k.db, k.coll = kindOf(&e.ops[i], v == 1)
		}
		if shared {
			e.events[v] = make([]atomic.Pointer[builtEvent], len(e.ops))
		}
	}
	return e
}
