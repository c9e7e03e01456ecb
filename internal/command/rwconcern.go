package command

import (
	"fmt"
	"github.com/cairndb/cairn/internal/exec"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Default read and write concerns.
//
// setDefaultRWConcern sets the server-wide defaults that getDefaultRWConcern
// reports and that write commands without a writeConcern (or with an empty
// one) use. MongoDB keeps them in config.settings on replica sets and
// sharded clusters; a standalone Cairn keeps them in the engine tree
// rwDefaultsTree, so they survive restarts. Until set, the defaults are
// MongoDB's implicit ones: read concern "local", and write concern {w: 1}
// on a standalone, {w: "majority"} on a replica set (MongoDB 5.0+).

const (
	rwDefaultsTree = "_rwdefaults"
	rwDefaultsKey  = "defaults"
)

// RWDefaults are the global default concerns (nil documents: implicit).
type RWDefaults struct {
	ReadConcern  bson.Doc
	WriteConcern bson.Doc
	Updated      time.Time
}

// rwDefaultsState caches the defaults, loaded from the engine on first use.
type rwDefaultsState struct {
	once sync.Once
	mu   sync.Mutex
	cur  RWDefaults
	err  error
}

func (e *Env) rwDefaults() (RWDefaults, error) {
	if e == nil || e.KV == nil { // unit tests without an engine
		return RWDefaults{}, nil
	}
	s := &e.rw
	s.once.Do(func() {
		s.err = e.KV.View(func(tx *exec.Tx) error {
			tr, err := tx.Tree(rwDefaultsTree)
			if err != nil {
				return nil // never set
			}
			raw, err := tr.Get([]byte(rwDefaultsKey))
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

// defaultWriteConcern returns the global default write concern document
// (nil if none was set).
func (e *Env) defaultWriteConcern() (bson.Doc, error) {
	d, err := e.rwDefaults()
	return d.WriteConcern, err
}

// getDefaultRWConcern reports the defaults.
func getDefaultRWConcern(c *Ctx) error {
	if err := newArgs(c).check("inMemory"); err != nil {
		return err
	}
	d, err := c.Env.rwDefaults()
	if err != nil {
		return err
	}
	appendRWDefaults(c.Reply, d, c.Env.Repl != nil)
	return nil
}

func appendRWDefaults(r *bson.Builder, d RWDefaults, replSet bool) {
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

// setDefaultRWConcern sets the global default read and/or write concern.
// An empty document unsets one.
func setDefaultRWConcern(c *Ctx) error {
	if err := newArgs(c).check("defaultReadConcern", "defaultWriteConcern"); err != nil {
		return err
	}
	rv, hasRead := c.Body.Lookup("defaultReadConcern")
	wv, hasWrite := c.Body.Lookup("defaultWriteConcern")
	if !hasRead && !hasWrite {
		return mongoerr.New(mongoerr.BadValue, `At least one of the "defaultReadConcern" or "defaultWriteConcern" fields must be present`)
	}
	cur, err := c.Env.rwDefaults()
	if err != nil {
		return err
	}
	next := cur
	if hasRead {
		if next.ReadConcern, err = checkDefaultReadConcern(rv); err != nil {
			return err
		}
	}
	if hasWrite {
		if next.WriteConcern, err = checkDefaultWriteConcern(wv, c.Env.Repl != nil); err != nil {
			return err
		}
	}
	next.Updated = time.Now()
	var b bson.Builder
	if next.ReadConcern != nil {
		b.AppendDocument("readConcern", next.ReadConcern)
	}
	if next.WriteConcern != nil {
		b.AppendDocument("writeConcern", next.WriteConcern)
	}
	b.AppendDateTime("updated", next.Updated.UnixMilli())
	doc := b.Finish()
	if err := c.writeTx(exec.Sync, func(tx *exec.Tx) error {
		tr, err := tx.CreateTreeIfNotExists(rwDefaultsTree)
		if err != nil {
			return err
		}
		return tr.Put([]byte(rwDefaultsKey), doc)
	}); err != nil {
		return fmt.Errorf("setDefaultRWConcern: %w", err)
	}
	s := &c.Env.rw
	s.mu.Lock()
	s.cur = next
	s.mu.Unlock()
	appendRWDefaults(c.Reply, next, c.Env.Repl != nil)
	return nil
}

// checkDefaultReadConcern validates a defaultReadConcern value; an empty
// document unsets the default (nil).
func checkDefaultReadConcern(v bson.Value) (bson.Doc, error) {
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

// checkDefaultWriteConcern validates a defaultWriteConcern value with the
// write concern parser; w: 0 is refused, as in MongoDB. An empty document
// unsets the default (nil).
func checkDefaultWriteConcern(v bson.Value, replSet bool) (bson.Doc, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'setDefaultRWConcern.defaultWriteConcern' is the wrong type '%s', expected type 'object'", v.Type)
	}
	d := v.Document()
	if d.Len() == 0 {
		return nil, nil
	}
	wc, err := parseWriteConcernDoc(d, replSet)
	if err != nil {
		return nil, err
	}
	if wc.w == 0 && !wc.majority && wc.mode == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "The global default write concern cannot be set to { w: 0 }")
	}
	return bson.Doc(append([]byte(nil), d...)), nil
}

// checkReadConcernShape checks a standalone's readConcern as mongod's IDL
// parses it: a document of level (one of mongod's five), afterClusterTime,
// atClusterTime, afterOpTime and provenance; an unknown level answers
// BadValue, an unknown field IDLUnknownField (what the levels and cluster
// times mean on a standalone is Dispatch's).
func checkReadConcernShape(rc bson.Value) error {
	if rc.Type == bson.TypeNull {
		return nil
	}
	if rc.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern' is the wrong type '%s', expected type 'object'", rc.Type)
	}
	it := rc.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "level":
			if e.Value.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.level' is the wrong type '%s', expected type 'string'", e.Value.Type)
			}
			switch l := e.Value.StringValue(); l {
			case "local", "available", "majority", "linearizable", "snapshot":
			default:
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'readConcern.level' is not a valid value.", l)
			}
		case "afterClusterTime", "atClusterTime", "afterOpTime", "provenance":
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'readConcern.%s' is an unknown field.", e.Key)
		}
	}
	return nil
}
