package command

import (
	"sort"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
)

// Top keeps per-namespace usage, as mongod's top command reports it: time
// (microseconds) and count by kind of operation.
type Top struct {
	mu sync.Mutex
	m  map[string]*topEntry
}

type topCounter struct{ time, count int64 }

type topEntry struct {
	total, readLock, writeLock, queries, getmore, insert, update, remove, commands topCounter
}

// record adds one command's duration to its namespace.
func (t *Top) record(ns, name string, d time.Duration) {
	us := d.Microseconds()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*topEntry{}
	}
	e := t.m[ns]
	if e == nil {
		e = &topEntry{}
		t.m[ns] = e
	}
	add := func(c *topCounter) { c.time += us; c.count++ }
	add(&e.total)
	switch latencyClass(name) {
	case 0:
		add(&e.readLock)
	case 1:
		add(&e.writeLock)
	}
	switch name {
	case "find":
		add(&e.queries)
	case "getMore":
		add(&e.getmore)
	case "insert":
		add(&e.insert)
	case "update", "findAndModify":
		add(&e.update)
	case "delete":
		add(&e.remove)
	default:
		add(&e.commands)
	}
}

func top(c *Ctx) error {
	t := &c.Env.Top
	t.mu.Lock()
	names := make([]string, 0, len(t.m))
	for ns := range t.m {
		names = append(names, ns)
	}
	sort.Strings(names)
	r := c.Reply
	r.StartDocument("totals")
	r.AppendString("note", "all times in microseconds")
	for _, ns := range names {
		e := t.m[ns]
		r.StartDocument(ns)
		for _, f := range []struct {
			name string
			c    topCounter
		}{{"total", e.total}, {"readLock", e.readLock}, {"writeLock", e.writeLock}, {"queries", e.queries},
			{"getmore", e.getmore}, {"insert", e.insert}, {"update", e.update}, {"remove", e.remove}, {"commands", e.commands}} {
			r.StartDocument(f.name)
			r.AppendInt64("time", f.c.time)
			r.AppendInt64("count", f.c.count)
			r.End()
		}
		r.End()
	}
	t.mu.Unlock()
	r.End()
	return nil
}

// commandNamespace is db.collection for commands whose first field names a
// collection, else "".
func commandNamespace(c *Ctx) string {
	it := c.Body.Iter()
	if !it.Next() || it.Element().Value.Type != bson.TypeString {
		return ""
	}
	return c.DB + "." + it.Element().Value.StringValue()
}
