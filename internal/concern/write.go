// Package concern parses and holds MongoDB's read and write concerns: the
// writeConcern document of a command (Write), the server-wide defaults
// setDefaultRWConcern sets and getDefaultRWConcern reports (Defaults), and
// the shape of a readConcern (ParseRead). It knows the replica set's
// configuration only through repl.Config; waiting for a concern is the
// replica set's (internal/replset), and the commands that read and answer
// them are internal/command's.
package concern

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/repl"
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
	ProvClient   = "clientSupplied"
	ProvDefault  = "customDefault"
	ProvImplicit = "implicitDefault"
)

// Write is a parsed writeConcern document.
type Write struct {
	W        int64 // -1 for "majority" or a custom mode
	J        bool
	JSet     bool
	Majority bool
	// Mode is a custom w mode (a getLastErrorModes name).
	Mode       string
	WTimeout   int64
	Provenance string
	// Replicated is set by the caller on a member of a set of several
	// members, where a majority write is acknowledged only once Raft
	// committed it (Durability); it is not part of the document.
	Replicated bool
}

// Unacknowledged reports w: 0 without j: true.
func (wc Write) Unacknowledged() bool {
	return wc.W == 0 && !wc.Majority && !wc.J && wc.Mode == ""
}

// Durability maps the write concern onto the engine: j: true and
// w: "majority" (journaled on a standalone and on a one-member set, as in
// MongoDB) wait for the journal flush, shared with every writer committing
// at that moment; everything else is acknowledged once applied and made
// durable within the journal commit interval.
//
// On a member of a set of several members (Replicated), w: "majority"
// without j: true commits Lazy: its acknowledgement waits for the commit
// point to pass the write's oplog entry, which the primary moves only once
// it applied the Raft entry carrying it, after its own Raft log write of
// that entry committed with kv.Sync (internal/raftrepl's Ready loop saves
// a Ready's entries before it applies the committed ones). That commit
// comes after the write's in kv's commit order, and kv makes commits
// durable in that order, so the write is on the primary's disk before it
// is acknowledged, as well as in a majority's Raft logs; waiting for the
// write's own flush first only adds a flush to the write's path. j: true
// still waits for it.
func (wc Write) Durability() exec.Durability {
	if wc.J || (wc.Majority && !wc.Replicated) {
		return exec.Sync
	}
	return exec.Lazy
}

// NeedsWait reports whether a member of a set of several members waits for
// other members before acknowledging: w: "majority", a custom mode or w > 1.
func (wc Write) NeedsWait() bool {
	return !wc.Unacknowledged() && (wc.Majority || wc.Mode != "" || wc.W > 1)
}

// AppendDoc appends the write concern as mongod echoes it in errInfo.
func (wc Write) AppendDoc(b *bson.Builder, key string) {
	b.StartDocument(key)
	switch {
	case wc.Majority:
		b.AppendString("w", "majority")
	case wc.Mode != "":
		b.AppendString("w", wc.Mode)
	default:
		b.AppendInt32("w", int32(wc.W))
	}
	if wc.JSet {
		b.AppendBool("j", wc.J)
	}
	b.AppendInt32("wtimeout", int32(wc.WTimeout))
	b.AppendString("provenance", wc.Provenance)
	b.End()
}

// ParseCommand reads a command's writeConcern field (v, present when ok).
// Without one (or with an empty one) the global default applies (def, nil:
// none set), else the implicit default: {w: 1} on a standalone,
// {w: "majority"} on a replica set.
func ParseCommand(v bson.Value, ok bool, def bson.Doc, replSet bool) (Write, error) {
	if ok && v.Type != bson.TypeNull && v.Type != bson.TypeDocument {
		return Write{W: 1}, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'writeConcern' is the wrong type '%s', expected type 'object'", v.Type)
	}
	if ok && v.Type == bson.TypeDocument && v.Document().Len() > 0 {
		wc, err := ParseDoc(v.Document(), replSet)
		if err != nil {
			return wc, err
		}
		wc.Provenance = ProvClient
		return wc, nil
	}
	switch {
	case def != nil:
		wc, err := ParseDoc(def, replSet)
		wc.Provenance = ProvDefault
		return wc, err
	case replSet:
		return Write{W: -1, Majority: true, Provenance: ProvImplicit}, nil
	default:
		return Write{W: 1, Provenance: ProvImplicit}, nil
	}
}

