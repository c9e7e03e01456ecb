package changestream

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// parsePipe parses a change stream's later stages (the $changeStream
// stage itself excluded), with an optional collation.
func parsePipe(t *testing.T, stages []bson.Doc, collation bson.Doc) *agg.Pipeline {
	t.Helper()
	if len(stages) == 0 {
		return nil
	}
	qopts := &query.Options{}
	if collation != nil {
		c, err := query.ParseCollation(collation)
		if err != nil {
			t.Fatal(err)
		}
		qopts.Collation = c
	}
	eopts := &expr.Options{Collation: qopts.Collation}
	p, err := agg.Parse(&agg.Context{DB: "db", Coll: "c", Query: qopts, Expr: eopts}, stages)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// drainBatches reads a stream to its end in batches of at most n events
// (so that batches end mid-entry), returning the events, the
// postBatchResumeToken after each batch, and the error that ended it.
func drainBatches(t *testing.T, s *Stream, n int) ([]bson.Doc, []string, error) {
	t.Helper()
	var out []bson.Doc
	var pbrts []string
	for range 1000 {
		got := 0
		_, err := s.Fill(context.Background(), func(d bson.Doc) bool {
			if got == n {
				return false
			}
			got++
			out = append(out, append(bson.Doc(nil), d...))
			return true
		})
		if err != nil {
			return out, pbrts, err
		}
		pbrts = append(pbrts, string(s.PostBatchResumeToken()))
		if got < n {
			return out, pbrts, nil
		}
	}
	t.Fatal("stream never drained")
	return nil, nil, nil
}

// TestShapeSharesResults is a differential test: for each pipeline shape,
// four streams of one hub (which share the shape's outputs) return byte
// for byte the events, postBatchResumeTokens and errors of a stream
// without a hub, from the start and resumed after each of its events, in
// batches of several sizes; each shared output is computed once.
func TestShapeSharesResults(t *testing.T) {
	shapes := []struct {
		name   string
		stages string
		fatal  bool // the stages modify _id
	}{
		{"match field", `[{"$match": {"fullDocument.a": 1}}]`, false},
		{"match pushed down", `[{"$match": {"operationType": {"$in": ["insert", "delete"]}}}]`, false},
		{"match range", `[{"$match": {"documentKey._id": {"$gte": 5}}}, {"$match": {"operationType": {"$ne": "update"}}}]`, false},
		{"project", `[{"$project": {"operationType": 1, "documentKey": 1}}]`, false},
		{"addFields", `[{"$match": {"operationType": "update"}}, {"$addFields": {"seen": {"$concat": ["$operationType", "!"]}}}]`, false},
		{"modifies _id", `[{"$project": {"_id": 0}}]`, true},
	}
	spec := Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}
	scope := Scope{DB: "db", Coll: "c"}
	for _, sh := range shapes {
		for _, opts := range []HubOptions{{}, {ShapeSlots: 1}, {Slots: 2, ShapeSlots: 2, MaxBytes: 2000}} {
			t.Run(fmt.Sprintf("%s/slots=%d,%d", sh.name, opts.Slots, opts.ShapeSlots), func(t *testing.T) {
				h := newHarness(t)
				hub := NewHub(h.db, h.log, opts)
				stages := docs(t, sh.stages)
				open := func(withHub bool, sp Spec) *Stream {
					var hb *Hub
					if withHub {
						hb = hub
					}
					s, err := Open(h.db, h.log, hb, scope, &sp, parsePipe(t, stages, nil), stages)
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				plain := open(false, spec)
				var shared []*Stream
				for range 4 {
					shared = append(shared, open(true, spec))
				}
				if shared[0].shape == nil || shared[0].shape != shared[3].shape || hub.Shapes() != 1 {
					t.Fatalf("identical streams do not share a shape (%d shapes)", hub.Shapes())
				}
				hubWrites(t, h, 0, 12)
				want, wantPB, wantErr := drainBatches(t, plain, 1<<30)
				if sh.fatal {
					if !containsCode(wantErr, mongoerr.ChangeStreamFatalError) {
						t.Fatalf("plain stream: %v, want ChangeStreamFatalError", wantErr)
					}
				} else if wantErr != nil || len(want) == 0 {
					t.Fatalf("plain stream: %d events, %v", len(want), wantErr)
				}
				for i, s := range shared {
					n := []int{1 << 30, 1, 2, 3}[i] // batch sizes: whole, and ending mid-entry
					got, pb, err := drainBatches(t, s, n)
					if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
						t.Fatalf("stream %d: error %v, want %v", i, err, wantErr)
					}
					same(t, fmt.Sprintf("stream %d", i), got, want)
					if n == 1<<30 && !sh.fatal && (len(pb) != len(wantPB) || pb[len(pb)-1] != wantPB[len(wantPB)-1]) {
						t.Errorf("stream %d: postBatchResumeToken %q, want %q", i, pb, wantPB)
					}
					if !sh.fatal && string(s.PostBatchResumeToken()) != string(plain.PostBatchResumeToken()) {
						t.Errorf("stream %d: final postBatchResumeToken differs", i)
					}
				}
				if !sh.fatal && opts.Slots == 0 && opts.ShapeSlots == 0 {
					if c := shared[0].shape.Computes.Load(); c == 0 || shared[0].shape.Hits.Load() < 3*c {
						t.Errorf("outputs computed %d times, served from the shape %d times: not shared", c, shared[0].shape.Hits.Load())
					}
				}
				// Resumed after each event, a shared stream returns what a
				// plain resumed stream does.
				for i, ev := range want {
					id, _ := ev.Lookup("_id")
					tok, err := DecodeToken(id.Document())
					if err != nil {
						t.Fatal(err)
					}
					sp := spec
					sp.ResumeAfter = &tok
					a, b := open(false, sp), open(true, sp)
					wa, _, ea := drainBatches(t, a, 1<<30)
					wb, _, eb := drainBatches(t, b, 2)
					if (ea == nil) != (eb == nil) {
						t.Fatalf("resumed after %d: errors %v and %v", i, ea, eb)
					}
					same(t, fmt.Sprintf("resumed after %d", i), wb, wa)
					a.Close()
					b.Close()
				}
				plain.Close()
				for _, s := range shared {
					s.Close()
				}
				if hub.Shapes() != 0 {
					t.Errorf("%d shapes left after every stream closed", hub.Shapes())
				}
				if b := hub.CachedBytes(); opts.MaxBytes > 0 && b > opts.MaxBytes {
					t.Errorf("cache holds %d bytes, bound %d", b, opts.MaxBytes)
				}
			})
		}
	}
}

