package changestream

// Shared results of identical pipelines.
//
// A hundred streams that watch the same scope with the same options and
// the same later stages ({$match: {"fullDocument.status": "A"}} from a
// hundred clients) compute the same output for every event: the hub's
// shared event document (hub.go) passed through the same stages. A shape
// is what such streams share: the key is the canonical bytes of what the
// output depends on — the scope, fullDocument, fullDocumentBeforeChange,
// showExpandedEvents, the pipeline's collation and (evaluated) let
// variables, and each stage's specification — and the value a small
// cache of outputs, one per shared event, computed by the first stream
// of the shape that reaches the event and only copied into the reply by
// the others.
//
// Only streams whose events depend on the entry alone (the hub's shared
// events: fullDocument default, no pre-images) join a shape, and only
// when no stage can give two streams different outputs for the same
// event: a stage that names $$NOW, $$CLUSTER_TIME, $rand, $sampleRate or
// server-side JavaScript ($function, $accumulator, $where) keeps its
// stream unshared. An output is keyed by the shared event's pointer,
// which is immutable and unique to the event's entry bytes, so a result
// is reused only for the very event it was computed from; an error (the
// stages modified the _id) is never cached — each stream computes and
// reports its own.
//
// The cache is direct-mapped like the hub's (HubOptions.ShapeSlots
// slots, an event's slot a hash of its ts and txnOpIndex, an atomic
// pointer each, a newer event replacing an older one), so an output
// lives until a later event takes its slot — by then every
// stream that keeps up has passed it, and a stream behind the cache
// computes the output itself, as an unshared stream would. Outputs that
// are the event's own bytes (a $match that keeps the event) cost a
// pointer to it; each kept output is charged to the hub's byte bound
// (HubOptions.MaxBytes: the event it holds, and a transformed output's
// own bytes) and not kept when the hub is full. A shape is dropped
// when its last stream closes.

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
)

// defaultShapeSlots is the number of outputs a shape keeps by default.
const defaultShapeSlots = 1024

// volatile are the names that make a stage's output depend on more than
// the event (the time, randomness, scripts): a pipeline naming one is
// never shared.
var volatile = [][]byte{
	[]byte("$$NOW"), []byte("$$CLUSTER_TIME"), []byte("$rand"), []byte("$sampleRate"),
	[]byte("$function"), []byte("$accumulator"), []byte("$where"), []byte("$$USER_ROLES"),
}

// shape is the shared outputs of the streams with one key.
type shape struct {
	key   string
	refs  int                           // streams holding it, under Hub.shapesMu
	slots []atomic.Pointer[shapeResult] // a power of two
	// Hits and Computes count outputs served from the cache and computed
	// into it (tests read them).
	Hits, Computes atomic.Int64
}

// shapeResult is one event's output: doc nil when the stages filtered the
// event out.
type shapeResult struct {
	ev  *builtEvent
	doc bson.Doc
}

func (sh *shape) slot(be *builtEvent) *atomic.Pointer[shapeResult] {
	h := (uint64(be.tok.TS) ^ uint64(be.tok.TxnOpIndex)*0xBF58476D1CE4E5B9) * 0x9E3779B97F4A7C15
	return &sh.slots[(h>>32)&uint64(len(sh.slots)-1)]
}

// shapeKey returns the canonical key of a stream's outputs, or "" when the
// stream may not share them.
func (s *Stream) shapeKey(stages []bson.Doc) string {
	if s.hub == nil || s.pipe == nil || !s.shares() || len(stages) == 0 {
		return ""
	}
	var b bson.Builder
	b.AppendBool("cluster", s.cluster)
	b.AppendString("db", s.db)
	b.AppendString("coll", s.coll)
	b.AppendString("fullDocument", s.spec.FullDocument)
	b.AppendString("fullDocumentBeforeChange", s.spec.FullDocumentBeforeChange)
	b.AppendBool("showExpandedEvents", s.spec.ShowExpandedEvents)
	if q := s.pipe.QueryOptions(); q != nil {
		if q.Collation != nil {
			q.Collation.AppendSpec(&b, "collation")
		}
		if len(q.Let) > 0 {
			if hasVolatile(q.Let) {
				return ""
			}
			b.AppendDocument("let", q.Let)
		}
	}
	b.StartArray("pipeline")
	for i, st := range stages {
		if hasVolatile(st) {
			return ""
		}
		b.AppendDocument(bson.Index(i), st)
	}
	b.End()
	return string(b.Finish())
}

