package concern

import (
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Default read and write concerns.
//
// setDefaultRWConcern sets the server-wide defaults that getDefaultRWConcern
// reports and that write commands without a writeConcern (or with an empty
// one) use. MongoDB keeps them in config.settings on replica sets and
// sharded clusters; a standalone Cairn keeps them in the engine tree
// defaultsTree, so they survive restarts. Until set, the defaults are
// MongoDB's implicit ones: read concern "local", and write concern {w: 1}
// on a standalone, {w: "majority"} on a replica set (MongoDB 5.0+).

const (
	defaultsTree = "_rwdefaults"
	defaultsKey  = "defaults"
)

// RWDefaults are the global default concerns (nil documents: implicit).
type RWDefaults struct {
	ReadConcern  bson.Doc
	WriteConcern bson.Doc
	Updated      time.Time
}

// Viewer reads the engine (exec.DB's View).
type Viewer interface {
	View(fn func(tx *exec.Tx) error) error
}

// Defaults caches the defaults, loaded from the engine on first use. The
// zero value is ready.
type Defaults struct {
	once sync.Once
	mu   sync.Mutex
	cur  RWDefaults
	err  error
}

// Get returns the defaults, reading them from db on the first call (db
// nil: the implicit defaults, for unit tests without an engine).
func (s *Defaults) Get(db Viewer) (RWDefaults, error) {
	if s == nil || db == nil {
		return RWDefaults{}, nil
	}
	s.once.Do(func() {
		s.err = db.View(func(tx *exec.Tx) error {
			tr, err := tx.Tree(defaultsTree)
			if err != nil {
				return nil // never set
			}
			raw, err := tr.Get([]byte(defaultsKey))
			if err != nil || raw == nil {
				return err
			}
			d := bson.Doc(raw)
			if v, ok := d.Lookup("readConcern"); ok && v.Type == bson.TypeDocument {
				s.cur.ReadConcern = bson.Doc(append([]byte(nil), v.Document()...))
			}
			if v, ok := d.Lookup("writeConcern"); ok && v.Type == bson.TypeDocument {
				s.cur.WriteConcern = bson.Doc(append([]byte(nil), v.Document()...))
			}
			if v, ok := d.Lookup("updated"); ok && v.Type == bson.TypeDateTime {
				s.cur.Updated = time.UnixMilli(v.DateTime())
			}
			return nil
		})
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.err
}

// Store writes next in tx (the caller commits it durably).
func Store(tx *exec.Tx, next RWDefaults) error {
	var b bson.Builder
	if next.ReadConcern != nil {
		b.AppendDocument("readConcern", next.ReadConcern)
	}
	if next.WriteConcern != nil {
		b.AppendDocument("writeConcern", next.WriteConcern)
	}
	b.AppendDateTime("updated", next.Updated.UnixMilli())
	tr, err := tx.CreateTreeIfNotExists(defaultsTree)
	if err != nil {
		return err
	}
	return tr.Put([]byte(defaultsKey), b.Finish())
}

// Set makes next the cached defaults (after Store committed them).
func (s *Defaults) Set(next RWDefaults) {
	s.mu.Lock()
	s.cur = next
	s.mu.Unlock()
}

// Next is cur with setDefaultRWConcern's fields applied: rv and wv, when
// present, replace the read and write defaults (an empty document unsets
// one). At least one must be present.
func Next(cur RWDefaults, rv bson.Value, hasRead bool, wv bson.Value, hasWrite, replSet bool) (RWDefaults, error) {
	if !hasRead && !hasWrite {
		return cur, mongoerr.New(mongoerr.BadValue, `At least one of the "defaultReadConcern" or "defaultWriteConcern" fields must be present`)
	}
	next := cur
	var err error
	if hasRead {
		if next.ReadConcern, err = checkDefaultRead(rv); err != nil {
			return cur, err
		}
	}
	if hasWrite {
		if next.WriteConcern, err = checkDefaultWrite(wv, replSet); err != nil {
			return cur, err
		}
	}
	next.Updated = time.Now()
	return next, nil
}

// AppendDefaults appends the defaults as getDefaultRWConcern answers them.
func AppendDefaults(r *bson.Builder, d RWDefaults, replSet bool) {
	if d.ReadConcern != nil {
		r.AppendDocument("defaultReadConcern", d.ReadConcern)
	} else {
		r.StartDocument("defaultReadConcern")
		r.AppendString("level", "local")
		r.End()
	}
	if d.WriteConcern != nil {
		r.AppendDocument("defaultWriteConcern", d.WriteConcern)
	} else {
		r.StartDocument("defaultWriteConcern")
		if replSet {
			r.AppendString("w", "majority")
		} else {
			r.AppendInt32("w", 1)
		}
		r.AppendInt32("wtimeout", 0)
		r.End()
	}
	if !d.Updated.IsZero() {
		r.AppendTimestamp("updateOpTime", uint32(d.Updated.Unix()), 1)
		r.AppendDateTime("updateWallClockTime", d.Updated.UnixMilli())
	}
	source := func(doc bson.Doc) string {
		if doc != nil {
			return "global"
		}
		return "implicit"
	}
	r.AppendString("defaultWriteConcernSource", source(d.WriteConcern))
	r.AppendString("defaultReadConcernSource", source(d.ReadConcern))
	r.AppendDateTime("localUpdateWallClockTime", time.Now().UnixMilli())
}

// checkDefaultRead validates a defaultReadConcern value; an empty
// document unsets the default (nil).
func checkDefaultRead(v bson.Value) (bson.Doc, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'setDefaultRWConcern.defaultReadConcern' is the wrong type '%s', expected type 'object'", v.Type)
	}
	d := v.Document()
	if d.Len() == 0 {
		return nil, nil
	}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != "level" {
			return nil, mongoerr.New(mongoerr.BadValue, "can only set level, cannot set %s as part of the default read concern", e.Key)
		}
		if e.Value.Type != bson.TypeString {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'level' is the wrong type '%s', expected type 'string'", e.Value.Type)
		}
		switch l := e.Value.StringValue(); l {
		case "local", "available", "majority":
		case "snapshot", "linearizable":
			return nil, mongoerr.New(mongoerr.BadValue, "level: '%s' is not permitted for the default read concern", l)
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "Invalid rc level: %s", l)
		}
	}
	return bson.Doc(append([]byte(nil), d...)), nil
}

// checkDefaultWrite validates a defaultWriteConcern value with the
// write concern parser; w: 0 is refused, as in MongoDB. An empty document
// unsets the default (nil).
func checkDefaultWrite(v bson.Value, replSet bool) (bson.Doc, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'setDefaultRWConcern.defaultWriteConcern' is the wrong type '%s', expected type 'object'", v.Type)
	}
	d := v.Document()
	if d.Len() == 0 {
		return nil, nil
	}
	wc, err := ParseDoc(d, replSet)
	if err != nil {
		return nil, err
	}
	if wc.W == 0 && !wc.Majority && wc.Mode == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "The global default write concern cannot be set to { w: 0 }")
	}
	return bson.Doc(append([]byte(nil), d...)), nil
}