// TestShapeKeys: streams share a shape only when scope, options,
// collation and stages all agree, and never for stages that depend on
// more than the event.
func TestShapeKeys(t *testing.T) {
	h := newHarness(t)
	hub := NewHub(h.db, h.log, HubOptions{})
	def := Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}
	match := `[{"$match": {"fullDocument.s": "x"}}]`
	open := func(scope Scope, sp Spec, stages string, collation bson.Doc) *Stream {
		st := docs(t, stages)
		s, err := Open(h.db, h.log, hub, scope, &sp, parsePipe(t, st, collation), st)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	coll := Scope{DB: "db", Coll: "c"}
	base := open(coll, def, match, nil)
	if base.shape == nil {
		t.Fatal("a $match-only stream has no shape")
	}
	expanded := def
	expanded.ShowExpandedEvents = true
	lookup := def
	lookup.FullDocument = FullUpdateLookup
	pre := def
	pre.FullDocumentBeforeChange = FullWhenAvailable
	tests := []struct {
		name  string
		s     *Stream
		share bool // base's shape
		none  bool // no shape at all
	}{
		{"identical", open(coll, def, match, nil), true, false},
		{"other collection", open(Scope{DB: "db", Coll: "d"}, def, match, nil), false, false},
		{"database scope", open(Scope{DB: "db"}, def, match, nil), false, false},
		{"showExpandedEvents", open(coll, expanded, match, nil), false, false},
		{"other value", open(coll, def, `[{"$match": {"fullDocument.s": "y"}}]`, nil), false, false},
		{"extra stage", open(coll, def, `[{"$match": {"fullDocument.s": "x"}}, {"$match": {}}]`, nil), false, false},
		{"collation", open(coll, def, match, js(t, `{"locale": "en", "strength": 2}`)), false, false},
		{"updateLookup", open(coll, lookup, match, nil), false, true},
		{"pre-images", open(coll, pre, match, nil), false, true},
		{"$$NOW", open(coll, def, `[{"$match": {"$expr": {"$lt": ["$wallTime", "$$NOW"]}}}]`, nil), false, true},
		{"$rand", open(coll, def, `[{"$match": {"$expr": {"$lt": [{"$rand": {}}, 0.5]}}}]`, nil), false, true},
		{"no stages", open(coll, def, `[]`, nil), false, true},
	}
	for _, tc := range tests {
		switch {
		case tc.none && tc.s.shape != nil:
			t.Errorf("%s: shares a shape", tc.name)
		case !tc.none && tc.s.shape == nil:
			t.Errorf("%s: has no shape", tc.name)
		case tc.share != (tc.s.shape == base.shape):
			t.Errorf("%s: shares base's shape %v, want %v", tc.name, tc.s.shape == base.shape, tc.share)
		}
	}
}

// docs parses a JSON array of documents.
func docs(t *testing.T, s string) []bson.Doc {
	t.Helper()
	arr := js(t, `{"a": `+s+`}`)
	v, _ := arr.Lookup("a")
	var out []bson.Doc
	it := v.Document().Iter()
	for it.Next() {
		out = append(out, it.Element().Value.Document())
	}
	return out
}

func same(t *testing.T, what string, got, want []bson.Doc) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d: %v against %v", what, len(got), len(want), opTypes(got), opTypes(want))
	}
	for i := range want {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("%s: event %d:\n got %s\nwant %s", what, i, str(t, got[i]), str(t, want[i]))
		}
	}
}

