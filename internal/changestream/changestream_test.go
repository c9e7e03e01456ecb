package changestream

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

func js(t *testing.T, s string) bson.Doc {
	t.Helper()
	d, err := bson.UnmarshalExtJSON([]byte(s), false)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

func str(t *testing.T, d bson.Doc) string {
	t.Helper()
	out, err := bson.AppendExtJSON(nil, bson.Value{Type: bson.TypeDocument, Data: d}, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestTokenRoundTripAndOrder checks that tokens decode to what was
// encoded and that their _data strings sort as the positions.
func TestTokenRoundTripAndOrder(t *testing.T) {
	u := [16]byte{1, 2, 3}
	toks := []Token{
		hwm(repl.MakeTimestamp(5, 1)),
		{TS: repl.MakeTimestamp(5, 1), Type: eventToken, UUID: &u, EventID: eventID("insert", js(t, `{"_id": 1}`))},
		{TS: repl.MakeTimestamp(5, 1), Type: eventToken, FromInvalidate: true, UUID: &u, EventID: eventID("invalidate", nil)},
		{TS: repl.MakeTimestamp(5, 2), Type: eventToken, TxnOpIndex: 0, EventID: eventID("delete", js(t, `{"_id": "x"}`))},
		{TS: repl.MakeTimestamp(5, 2), Type: eventToken, TxnOpIndex: 1, EventID: eventID("delete", js(t, `{"_id": "a"}`))},
		{TS: repl.MakeTimestamp(5, 2), Type: eventToken, TxnOpIndex: 300, EventID: eventID("delete", js(t, `{"_id": "a"}`))},
		hwm(repl.MakeTimestamp(6, 0)),
		{TS: repl.MakeTimestamp(1<<31, 7), Type: eventToken},
	}
	for i, tok := range toks {
		got, err := DecodeToken(tok.Doc())
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if got.Compare(tok) != 0 || got.Data() != tok.Data() {
			t.Errorf("token %d: decoded %+v, want %+v", i, got, tok)
		}
		if i > 0 {
			if toks[i-1].Compare(tok) >= 0 {
				t.Errorf("token %d does not compare after %d", i, i-1)
			}
			if toks[i-1].Data() >= tok.Data() {
				t.Errorf("token %d's _data %s does not sort after %d's %s", i, tok.Data(), i-1, toks[i-1].Data())
			}
		}
	}
	for _, bad := range []string{`{}`, `{"_data": 1}`, `{"_data": "zz"}`, `{"_data": "82"}`, `{"_data": ""}`} {
		if _, err := DecodeToken(js(t, bad)); err == nil {
			t.Errorf("%s: decoded", bad)
		}
	}
}

// FuzzDecodeToken checks that no _data string makes the decoder panic and
// that what it accepts encodes back to itself.
func FuzzDecodeToken(f *testing.F) {
	u := [16]byte{9}
	f.Add(Token{TS: 77, Type: eventToken, TxnOpIndex: 3, UUID: &u}.Data())
	f.Add(hwm(5).Data())
	f.Fuzz(func(t *testing.T, data string) {
		var b bson.Builder
		b.AppendString("_data", data)
		tok, err := DecodeToken(b.Finish())
		if err != nil {
			return
		}
		if _, err := DecodeToken(tok.Doc()); err != nil {
			t.Fatalf("re-encoded token does not decode: %v", err)
		}
	})
}

// TestUpdateDescription checks updateDescription from $v: 2 diffs.
func TestUpdateDescription(t *testing.T) {
	for _, tc := range []struct{ diff, want string }{
		{`{"u": {"a": 1}, "i": {"b": 2}}`, `{"updatedFields": {"a": 1, "b": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"d": {"x": false}, "sy": {"u": {"z": 1}}}`, `{"updatedFields": {"y.z": 1}, "removedFields": ["x"], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"sarr": {"a": true, "l": 2}}`, `{"updatedFields": {}, "removedFields": [], "truncatedArrays": [{"field": "arr", "newSize": 2}], "disambiguatedPaths": {}}`},
		{`{"sa": {"u": {"1": 2}}}`, `{"updatedFields": {"a.1": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {"a.1": ["a", "1"]}}`},
		{`{"sa": {"a": true, "s0": {"u": {"1": 2}}, "u3": "x"}}`, `{"updatedFields": {"a.0.1": 2, "a.3": "x"}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {"a.0.1": ["a", 0, "1"], "a.3": ["a", 3]}}`},
	} {
		var b bson.Builder
		appendUpdateDescription(&b, js(t, tc.diff), true)
		got, _ := b.Finish().Lookup("updateDescription")
		if g, w := str(t, got.Document()), str(t, js(t, tc.want)); g != w {
			t.Errorf("%s:\n got %s\nwant %s", tc.diff, g, w)
		}
	}
}

// harness is a kv store with an oplog and a collection writer.
type harness struct {
	t   *testing.T
	db  *kv.DB
	log *oplog.Log
}

func newHarness(t *testing.T) *harness { return newHarnessFS(t, vfs.NewMem()) }

// newHarnessFS is newHarness on fs (a fault-injecting one, for instance).
func newHarnessFS(t *testing.T, fs vfs.FS) *harness {
	db, err := kv.Open("/db", &kv.Options{FS: fs, JournalSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l, err := oplog.Open(db, repl.NewClock(nil, 0), oplog.Config{MaxBytes: 1 << 20}, func() int64 { return 1 << 20 })
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, db: db, log: l}
}

type owner struct{}

func (owner) Err() error                             { return nil }
func (owner) WarnInvalid(string, bson.Doc, bson.Doc) {}
func (owner) WriteStmt() *repl.Stmt                  { return nil }

func (h *harness) write(coll string, fn func(tx *kv.Tx, w *exec.CollWriter) error) {
	h.t.Helper()
	tx, err := h.db.BeginWrite(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	defer tx.Rollback()
	c, err := exec.CollectionForWrite(tx, "db", coll, true, h.log)
	if err != nil {
		h.t.Fatal(err)
	}
	w, err := exec.OpenWriter(tx, c)
	if err != nil {
		h.t.Fatal(err)
	}
	w.Oplog, w.C = h.log, owner{}
	if err := fn(tx, w); err != nil {
		h.t.Fatal(err)
	}
	if err := tx.CommitWith(kv.Sync); err != nil { // durable: streams see it
		h.t.Fatal(err)
	}
}

// drain returns the events a stream has now (operationType and
// documentKey._id, or the whole event when full).
func drain(t *testing.T, s *Stream) []bson.Doc {
	t.Helper()
	var out []bson.Doc
	if _, err := s.Fill(context.Background(), func(d bson.Doc) bool {
		out = append(out, append(bson.Doc(nil), d...))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func opTypes(evs []bson.Doc) []string {
	var out []string
	for _, e := range evs {
		v, _ := e.Lookup("operationType")
		s := v.StringValue()
		if k, ok := e.Lookup("documentKey"); ok {
			id, _ := k.Document().Lookup("_id")
			s += " " + id.String()
		}
		out = append(out, s)
	}
	return out
}

// TestStreamEventsAndResume checks a collection stream's events, its
// postBatchResumeToken, a resume from each event's token and the
// invalidate after a drop.
func TestStreamEventsAndResume(t *testing.T) {
	h := newHarness(t)
	h.write("c", func(_ *kv.Tx, w *exec.CollWriter) error { _, _, err := w.Insert(js(t, `{"_id": 0}`)); return err })
	s, err := Open(h.db, h.log, nil, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if evs := drain(t, s); len(evs) != 0 {
		t.Fatalf("events before any write: %v", opTypes(evs))
	}
	idle := s.PostBatchResumeToken()
	h.write("c", func(_ *kv.Tx, w *exec.CollWriter) error {
		if _, _, err := w.Insert(js(t, `{"_id": 1, "a": 1}`)); err != nil {
			return err
		}
		_, _, err := w.Insert(js(t, `{"_id": 2}`))
		return err
	})
	h.write("other", func(_ *kv.Tx, w *exec.CollWriter) error { _, _, err := w.Insert(js(t, `{"_id": 9}`)); return err })
	h.write("c", func(tx *kv.Tx, w *exec.CollWriter) error {
		key, old, err := exec.LookupID(tx, w.Coll, w.Data, nil, js(t, `{"_id": 1}`).Values()[0])
		if err != nil || old == nil {
			t.Fatalf("lookup: %v", err)
		}
		old = append(bson.Doc(nil), old...)
		if err := w.Update(key, old, js(t, `{"_id": 1, "a": 2}`)); err != nil {
			return err
		}
		return w.Remove(key, js(t, `{"_id": 1, "a": 2}`))
	})
	evs := drain(t, s)
	want := []string{"insert 1", "insert 2", "update 1", "delete 1"}
	if got := opTypes(evs); len(got) != len(want) || got[0] != want[0] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("events %v, want %v", got, want)
	}
	pb, _ := DecodeToken(s.PostBatchResumeToken())
	old, _ := DecodeToken(idle)
	if pb.Compare(old) <= 0 {
		t.Errorf("postBatchResumeToken did not advance: %s then %s", str(t, idle), str(t, s.PostBatchResumeToken()))
	}
	ud, _ := evs[2].Lookup("updateDescription")
	if g := str(t, ud.Document()); g != `{"updatedFields":{"a":2},"removedFields":[],"truncatedArrays":[]}` {
		t.Errorf("updateDescription %s", g)
	}
	// Resuming after each event returns exactly the events after it.
	for i, ev := range evs {
		id, _ := ev.Lookup("_id")
		tok, err := DecodeToken(id.Document())
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(h.db, h.log, nil, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff, ResumeAfter: &tok}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := opTypes(drain(t, r)); len(got) != len(evs)-i-1 {
			t.Errorf("resumed after event %d: %v", i, got)
		}
	}
	// An idle high-water mark resumes to every event.
	hw, _ := DecodeToken(idle)
	r, err := Open(h.db, h.log, nil, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff, StartAfter: &hw}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := opTypes(drain(t, r)); len(got) != 4 {
		t.Errorf("started after the idle token: %v", got)
	}
	// A drop: drop, then invalidate, then the stream is exhausted.
	err = h.db.Update(context.Background(), func(tx *kv.Tx) error {
		c, err := exec.CollectionForWrite(tx, "db", "c", false, h.log)
		if err != nil {
			return err
		}
		return h.log.Drop(tx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := opTypes(drain(t, s)); len(got) != 2 || got[0] != "drop" || got[1] != "invalidate" {
		t.Fatalf("after drop: %v", got)
	}
	if done, err := s.Fill(context.Background(), func(bson.Doc) bool { return true }); !done || err != nil {
		t.Errorf("after invalidate: exhausted %v, %v", done, err)
	}
}

// TestStreamPushDown checks that a $match on operationType and
// documentKey._id skips entries without building their events.
func TestStreamPushDown(t *testing.T) {
	h := newHarness(t)
	s, err := Open(h.db, h.log, nil, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}, nil,
		[]bson.Doc{js(t, `{"$match": {"operationType": {"$in": ["delete"]}, "documentKey._id": 3}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if s.ops == nil || !s.ops["delete"] || s.docID == nil {
		t.Fatalf("pushdown not read: %v %v", s.ops, s.docID)
	}
	h.write("c", func(_ *kv.Tx, w *exec.CollWriter) error {
		for i := range 5 {
			var b bson.Builder
			b.AppendInt32("_id", int32(i))
			if _, _, err := w.Insert(b.Finish()); err != nil {
				return err
			}
		}
		return nil
	})
	if got := drain(t, s); len(got) != 0 {
		t.Errorf("inserts passed a delete-only pushdown: %v", opTypes(got))
	}
}

// TestHistoryLost checks ChangeStreamHistoryLost for a start before the
// oplog's first entry.
func TestHistoryLost(t *testing.T) {
	h := newHarness(t)
	h.write("c", func(_ *kv.Tx, w *exec.CollWriter) error { _, _, err := w.Insert(js(t, `{"_id": 0}`)); return err })
	_, err := Open(h.db, h.log, nil, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff, StartAtOperationTime: 1}, nil, nil)
	if err == nil || !containsCode(err, mongoerr.ChangeStreamHistoryLost) {
		t.Fatalf("start before the oplog: %v", err)
	}
}

func containsCode(err error, code int32) bool {
	e := mongoerr.As(err)
	return e != nil && e.Code == code
}
