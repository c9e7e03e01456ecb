package command

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// replEnv is memEnv in replica-set mode: a repl.Set and its oplog.
func oplogEnv(t *testing.T) *Env {
	t.Helper()
	env := memEnv(t)
	env.Repl = repl.NewSet("rs0", nil)
	env.Repl.SetMe("h:1")
	l, err := oplog.Open(env.KV, env.Repl.Clock, oplog.Config{MaxBytes: 64 << 20}, func() int64 { return 64 << 20 })
	if err != nil {
		t.Fatal(err)
	}
	l.Term = env.Repl.WriteTerm
	env.Oplog = l
	if err := env.AttachRepl(false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Repl.Stop)
	if r := runOplogCmd(t, env, "admin", dbson.D{{Key: "replSetInitiate", Value: dbson.D{}}}); replyCode(r) != 0 {
		t.Fatalf("replSetInitiate: %s", r.String())
	}
	return env
}

// runIn runs a command on db and returns its reply.
func runOplogCmd(t *testing.T, env *Env, db string, body dbson.D) bson.Doc {
	t.Helper()
	raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: db}))
	if err != nil {
		t.Fatal(err)
	}
	c := &Ctx{Context: context.Background(), Env: env, DB: db, Body: bson.Doc(raw), Reply: &bson.Builder{}}
	return bson.Doc(append([]byte(nil), Dispatch(c)...))
}

