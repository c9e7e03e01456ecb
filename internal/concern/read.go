package concern

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
)

// CheckShape checks a standalone's readConcern as mongod's IDL parses it:
// a document of level (one of mongod's five), afterClusterTime,
// atClusterTime, afterOpTime and provenance; an unknown level answers
// BadValue, an unknown field IDLUnknownField (what the levels and cluster
// times mean on a standalone is CheckStandalone's).
func CheckShape(rc bson.Value) error {
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

// CheckStandalone checks a standalone's readConcern (rc, present when ok):
// its shape, then what a server without a replica set cannot serve.
func CheckStandalone(rc bson.Value, ok bool) error {
	if !ok {
		return nil
	}
	if err := CheckShape(rc); err != nil {
		return err
	}
	if rc.Type != bson.TypeDocument {
		return nil
	}
	// A standalone has no replica set to read a snapshot across
	// batches or to confirm a linearizable read.
	if l, _ := rc.Document().Lookup("level"); l.Type == bson.TypeString {
		switch l.StringValue() {
		case "snapshot":
			return mongoerr.New(mongoerr.NotAReplicaSet, "node needs to be a replica set member to use readConcern: snapshot")
		case "linearizable":
			return mongoerr.New(mongoerr.NotAReplicaSet, "node needs to be a replica set member to use read concern")
		}
	}
	// A standalone has no cluster time to wait for.
	for _, name := range []string{"afterClusterTime", "atClusterTime"} {
		if _, ok := rc.Document().Lookup(name); ok {
			return mongoerr.New(mongoerr.IllegalOperation, "Cannot specify %s readConcern without replication enabled", name)
		}
	}
	if _, ok := rc.Document().Lookup("afterOpTime"); ok {
		return mongoerr.New(mongoerr.NotAReplicaSet, "node needs to be a replica set member to use read concern")
	}
	return nil
}

// Read is a replica-set member's parsed readConcern.
type Read struct {
	// Majority, Linearizable and Snapshot name the level (none: local or
	// available).
	Majority, Linearizable, Snapshot bool
	// After is afterClusterTime (or afterOpTime's ts, AfterOpTime set),
	// At atClusterTime.
	After, At       repl.Timestamp
	HasAfter, HasAt bool
	AfterOpTime     bool
}

// ReadCommand is what ParseRead needs of the command the readConcern
// comes with.
type ReadCommand struct {
	Name string
	Body bson.Doc
	// Primary: the member is a writable primary.
	Primary bool
	// WriteStage is the pipeline's $out or $merge ("" if none).
	WriteStage string
	// InTxn: the command is a statement of a transaction (or starts one).
	InTxn bool
}

// SnapshotReadCommands are the commands that take readConcern snapshot
// outside a transaction (mongod 5.0+).
var SnapshotReadCommands = map[string]bool{"find": true, "aggregate": true, "distinct": true}

// ParseRead parses a replica-set member's readConcern document by
// mongod's rules (ReadConcernArgs and the commands' supportsReadConcern).
func ParseRead(rc bson.Doc, cmd ReadCommand) (Read, error) {
	var r Read
	it := rc.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "level":
			if e.Value.Type != bson.TypeString {
				return r, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.level' is the wrong type '%s', expected type 'string'", e.Value.Type)
			}
			switch l := e.Value.StringValue(); l {
			case "local", "available":
			case "majority":
				r.Majority = true
			case "linearizable":
				if !cmd.Primary {
					return r, mongoerr.New(mongoerr.NotWritablePrimary, "cannot satisfy linearizable read concern on non-primary node")
				}
				if cmd.WriteStage != "" && cmd.Name == "aggregate" {
					return r, mongoerr.New(mongoerr.InvalidOptions, "%s cannot be used with a 'linearizable' read concern level", cmd.WriteStage)
				}
				r.Linearizable = true
			case "snapshot":
				r.Snapshot = true
			default:
				return r, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'readConcern.level' is not a valid value.", l)
			}
		case "afterClusterTime":
			if e.Value.Type != bson.TypeTimestamp {
				return r, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.afterClusterTime' is the wrong type '%s', expected type 'timestamp'", e.Value.Type)
			}
			t, i := e.Value.Timestamp()
			if r.After = repl.MakeTimestamp(t, i); r.After == 0 {
				return r, mongoerr.New(mongoerr.InvalidOptions, "readConcern afterClusterTime cannot be a null timestamp")
			}
			r.HasAfter = true
		case "afterOpTime":
			if e.Value.Type != bson.TypeDocument {
				return r, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.afterOpTime' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			ts, ok := e.Value.Document().Lookup("ts")
			if !ok || ts.Type != bson.TypeTimestamp {
				return r, mongoerr.New(mongoerr.TypeMismatch, "readConcern.afterOpTime must be an optime {ts: Timestamp, t: long}")
			}
			t, i := ts.Timestamp()
			r.After = max(r.After, repl.MakeTimestamp(t, i))
			r.AfterOpTime = true
		case "atClusterTime":
			if e.Value.Type != bson.TypeTimestamp {
				return r, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.atClusterTime' is the wrong type '%s', expected type 'timestamp'", e.Value.Type)
			}
			t, i := e.Value.Timestamp()
			if r.At = repl.MakeTimestamp(t, i); r.At == 0 {
				return r, mongoerr.New(mongoerr.InvalidOptions, "readConcern atClusterTime cannot be a null timestamp")
			}
			r.HasAt = true
		case "provenance":
		default:
			return r, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'readConcern.%s' is an unknown field.", e.Key)
		}
	}
	return r, r.checkSnapshot(cmd)
}

// checkSnapshot checks the snapshot level and atClusterTime.
func (r Read) checkSnapshot(cmd ReadCommand) error {
	if r.HasAfter && r.HasAt {
		return mongoerr.New(mongoerr.InvalidOptions, "Can not specify both afterClusterTime and atClusterTime")
	}
	if r.HasAt && !r.Snapshot {
		return mongoerr.New(mongoerr.InvalidOptions, "atClusterTime field can be set only if level is equal to snapshot")
	}
	if r.AfterOpTime && r.Snapshot {
		return mongoerr.New(mongoerr.InvalidOptions, "afterOpTime field cannot be set if level is equal to snapshot")
	}
	if r.Snapshot && !cmd.InTxn && !SnapshotReadCommands[cmd.Name] {
		return mongoerr.New(mongoerr.InvalidOptions, "Command %s does not support { readConcern: { level: \"snapshot\" } } :: caused by :: read concern not supported", cmd.Name)
	}
	if r.Snapshot && cmd.Name == "aggregate" {
		if p, ok := cmd.Body.Lookup("pipeline"); ok && p.Type == bson.TypeArray {
			it := p.Document().Iter()
			for it.Next() {
				st := it.Element().Value
				if st.Type != bson.TypeDocument {
					continue
				}
				if f := st.Document().Iter(); f.Next() && (f.Element().Key == "$out" || f.Element().Key == "$merge") {
					return mongoerr.New(mongoerr.InvalidOptions, "%s cannot be used with a 'snapshot' read concern level", f.Element().Key)
				}
			}
		}
	}
	return nil
}