// Satisfiable is the error a one-member set reports after applying a write
// with this concern under cfg (nil: met).
func (wc Write) Satisfiable(cfg *repl.Config) *mongoerr.Error {
	if cfg == nil {
		return nil // the write itself fails: not primary
	}
	if wc.Mode != "" {
		if err := cfg.CheckWriteMode(wc.Mode); err != nil {
			return mongoerr.As(err)
		}
		return nil
	}
	if wc.W > int64(cfg.DataBearing()) {
		return mongoerr.New(mongoerr.UnsatisfiableWriteConcern, "Not enough data-bearing nodes")
	}
	return nil
}

// ParseDoc parses a writeConcern document (missing w: 1). On a
// standalone (replSet false) w > 1 and custom modes are refused.
func ParseDoc(d bson.Doc, replSet bool) (Write, error) {
	wc := Write{W: 1}
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
					wc.Majority = true
					wc.W = -1
				case replSet:
					wc.Mode = s
					wc.W = -1
				default:
					return wc, mongoerr.New(mongoerr.UnknownReplWriteConcern, "No write concern mode named '%s' found in replica set configuration", s)
				}
			case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
				n, err := query.SafeInt64(e.Value)
				if err != nil {
					return wc, err
				}
				if n < 0 || n > 50 {
					return wc, mongoerr.New(mongoerr.FailedToParse, "w has to be a non-negative number and not greater than 50; found: %d", n)
				}
				if n > 1 && !replSet {
					return wc, mongoerr.New(mongoerr.BadValue, "cannot use 'w' > 1 on a standalone mongod")
				}
				wc.W = n
			default:
				return wc, mongoerr.New(mongoerr.FailedToParse, "w has to be a number or string; found: %s", e.Value.Type)
			}
		case "j":
			switch e.Value.Type {
			case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
				wc.J = e.Value.Truthy()
				wc.JSet = true
			default:
				return wc, mongoerr.New(mongoerr.FailedToParse, "j must be numeric or a boolean value")
			}
		case "fsync":
			if e.Value.Truthy() {
				wc.J = true
			}
		case "wtimeout", "wtimeoutMS":
			if !e.Value.IsNumber() {
				return wc, mongoerr.New(mongoerr.FailedToParse, "wtimeout must be a number")
			}
			wc.WTimeout, _ = e.Value.AsInt64()
		case "provenance", "getLastError":
		default:
			return wc, mongoerr.New(mongoerr.FailedToParse, "unrecognized write concern field: %s", e.Key)
		}
	}
	return wc, nil
}

// userWriteCommands are the commands besides write ones that take a write
// concern.
var userWriteCommands = map[string]bool{
	"createUser": true, "updateUser": true, "dropUser": true, "dropAllUsersFromDatabase": true,
	"grantRolesToUser": true, "revokeRolesFromUser": true, "createRole": true, "updateRole": true,
	"dropRole": true, "dropAllRolesFromDatabase": true, "grantRolesToRole": true, "revokeRolesFromRole": true,
	"grantPrivilegesToRole": true, "revokePrivilegesFromRole": true,
	"commitTransaction": true, "abortTransaction": true,
}

// TakesWriteConcern reports whether command name (a write command when
// write) accepts a write concern (mongod's supportsWriteConcern): the
// writes and DDL, user and role management, and an aggregate ending in
// $out or $merge (writeStage: body's, "" if none; called only for an
// aggregate).
func TakesWriteConcern(name string, write bool, writeStage func() string) bool {
	if name == "compact" {
		return false // a write command that takes no write concern in mongod
	}
	if write || userWriteCommands[name] {
		return true
	}
	return name == "aggregate" && writeStage() != ""
}
