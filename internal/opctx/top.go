package opctx

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
)

// Top keeps per-namespace usage, as mongod's top command reports it: time
// (microseconds) and count by kind of operation. Recording is on every
// command's path, so it takes no lock: the namespace map is copied on
// write (a new namespace is rare) and read with one atomic load, and the
// counters are atomic. The zero Top is ready.
type Top struct {
	mu sync.Mutex // serialises adding namespaces
	m  atomic.Pointer[map[nsKey]*topEntry]
}

// nsKey is a namespace as its two parts, so that recording a command does
// not build the "db.collection" string.
type nsKey struct{ db, coll string }

type topCounter struct{ time, count atomic.Int64 }

func (c *topCounter) add(us int64) {
	c.time.Add(us)
	c.count.Add(1)
}

type topEntry struct {
	total, readLock, writeLock, queries, getmore, insert, update, remove, commands topCounter
}

// entry returns the namespace's counters, adding them if it is new. db
// and coll may alias the request; they are copied when the namespace is
// new.
func (t *Top) entry(db, coll string) *topEntry {
	if m := t.m.Load(); m != nil {
		if e := (*m)[nsKey{db, coll}]; e != nil {
			return e
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.m.Load()
	if old != nil {
		if e := (*old)[nsKey{db, coll}]; e != nil {
			return e
		}
	}
	m := make(map[nsKey]*topEntry, 1)
	if old != nil {
		m = make(map[nsKey]*topEntry, len(*old)+1)
		for k, v := range *old {
			m[k] = v
		}
	}
	e := &topEntry{}
	m[nsKey{strings.Clone(db), strings.Clone(coll)}] = e
	t.m.Store(&m)
	return e
}

// Latency returns a namespace's time (µs) and count of reads, writes,
// other commands and transactions (none: Cairn has no transactions), as
// $collStats latencyStats reports them.
func (t *Top) Latency(db, coll string) (out [4][2]int64) {
	m := t.m.Load()
	if m == nil {
		return out
	}
	e := (*m)[nsKey{db, coll}]
	if e == nil {
		return out
	}
	out[0] = [2]int64{e.readLock.time.Load(), e.readLock.count.Load()}
	out[1] = [2]int64{e.writeLock.time.Load(), e.writeLock.count.Load()}
	out[2] = [2]int64{e.total.time.Load() - out[0][0] - out[1][0], e.total.count.Load() - out[0][1] - out[1][1]}
	return out
}

// Record adds one command's duration to its namespace.
func (t *Top) Record(db, coll, name string, d time.Duration) {
	us := d.Microseconds()
	e := t.entry(db, coll)
	e.total.add(us)
	switch LatencyClass(name) {
	case Read:
		e.readLock.add(us)
	case Write:
		e.writeLock.add(us)
	}
	switch name {
	case "find":
		e.queries.add(us)
	case "getMore":
		e.getmore.add(us)
	case "insert":
		e.insert.add(us)
	case "update", "findAndModify":
		e.update.add(us)
	case "delete":
		e.remove.add(us)
	default:
		e.commands.add(us)
	}
}

// AppendTotals appends top's "totals" document: every namespace's
// counters, in namespace order.
func (t *Top) AppendTotals(r *bson.Builder) {
	var entries map[nsKey]*topEntry
	if m := t.m.Load(); m != nil {
		entries = *m
	}
	names := make([]string, 0, len(entries))
	byName := make(map[string]*topEntry, len(entries))
	for k, e := range entries {
		ns := k.db + "." + k.coll
		names = append(names, ns)
		byName[ns] = e
	}
	sort.Strings(names)
	r.StartDocument("totals")
	r.AppendString("note", "all times in microseconds")
	for _, ns := range names {
		e := byName[ns]
		r.StartDocument(ns)
		for _, f := range []struct {
			name string
			c    *topCounter
		}{{"total", &e.total}, {"readLock", &e.readLock}, {"writeLock", &e.writeLock}, {"queries", &e.queries},
			{"getmore", &e.getmore}, {"insert", &e.insert}, {"update", &e.update}, {"remove", &e.remove}, {"commands", &e.commands}} {
			r.StartDocument(f.name)
			r.AppendInt64("time", f.c.time.Load())
			r.AppendInt64("count", f.c.count.Load())
			r.End()
		}
		r.End()
	}
	r.End()
}
