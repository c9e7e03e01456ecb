package command

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
)

// Top keeps per-namespace usage, as mongod's top command reports it: time
// (microseconds) and count by kind of operation.
type Top struct {
	mu sync.Mutex
	m  map[nsKey]*topEntry
}

// nsKey is a namespace as its two parts, so that recording a command does
// not build the "db.collection" string.
type nsKey struct{ db, coll string }

type topCounter struct{ time, count int64 }

type topEntry struct {
	total, readLock, writeLock, queries, getmore, insert, update, remove, commands topCounter
}

// record adds one command's duration to its namespace. db and coll may
// alias the request; they are copied when the namespace is new.
func (t *Top) record(db, coll, name string, d time.Duration) {
	us := d.Microseconds()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[nsKey]*topEntry{}
	}
	e := t.m[nsKey{db, coll}]
	if e == nil {
		e = &topEntry{}
		t.m[nsKey{strings.Clone(db), strings.Clone(coll)}] = e
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
	byName := make(map[string]*topEntry, len(t.m))
	for k, e := range t.m {
		ns := k.db + "." + k.coll
		names = append(names, ns)
		byName[ns] = e
	}
	sort.Strings(names)
	r := c.Reply
	r.StartDocument("totals")
	r.AppendString("note", "all times in microseconds")
	for _, ns := range names {
		e := byName[ns]
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

// commandCollection is the collection named by the command's first field,
// or "".
func commandCollection(c *Ctx) string {
	it := c.Body.Iter()
	if !it.Next() || it.Element().Value.Type != bson.TypeString {
		return ""
	}
	return it.Element().Value.StringValue()
}
