package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Write concerns.
//
// On a standalone, w > 1 and custom modes are refused before the write
// (BadValue, UnknownReplWriteConcern), as mongod refuses them. On a
// one-member replica set the write is applied and a concern the set cannot
// meet is reported after it, in writeConcernError, as mongod's
// waitForWriteConcern reports it: w: N with N > 1 is
// UnsatisfiableWriteConcern (100) "Not enough data-bearing nodes", a mode
// the configuration does not define UnknownReplWriteConcern (79). The
// majority of one member is the member: w: "majority" waits for the
// journal (writeConcernMajorityJournalDefault), and it is the implicit
// default of a replica set (MongoDB 5.0+). wtimeout bounds waiting for
// other members; a single member never waits for one, so it never fires.

// Write concern provenances, as mongod reports them in errInfo.
const (
	provClient   = "clientSupplied"
	provDefault  = "customDefault"
	provImplicit = "implicitDefault"
)

// writeConcern is a parsed writeConcern document.
type writeConcern struct {
	w        int64 // -1 for "majority" or a custom mode
	j        bool
	jSet     bool
	majority bool
	// mode is a custom w mode (a getLastErrorModes name).
	mode       string
	wtimeout   int64
	provenance string
}

// unacknowledged reports w: 0 without j: true.
func (wc writeConcern) unacknowledged() bool {
	return wc.w == 0 && !wc.majority && !wc.j && wc.mode == ""
}

// durability maps the write concern onto the engine: j: true and
// w: "majority" (journaled on a standalone and on a one-member set, as in
// MongoDB) wait for the journal flush, shared with every writer committing
// at that moment; everything else is acknowledged once applied and made
// durable within the journal commit interval.
func (wc writeConcern) durability() exec.Durability {
	if wc.j || wc.majority {
		return exec.Sync
	}
	return exec.Lazy
}

// appendDoc appends the write concern as mongod echoes it in errInfo.
func (wc writeConcern) appendDoc(b *bson.Builder, key string) {
	b.StartDocument(key)
	switch {
	case wc.majority:
		b.AppendString("w", "majority")
	case wc.mode != "":
		b.AppendString("w", wc.mode)
	default:
		b.AppendInt32("w", int32(wc.w))
	}
	if wc.jSet {
		b.AppendBool("j", wc.j)
	}
	b.AppendInt32("wtimeout", int32(wc.wtimeout))
	b.AppendString("provenance", wc.provenance)
	b.End()
}

// parseWriteConcern reads the command's writeConcern. Without one (or with
// an empty one) the global default applies (setDefaultRWConcern), else
// the implicit default: {w: 1} on a standalone, {w: "majority"} on a
// replica set.
func parseWriteConcern(c *Ctx) (writeConcern, error) {
	replSet := c.Env != nil && c.Env.Repl != nil
	v, ok := c.Body.Lookup("writeConcern")
	if ok && v.Type != bson.TypeNull && v.Type != bson.TypeDocument {
		return writeConcern{w: 1}, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'writeConcern' is the wrong type '%s', expected type 'object'", v.Type)
	}
	var wc writeConcern
	var err error
	if !ok || v.Type == bson.TypeNull || v.Document().Len() == 0 {
		d, err := c.Env.defaultWriteConcern()
		if err != nil {
			return writeConcern{w: 1}, err
		}
		switch {
		case d != nil:
			wc, err = parseWriteConcernDoc(d, replSet)
			wc.provenance = provDefault
		case replSet:
			wc = writeConcern{w: -1, majority: true, provenance: provImplicit}
		default:
			wc = writeConcern{w: 1, provenance: provImplicit}
		}
		if err != nil {
			return wc, err
		}
	} else {
		if wc, err = parseWriteConcernDoc(v.Document(), replSet); err != nil {
			return wc, err
		}
		wc.provenance = provClient
	}
	if replSet {
		c.wcPending = wc.satisfiable(c)
		c.wc = wc
	}
	return wc, nil
}

// satisfiable is the error a one-member set reports after applying a write
// with this concern (nil: met).
func (wc writeConcern) satisfiable(c *Ctx) *mongoerr.Error {
	cfg := c.Env.Repl.Status().Config
	if cfg == nil {
		return nil // the write itself fails: not primary
	}
	if wc.mode != "" {
		if err := cfg.CheckWriteMode(wc.mode); err != nil {
			return mongoerr.As(err)
		}
		return nil
	}
	if wc.w > int64(cfg.DataBearing()) {
		return mongoerr.New(mongoerr.UnsatisfiableWriteConcern, "Not enough data-bearing nodes")
	}
	return nil
}

// parseWriteConcernDoc parses a writeConcern document (missing w: 1). On a
// standalone (replSet false) w > 1 and custom modes are refused.
func parseWriteConcernDoc(d bson.Doc, replSet bool) (writeConcern, error) {
	wc := writeConcern{w: 1}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "w":
			switch e.Value.Type {
			case bson.TypeString:
				s := e.Value.StringValue()
				switch {
				case s == "majority":
					wc.majority = true
					wc.w = -1
				case replSet:
					wc.mode = s
					wc.w = -1
				default:
					return wc, mongoerr.New(mongoerr.UnknownReplWriteConcern, "No write concern mode named '%s' found in replica set configuration", s)
				}
			case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
				n, err := numberArg(e.Value)
				if err != nil {
					return wc, err
				}
				if n < 0 || n > 50 {
					return wc, mongoerr.New(mongoerr.FailedToParse, "w has to be a non-negative number and not greater than 50; found: %d", n)
				}
				if n > 1 && !replSet {
					return wc, mongoerr.New(mongoerr.BadValue, "cannot use 'w' > 1 on a standalone mongod")
				}
				wc.w = n
			default:
				return wc, mongoerr.New(mongoerr.FailedToParse, "w has to be a number or string; found: %s", e.Value.Type)
			}
		case "j":
			switch e.Value.Type {
			case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
				wc.j = e.Value.Truthy()
				wc.jSet = true
			default:
				return wc, mongoerr.New(mongoerr.FailedToParse, "j must be numeric or a boolean value")
			}
		case "fsync":
			if e.Value.Truthy() {
				wc.j = true
			}
		case "wtimeout", "wtimeoutMS":
			if !e.Value.IsNumber() {
				return wc, mongoerr.New(mongoerr.FailedToParse, "wtimeout must be a number")
			}
			wc.wtimeout, _ = e.Value.AsInt64()
		case "provenance", "getLastError":
		default:
			return wc, mongoerr.New(mongoerr.FailedToParse, "unrecognized write concern field: %s", e.Key)
		}
	}
	return wc, nil
}
