package opctx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func body(name, coll string) bson.Doc {
	var b bson.Builder
	b.AppendString(name, coll)
	return b.Finish()
}

// TestTableKills: killOp, a disconnect and a shutdown each end the
// operations they concern, with their cause, and no other.
func TestTableKills(t *testing.T) {
	var tab Table
	a := tab.Begin(context.Background(), 1, "127.0.0.1:1", "db", "find", body("find", "c"), time.Now())
	b := tab.Begin(context.Background(), 2, "127.0.0.1:2", "db", "insert", body("insert", "c"), time.Now())
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := tab.Begin(cancellable, 2, "127.0.0.1:2", "db", "aggregate", body("aggregate", "c"), time.Now())
	if Of(a) != a || tab.Find(a.ID()) != a || tab.Find(0) != nil {
		t.Fatal("operation not found")
	}
	if got := tab.Activity(); got.Readers != 2 || got.Conns != 2 {
		t.Fatalf("activity %+v", got)
	}
	a.Kill()
	if !errors.Is(a.Err(), context.Canceled) || b.Err() != nil {
		t.Fatalf("killOp: %v, other %v", a.Err(), b.Err())
	}
	select {
	case <-a.Done():
	default:
		t.Fatal("killed operation's Done not closed")
	}
	if n := tab.KillConn(2, mongoerr.ErrClientDisconnect); n != 2 {
		t.Fatalf("KillConn killed %d", n)
	}
	for _, op := range []*Op{b, c} {
		if op.Err() != mongoerr.ErrClientDisconnect {
			t.Fatalf("%s: %v", op.Name(), op.Err())
		}
		if _, ok := op.DisconnectKill(); !ok {
			t.Fatalf("%s: not a disconnect kill", op.Name())
		}
	}
	if _, ok := a.DisconnectKill(); ok {
		t.Fatal("killOp counted as a disconnect")
	}
	for _, op := range []*Op{a, b, c} {
		tab.End(op)
	}
	n := 0
	tab.Each(func(*Op) { n++ })
	if n != 0 || tab.KillAll(mongoerr.ErrShutdown) != 0 {
		t.Fatalf("%d operations left", n)
	}
}

func TestTopRecords(t *testing.T) {
	var top Top
	top.Record("db", "c", "find", 3*time.Microsecond)
	top.Record("db", "c", "insert", 5*time.Microsecond)
	top.Record("db", "c", "create", 7*time.Microsecond)
	got := top.Latency("db", "c")
	if got[0] != [2]int64{3, 1} || got[1] != [2]int64{5, 1} || got[2] != [2]int64{7, 1} {
		t.Fatalf("latency %v", got)
	}
	var b bson.Builder
	top.AppendTotals(&b)
	v, ok := b.Finish().LookupPath("totals", "db.c", "queries", "count")
	if n, _ := v.AsInt64(); !ok || n != 1 {
		t.Fatalf("totals: %v", v)
	}
}

// memStore is a Store in memory.
type memStore struct{ docs map[string][]bson.Doc }

func (m *memStore) AppendBounded(db, coll string, doc bson.Doc, size, max int64) (int64, error) {
	ns := db + "." + coll
	if size < 0 {
		size = 0
		for _, d := range m.docs[ns] {
			size += int64(len(d))
		}
	}
	m.docs[ns] = append(m.docs[ns], doc)
	return size + int64(len(doc)), nil
}

// TestProfilerLevels: level 2 profiles every command, level 1 those at
// least slowms, and an update's statements stand for their command.
func TestProfilerLevels(t *testing.T) {
	var p Profiler
	st := &memStore{docs: map[string][]bson.Doc{}}
	var tab Table
	r := &Request{DB: "db", Name: "find", Body: body("find", "c")}
	op := tab.Begin(context.Background(), 0, "", "db", "find", r.Body, time.Now())
	defer tab.End(op)
	p.Op(st, nil, 100, r, op, "c", time.Millisecond, nil)
	if p.Active() || len(st.docs) != 0 {
		t.Fatal("profiled at level 0")
	}
	p.SetLevel("db", 1)
	p.Op(st, nil, 100, r, op, "c", time.Millisecond, nil)
	p.Op(st, nil, 100, r, op, "c", 200*time.Millisecond, nil)
	if n := len(st.docs["db.system.profile"]); n != 1 {
		t.Fatalf("level 1 wrote %d documents", n)
	}
	p.SetLevel("db", 2)
	u := &Request{DB: "db", Name: "update", Body: body("update", "c")}
	uop := tab.Begin(context.Background(), 0, "", "db", "update", u.Body, time.Now())
	defer tab.End(uop)
	p.Statement(100, u, uop, "update", "c", body("q", "x"), &Stats{}, time.Millisecond, nil)
	p.Statement(100, u, uop, "update", "c", body("q", "y"), &Stats{}, time.Millisecond, nil)
	p.Op(st, nil, 100, u, uop, "c", time.Millisecond, nil)
	docs := st.docs["db.system.profile"]
	if len(docs) != 3 {
		t.Fatalf("%d documents", len(docs))
	}
	if v, _ := docs[2].Lookup("op"); v.StringValue() != "update" {
		t.Fatalf("statement document %s", docs[2].String())
	}
	if was := p.SetLevel("db", 0); was != 2 || p.Active() {
		t.Fatalf("was %d, active %v", was, p.Active())
	}
}

// TestTableKillSessions: killSessions interrupts the running operations of
// the sessions it names and no others (operations without a session
// included).
func TestTableKillSessions(t *testing.T) {
	var tab Table
	type key struct{ id byte }
	a := tab.Begin(context.Background(), 1, "c1", "db", "find", body("find", "c"), time.Now())
	b := tab.Begin(context.Background(), 2, "c2", "db", "find", body("find", "c"), time.Now())
	none := tab.Begin(context.Background(), 3, "c3", "db", "find", body("find", "c"), time.Now())
	a.SetSession(key{1})
	b.SetSession(key{2})
	if n := tab.KillSessions(func(k any) bool { return k.(key) == key{1} }); n != 1 {
		t.Fatalf("killed %d operations, want 1", n)
	}
	if a.Err() == nil || b.Err() != nil || none.Err() != nil {
		t.Fatalf("after killing session 1: a %v, b %v, none %v", a.Err(), b.Err(), none.Err())
	}
	if n := tab.KillSessions(func(any) bool { return true }); n != 1 || b.Err() == nil || none.Err() != nil {
		t.Fatalf("killing every session: %d killed, b %v, none %v", n, b.Err(), none.Err())
	}
}
