package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// writeConcern is a parsed writeConcern document.
type writeConcern struct {
	w        int64 // -1 for "majority"
	j        bool
	jSet     bool
	majority bool
}

// unacknowledged reports w: 0 without j: true.
func (wc writeConcern) unacknowledged() bool { return wc.w == 0 && !wc.majority && !wc.j }

// durability maps the write concern onto the engine: j: true and
// w: "majority" (which on a standalone means journaled, as in MongoDB) wait
// for the journal flush, shared with every writer committing at that moment;
// everything else is acknowledged once applied and made durable within the
// journal commit interval.
func (wc writeConcern) durability() exec.Durability {
	if wc.j || wc.majority {
		return exec.Sync
	}
	return exec.Lazy
}

// parseWriteConcern reads the command's writeConcern. Without one (or with
// an empty one) the global default applies (setDefaultRWConcern), else
// {w: 1}.
func parseWriteConcern(c *Ctx) (writeConcern, error) {
	v, ok := c.Body.Lookup("writeConcern")
	if ok && v.Type != bson.TypeNull && v.Type != bson.TypeDocument {
		return writeConcern{w: 1}, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'writeConcern' is the wrong type '%s', expected type 'object'", v.Type)
	}
	if !ok || v.Type == bson.TypeNull || v.Document().Len() == 0 {
		d, err := c.Env.defaultWriteConcern()
		if err != nil || d == nil {
			return writeConcern{w: 1}, err
		}
		return parseWriteConcernDoc(d)
	}
	return parseWriteConcernDoc(v.Document())
}

// parseWriteConcernDoc parses a writeConcern document (missing w: 1).
func parseWriteConcernDoc(d bson.Doc) (writeConcern, error) {
	wc := writeConcern{w: 1}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "w":
			switch e.Value.Type {
			case bson.TypeString:
				if e.Value.StringValue() != "majority" {
					return wc, mongoerr.New(mongoerr.UnknownReplWriteConcern, "No write concern mode named '%s' found in replica set configuration", e.Value.StringValue())
				}
				wc.majority = true
				wc.w = -1
			case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
				n, err := numberArg(e.Value)
				if err != nil {
					return wc, err
				}
				if n < 0 || n > 50 {
					return wc, mongoerr.New(mongoerr.FailedToParse, "w has to be a non-negative number and not greater than 50; found: %d", n)
				}
				if n > 1 {
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
		case "wtimeout", "wtimeoutMS", "provenance", "getLastError":
			// A standalone never waits for replication, so wtimeout never fires.
		default:
			return wc, mongoerr.New(mongoerr.FailedToParse, "unrecognized write concern field: %s", e.Key)
		}
	}
	return wc, nil
}