func hasVolatile(d bson.Doc) bool {
	for _, v := range volatile {
		if bytes.Contains(d, v) {
			return true
		}
	}
	return false
}

// joinShape returns the hub's shape for key, creating it; the stream
// holds it until leaveShape.
func (h *Hub) joinShape(key string) *shape {
	h.shapesMu.Lock()
	defer h.shapesMu.Unlock()
	if h.shapes == nil {
		h.shapes = map[string]*shape{}
	}
	sh := h.shapes[key]
	if sh == nil {
		sh = &shape{key: key, slots: make([]atomic.Pointer[shapeResult], h.opts.ShapeSlots)}
		h.shapes[key] = sh
	}
	sh.refs++
	return sh
}

// leaveShape drops a stream's hold on sh, and sh with its last one.
func (h *Hub) leaveShape(sh *shape) {
	h.shapesMu.Lock()
	defer h.shapesMu.Unlock()
	if sh.refs--; sh.refs == 0 {
		delete(h.shapes, sh.key)
		for i := range sh.slots {
			if r := sh.slots[i].Swap(nil); r != nil {
				h.bytes.Add(-r.charge())
			}
		}
	}
}

// Shapes is the number of pipeline shapes whose streams share outputs.
func (h *Hub) Shapes() int {
	h.shapesMu.Lock()
	defer h.shapesMu.Unlock()
	return len(h.shapes)
}

// charge is the memory a kept output is charged: the event it holds on
// to (the hub may have dropped it meanwhile) and a transformed output.
func (r *shapeResult) charge() int64 {
	n := int64(len(r.ev.doc)) + 64
	if r.doc != nil && !sameBytes(r.doc, r.ev.doc) {
		n += int64(len(r.doc))
	}
	return n
}

func sameBytes(a, b bson.Doc) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sharedTransform is transform for a stream of a shape: the output of a
// shared event (one the hub keeps) from the shape's cache, or computed
// now and kept.
func (s *Stream) sharedTransform(be *builtEvent) (bson.Doc, error) {
	sh := s.shape
	sl := sh.slot(be)
	if r := sl.Load(); r != nil && r.ev == be {
		sh.Hits.Add(1)
		return r.doc, nil
	}
	doc, err := s.transform(be.doc, be.tok)
	if err != nil {
		return nil, err
	}
	if doc != nil && bytes.Equal(doc, be.doc) {
		doc = be.doc // the event itself: shared, not copied
	} else if doc != nil {
		doc = append(bson.Doc(nil), doc...) // the stages' output may reuse its buffers
	}
	sh.Computes.Add(1)
	r := &shapeResult{ev: be, doc: doc}
	old := sl.Load()
	var freed int64
	if old != nil {
		freed = old.charge()
	}
	if s.hub.bytes.Load()-freed+r.charge() > s.hub.opts.MaxBytes {
		return doc, nil // full: served, not kept
	}
	if sl.CompareAndSwap(old, r) {
		s.hub.bytes.Add(r.charge() - freed)
		if s.closed.Load() && sl.CompareAndSwap(r, nil) {
			// Closed meanwhile (a shutdown's kill): the shape may be gone.
			s.hub.bytes.Add(-r.charge())
		}
	}
	return doc, nil
}

// shapesState is the hub's registry of shapes.
type shapesState struct {
	shapesMu sync.Mutex
	shapes   map[string]*shape
}