// TestLingerPolicy: a stream of a hub whose read brought LingerEvents
// events or more lingers while the first of them is younger than the
// hub's LingerAge (from its entry's wall time), and after a wake-up for
// at least the hub's Linger; a read that brought fewer, a first event
// already that old (unless woken), a stream without a hub and a hub whose
// Linger is negative never linger.
func TestLingerPolicy(t *testing.T) {
	h := newHarness(t)
	spec := Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}
	tests := []struct {
		name     string
		hub      *Hub
		n        int64
		age      time.Duration // slept between the writes and the read
		woken    bool
		shortest time.Duration // the linger is in [shortest, longest]
		longest  time.Duration
	}{
		{"few events", NewHub(h.db, h.log, HubOptions{}), DefaultLingerEvents - 1, 0, true, 0, 0},
		{"a group waiting", NewHub(h.db, h.log, HubOptions{LingerAge: time.Second}), DefaultLingerEvents, 0, false, time.Nanosecond, time.Second},
		{"a group woken", NewHub(h.db, h.log, HubOptions{}), DefaultLingerEvents, 0, true, DefaultLinger, DefaultLingerAge},
		{"set", NewHub(h.db, h.log, HubOptions{LingerAge: 700 * time.Millisecond, LingerEvents: 2}), 2, 0, false, 300 * time.Millisecond, 700 * time.Millisecond},
		{"an old group waiting", NewHub(h.db, h.log, HubOptions{LingerAge: 2 * time.Millisecond}), DefaultLingerEvents, 20 * time.Millisecond, false, 0, 0},
		{"an old group woken", NewHub(h.db, h.log, HubOptions{LingerAge: 2 * time.Millisecond}), DefaultLingerEvents, 20 * time.Millisecond, true, DefaultLinger, DefaultLinger},
		{"age off", NewHub(h.db, h.log, HubOptions{LingerAge: -1}), DefaultLingerEvents, 0, false, 0, 0},
		{"disabled", NewHub(h.db, h.log, HubOptions{Linger: -1}), 100, 0, true, 0, 0},
		{"no hub", nil, 100, 0, true, 0, 0},
	}
	next := 0
	for _, tc := range tests {
		s, err := Open(h.db, h.log, tc.hub, Scope{DB: "db", Coll: "c"}, &spec, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if got := s.Linger(tc.n, false); got != 0 {
			t.Errorf("%s: Linger(%d) before any read = %v, want 0", tc.name, tc.n, got)
		}
		h.write("c", func(_ *kv.Tx, w *exec.CollWriter) error {
			for range tc.n {
				if _, _, err := w.Insert(js(t, fmt.Sprintf(`{"_id": %d}`, next))); err != nil {
					return err
				}
				next++
			}
			return nil
		})
		time.Sleep(tc.age)
		if evs := drain(t, s); int64(len(evs)) != tc.n {
			t.Fatalf("%s: %d events, want %d", tc.name, len(evs), tc.n)
		}
		if got := s.Linger(tc.n, tc.woken); got < tc.shortest || got > tc.longest {
			t.Errorf("%s: Linger(%d, woken %v) = %v, want in [%v, %v]", tc.name, tc.n, tc.woken, got, tc.shortest, tc.longest)
		}
	}
}

// TestHubHighWaterMarkToken: caught-up streams of one hub answer the same
// post-batch token, byte for byte the token a stream without the hub
// encodes, and it advances with the oplog.
func TestHubHighWaterMarkToken(t *testing.T) {
	h := newHarness(t)
	hub := NewHub(h.db, h.log, HubOptions{})
	spec := Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}
	var streams []*Stream
	for _, hb := range []*Hub{hub, hub, nil} {
		s, err := Open(h.db, h.log, hb, Scope{DB: "db", Coll: "c"}, &spec, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		streams = append(streams, s)
	}
	var prev Token
	for round := range 3 {
		h.write("other", func(_ *kv.Tx, w *exec.CollWriter) error {
			_, _, err := w.Insert(js(t, fmt.Sprintf(`{"_id": %d}`, round)))
			return err
		})
		var toks []bson.Doc
		for _, s := range streams {
			if evs := drain(t, s); len(evs) != 0 {
				t.Fatalf("round %d: events of another collection: %v", round, opTypes(evs))
			}
			toks = append(toks, s.PostBatchResumeToken())
		}
		for i, tok := range toks[1:] {
			if !bytes.Equal(tok, toks[0]) {
				t.Errorf("round %d: stream %d's token %s, stream 0's %s", round, i+1, str(t, tok), str(t, toks[0]))
			}
		}
		tok, err := DecodeToken(toks[0])
		if err != nil {
			t.Fatal(err)
		}
		if tok.Compare(prev) <= 0 {
			t.Errorf("round %d: token %s did not advance", round, str(t, toks[0]))
		}
		prev = tok
	}
}