// oplogAfter returns the entries after ts, each checked for the fields
// every entry has (ts as its key, t: int64 1, v: int64 2, wall a date)
// and printed without ts, t, v and wall, with ui shown as UI.
func oplogAfter(t *testing.T, env *Env, after repl.Timestamp) (lines []string, last repl.Timestamp) {
	t.Helper()
	last = after
	err := env.KV.View(func(tx *kv.Tx) error {
		r, err := oplog.Entries(tx, after+1)
		if err != nil {
			return err
		}
		for r.Next() {
			e := r.Entry()
			ts, _ := e.Lookup("ts")
			tt, ti := ts.Timestamp()
			if ts.Type != bson.TypeTimestamp || repl.MakeTimestamp(tt, ti) != r.TS() || r.TS() <= last {
				t.Errorf("entry %s: ts is not its key %v or not increasing", e.String(), r.TS())
			}
			last = r.TS()
			if v, _ := e.Lookup("t"); v.Type != bson.TypeInt64 || v.Int64() != 1 {
				t.Errorf("entry %s: t", e.String())
			}
			if v, _ := e.Lookup("v"); v.Type != bson.TypeInt64 || v.Int64() != 2 {
				t.Errorf("entry %s: v", e.String())
			}
			if v, _ := e.Lookup("wall"); v.Type != bson.TypeDateTime {
				t.Errorf("entry %s: wall", e.String())
			}
			var b bson.Builder
			it := e.Iter()
			for it.Next() {
				el := it.Element()
				switch el.Key {
				case "ts", "t", "v", "wall":
				case "ui":
					if st, d := el.Value.Binary(); el.Value.Type != bson.TypeBinary || st != 4 || len(d) != 16 {
						t.Errorf("entry %s: ui", e.String())
					}
					b.AppendString("ui", "UI")
				default:
					b.AppendElement(el)
				}
			}
			lines = append(lines, b.Finish().String())
		}
		return r.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines, last
}

// TestOplogEntryShapes runs each kind of write and checks the entries it
// logs, field for field in mongod 7.0's order.
func TestOplogEntryShapes(t *testing.T) {
	env := oplogEnv(t)
	d := func(kv ...any) dbson.D {
		var out dbson.D
		for i := 0; i < len(kv); i += 2 {
			out = append(out, dbson.E{Key: kv[i].(string), Value: kv[i+1]})
		}
		return out
	}
	steps := []struct {
		db   string
		cmd  dbson.D
		want []string
	}{
		{"t", d("create", "c", "validator", d("a", d("$type", "int"))), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { create: "c", validator: { a: { $type: "int" } }, idIndex: { v: 2, key: { _id: 1 }, name: "_id_" } } }`}},
		{"t", d("insert", "c", "documents", dbson.A{d("_id", 1, "a", 1, "pad", "0123456789abcdef"), d("_id", 2, "a", 2)}), []string{
			`{ op: "i", ns: "t.c", ui: "UI", o: { _id: 1, a: 1, pad: "0123456789abcdef" }, o2: { _id: 1 } }`,
			`{ op: "i", ns: "t.c", ui: "UI", o: { _id: 2, a: 2 }, o2: { _id: 2 } }`}},
		{"t", d("insert", "implicit", "documents", dbson.A{d("_id", "x")}), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { create: "implicit", idIndex: { v: 2, key: { _id: 1 }, name: "_id_" } } }`,
			`{ op: "i", ns: "t.implicit", ui: "UI", o: { _id: "x" }, o2: { _id: "x" } }`}},
		{"t", d("update", "c", "updates", dbson.A{d("q", d("_id", 1), "u", d("$set", d("a", 5, "b", "new")))}), []string{
			`{ op: "u", ns: "t.c", ui: "UI", o: { $v: 2, diff: { u: { a: 5 }, i: { b: "new" } } }, o2: { _id: 1 } }`}},
		{"t", d("update", "c", "updates", dbson.A{d("q", d("_id", 1), "u", d("$set", d("a", 5)))}), nil}, // no change: no entry
		{"t", d("update", "c", "updates", dbson.A{d("q", d("_id", 2), "u", d("a", 7, "z", 1))}), []string{
			`{ op: "u", ns: "t.c", ui: "UI", o: { _id: 2, a: 7, z: 1 }, o2: { _id: 2 } }`}},
		{"t", d("update", "c", "updates", dbson.A{d("q", d("_id", 3), "u", d("$set", d("a", 3, "p", "0123456789abcdef", "q", "0123456789abcdef")), "upsert", true)}), []string{
			`{ op: "i", ns: "t.c", ui: "UI", o: { _id: 3, a: 3, p: "0123456789abcdef", q: "0123456789abcdef" }, o2: { _id: 3 } }`}},
		{"t", d("findAndModify", "c", "query", d("_id", 3), "update", d("$unset", d("p", 1))), []string{
			`{ op: "u", ns: "t.c", ui: "UI", o: { $v: 2, diff: { d: { p: false } } }, o2: { _id: 3 } }`}},
		{"t", d("update", "c", "updates", dbson.A{d("q", d("_id", 3), "u", dbson.A{d("$set", d("a", 4))})}), []string{
			`{ op: "u", ns: "t.c", ui: "UI", o: { $v: 2, diff: { u: { a: 4 } } }, o2: { _id: 3 } }`}},
		{"t", d("delete", "c", "deletes", dbson.A{d("q", d("_id", 3), "limit", 1)}), []string{
			`{ op: "d", ns: "t.c", ui: "UI", o: { _id: 3 } }`}},
		{"t", d("createIndexes", "empty", "indexes", dbson.A{d("key", d("k", 1), "name", "k_1")}), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { create: "empty", idIndex: { v: 2, key: { _id: 1 }, name: "_id_" } } }`,
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { createIndexes: "empty", v: 2, key: { k: 1 }, name: "k_1" } }`}},
		{"t", d("createIndexes", "c", "indexes", dbson.A{d("key", d("a", 1), "name", "a_1")}), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { startIndexBuild: "c", indexBuildUUID: UUID, indexes: [ { v: 2, key: { a: 1 }, name: "a_1" } ] } }`,
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { commitIndexBuild: "c", indexBuildUUID: UUID, indexes: [ { v: 2, key: { a: 1 }, name: "a_1" } ] } }`}},
		{"t", d("dropIndexes", "c", "index", "a_1"), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { dropIndexes: "c", index: "a_1" }, o2: { v: 2, key: { a: 1 }, name: "a_1" } }`}},
		{"t", d("collMod", "c", "validationLevel", "moderate"), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { collMod: "c", validationLevel: "moderate" } }`}},
		{"t", d("insert", "other", "documents", dbson.A{d("_id", 1)}), nil}, // checked below: create + insert
		{"admin", d("renameCollection", "t.c", "to", "t.r", "dropTarget", true), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { renameCollection: "t.c", to: "t.r", stayTemp: false } }`}},
		{"admin", d("renameCollection", "t.r", "to", "t.other", "dropTarget", true), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { renameCollection: "t.r", to: "t.other", stayTemp: false, dropTarget: UUID } }`}},
		{"t", d("drop", "implicit"), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { drop: "implicit" } }`}},
		{"local", d("insert", "scratch", "documents", dbson.A{d("_id", 1)}), nil}, // local: not logged
		{"t", d("dropDatabase", 1), []string{
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { drop: "empty" } }`,
			`{ op: "c", ns: "t.$cmd", ui: "UI", o: { drop: "other" } }`,
			`{ op: "c", ns: "t.$cmd", o: { dropDatabase: 1 } }`}},
	}
	// The set's initiation wrote its no-op entry first.
	init, last := oplogAfter(t, env, 0)
	if len(init) != 1 || init[0] != `{ op: "n", ns: "", o: { msg: "initiating set" } }` {
		t.Fatalf("initiation entries: %q", init)
	}
	for i, s := range steps {
		if r := runOplogCmd(t, env, s.db, s.cmd); !ok(r) || strings.Contains(r.String(), "writeErrors") {
			t.Fatalf("step %d %v: %s", i, s.cmd[0], r.String())
		}
		got, next := oplogAfter(t, env, last)
		last = next
		if s.cmd[0].Key == "insert" && s.cmd[0].Value == "other" {
			if len(got) != 2 || !strings.HasPrefix(got[0], `{ op: "c"`) {
				t.Errorf("step %d: %q", i, got)
			}
			continue
		}
		for j := range got {
			got[j] = uuidRE.ReplaceAllString(got[j], "UUID")
		}
		if strings.Join(got, "\n") != strings.Join(s.want, "\n") {
			t.Errorf("step %d %v:\n got  %s\n want %s", i, s.cmd[0], strings.Join(got, "\n      "), strings.Join(s.want, "\n      "))
		}
	}
	// The drop of the live oplog is refused, as mongod's.
	if r := runOplogCmd(t, env, "local", d("drop", "oplog.rs")); ok(r) || !strings.Contains(r.String(), "can't drop live oplog") {
		t.Errorf("drop of the oplog: %s", r.String())
	}
}

var uuidRE = regexp.MustCompile(`UUID\("[0-9a-f-]+"\)`)

// TestReplSetResizeOplog checks the command's validation (mongod 7.0's
// IDL errors) and that a new size reaches the catalog and the log.
func TestReplSetResizeOplog(t *testing.T) {
	env := oplogEnv(t)
	d := func(kv ...any) dbson.D {
		var out dbson.D
		for i := 0; i < len(kv); i += 2 {
			out = append(out, dbson.E{Key: kv[i].(string), Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		cmd  dbson.D
		want string
	}{
		{d("replSetResizeOplog", 1, "size", 900), "code: 51024"},
		{d("replSetResizeOplog", 1, "size", -1024), "code: 51024"},
		{d("replSetResizeOplog", 1, "size", float64(8<<40)), "code: 51024"},
		{d("replSetResizeOplog", 1, "size", 990, "minRetentionHours", -1), "code: 51024"},
		{d("replSetResizeOplog", 1, "size", "big"), "code: 14"},
		{d("replSetResizeOplog", 1, "bogus", 1), "code: 40415"},
		{d("replSetResizeOplog", 1), "code: 72"},
	} {
		if r := runOplogCmd(t, env, "admin", c.cmd); ok(r) || !strings.Contains(r.String(), c.want) {
			t.Errorf("%v: %s, want %s", c.cmd, r.String(), c.want)
		}
	}
	if r := runOplogCmd(t, env, "admin", d("replSetResizeOplog", 1, "size", float64(1<<30), "minRetentionHours", 5)); !ok(r) {
		t.Fatalf("1 PB: %s", r.String())
	}
	if env.Oplog.Size() != 1<<50 || env.Oplog.MinRetention() != 5*time.Hour {
		t.Fatalf("size %d, retention %v", env.Oplog.Size(), env.Oplog.MinRetention())
	}
	if r := runOplogCmd(t, env, "admin", d("replSetResizeOplog", 1, "minRetentionHours", 1.5)); !ok(r) || env.Oplog.MinRetention() != 90*time.Minute || env.Oplog.Size() != 1<<50 {
		t.Fatalf("retention alone: %s, %v", r.String(), env.Oplog.MinRetention())
	}
	err := env.KV.View(func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, oplog.DB, oplog.Coll)
		if err != nil {
			return err
		}
		if size, _ := oplog.SizeOf(coll); size != 1<<50 {
			t.Errorf("catalog size %d", size)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A standalone has no oplog.
	if r := runOplogCmd(t, memEnv(t), "admin", d("replSetResizeOplog", 1, "size", 1000)); ok(r) || !strings.Contains(r.String(), "code: 26") {
		t.Errorf("standalone: %s", r.String())
	}
}

// TestOplogRefusesClientWrites: the oplog is keyed by ts and written only
// by the oplog writer; a client's insert into it is refused.
func TestOplogRefusesClientWrites(t *testing.T) {
	env := oplogEnv(t)
	body := dbson.D{{Key: "insert", Value: "oplog.rs"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}}}}}
	if r := runOplogCmd(t, env, "local", body); !strings.Contains(r.String(), "cannot write to 'local.oplog.rs'") {
		t.Fatalf("insert into the oplog: %s", r.String())
	}
}
