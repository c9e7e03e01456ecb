package concern

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
)

func doc(build func(b *bson.Builder)) bson.Doc {
	var b bson.Builder
	build(&b)
	return b.Finish()
}

func code(err error) int32 {
	if err == nil {
		return 0
	}
	return mongoerr.As(err).Code
}

func TestParseDoc(t *testing.T) {
	cases := []struct {
		name    string
		d       bson.Doc
		replSet bool
		want    Write
		code    int32
	}{
		{"empty", doc(func(b *bson.Builder) {}), false, Write{W: 1}, 0},
		{"majority", doc(func(b *bson.Builder) { b.AppendString("w", "majority") }), false, Write{W: -1, Majority: true}, 0},
		{"mode on a set", doc(func(b *bson.Builder) { b.AppendString("w", "dc1") }), true, Write{W: -1, Mode: "dc1"}, 0},
		{"mode standalone", doc(func(b *bson.Builder) { b.AppendString("w", "dc1") }), false, Write{}, mongoerr.UnknownReplWriteConcern},
		{"w2 standalone", doc(func(b *bson.Builder) { b.AppendInt32("w", 2) }), false, Write{}, mongoerr.BadValue},
		{"w2 set", doc(func(b *bson.Builder) { b.AppendInt32("w", 2) }), true, Write{W: 2}, 0},
		{"w51", doc(func(b *bson.Builder) { b.AppendInt32("w", 51) }), true, Write{}, mongoerr.FailedToParse},
		{"j", doc(func(b *bson.Builder) { b.AppendBool("j", true) }), false, Write{W: 1, J: true, JSet: true}, 0},
		{"fsync", doc(func(b *bson.Builder) { b.AppendBool("fsync", true) }), false, Write{W: 1, J: true}, 0},
		{"wtimeout", doc(func(b *bson.Builder) { b.AppendInt32("wtimeout", 5) }), false, Write{W: 1, WTimeout: 5}, 0},
		{"bad wtimeout", doc(func(b *bson.Builder) { b.AppendString("wtimeout", "x") }), false, Write{}, mongoerr.FailedToParse},
		{"unknown", doc(func(b *bson.Builder) { b.AppendInt32("x", 1) }), false, Write{}, mongoerr.FailedToParse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDoc(tc.d, tc.replSet)
			if code(err) != tc.code {
				t.Fatalf("err %v, want code %d", err, tc.code)
			}
			if err == nil && got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseCommandDefaults(t *testing.T) {
	def := doc(func(b *bson.Builder) { b.AppendInt32("w", 1); b.AppendBool("j", true) })
	cases := []struct {
		name    string
		v       bson.Value
		ok      bool
		def     bson.Doc
		replSet bool
		prov    string
		dur     exec.Durability
		unack   bool
	}{
		{"implicit standalone", bson.Value{}, false, nil, false, ProvImplicit, exec.Lazy, false},
		{"implicit set", bson.Value{}, false, nil, true, ProvImplicit, exec.Sync, false},
		{"custom default", bson.Value{}, false, def, true, ProvDefault, exec.Sync, false},
		{"client w0", bson.Value{Type: bson.TypeDocument, Data: doc(func(b *bson.Builder) { b.AppendInt32("w", 0) })}, true, def, false, ProvClient, exec.Lazy, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wc, err := ParseCommand(tc.v, tc.ok, tc.def, tc.replSet)
			if err != nil {
				t.Fatal(err)
			}
			if wc.Provenance != tc.prov || wc.Durability() != tc.dur || wc.Unacknowledged() != tc.unack {
				t.Fatalf("got %+v (durability %v)", wc, wc.Durability())
			}
		})
	}
	if _, err := ParseCommand(bson.Value{Type: bson.TypeInt32, Data: []byte{1, 0, 0, 0}}, true, nil, false); code(err) != mongoerr.TypeMismatch {
		t.Fatalf("writeConcern: 1 answered %v", err)
	}
}

func TestSatisfiable(t *testing.T) {
	cfg := repl.DefaultConfig("rs0", "localhost:27017")
	if e := (Write{W: 2}).Satisfiable(cfg); e == nil || e.Code != mongoerr.UnsatisfiableWriteConcern {
		t.Fatalf("w: 2 on one member: %v", e)
	}
	if e := (Write{W: -1, Mode: "nope"}).Satisfiable(cfg); e == nil || e.Code != mongoerr.UnknownReplWriteConcern {
		t.Fatalf("unknown mode: %v", e)
	}
	if e := (Write{W: 1}).Satisfiable(cfg); e != nil {
		t.Fatalf("w: 1: %v", e)
	}
	if !(Write{W: 2}).NeedsWait() || (Write{W: 1}).NeedsWait() || (Write{W: 0}).NeedsWait() || !(Write{W: -1, Majority: true}).NeedsWait() {
		t.Fatal("NeedsWait")
	}
}

func TestCheckStandalone(t *testing.T) {
	rc := func(build func(b *bson.Builder)) bson.Value {
		return bson.Value{Type: bson.TypeDocument, Data: doc(build)}
	}
	cases := []struct {
		name string
		v    bson.Value
		code int32
	}{
		{"local", rc(func(b *bson.Builder) { b.AppendString("level", "local") }), 0},
		{"bad level", rc(func(b *bson.Builder) { b.AppendString("level", "x") }), mongoerr.BadValue},
		{"unknown field", rc(func(b *bson.Builder) { b.AppendInt32("x", 1) }), mongoerr.IDLUnknownField},
		{"snapshot", rc(func(b *bson.Builder) { b.AppendString("level", "snapshot") }), mongoerr.NotAReplicaSet},
		{"linearizable", rc(func(b *bson.Builder) { b.AppendString("level", "linearizable") }), mongoerr.NotAReplicaSet},
		{"afterClusterTime", rc(func(b *bson.Builder) { b.AppendTimestamp("afterClusterTime", 1, 1) }), mongoerr.IllegalOperation},
		{"afterOpTime", rc(func(b *bson.Builder) { b.AppendDocument("afterOpTime", doc(func(*bson.Builder) {})) }), mongoerr.NotAReplicaSet},
		{"not a document", bson.Value{Type: bson.TypeInt32, Data: []byte{1, 0, 0, 0}}, mongoerr.TypeMismatch},
		{"null", bson.Value{Type: bson.TypeNull}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := code(CheckStandalone(tc.v, true)); got != tc.code {
				t.Fatalf("code %d, want %d", got, tc.code)
			}
		})
	}
}

func TestParseRead(t *testing.T) {
	pipeline := doc(func(b *bson.Builder) {
		b.AppendString("aggregate", "c")
		b.StartArray("pipeline")
		b.StartDocument("0")
		b.AppendString("$out", "x")
		b.End()
		b.End()
	})
	cases := []struct {
		name string
		rc   bson.Doc
		cmd  ReadCommand
		code int32
		want Read
	}{
		{"majority", doc(func(b *bson.Builder) { b.AppendString("level", "majority") }), ReadCommand{Name: "find"}, 0, Read{Majority: true}},
		{"linearizable on a secondary", doc(func(b *bson.Builder) { b.AppendString("level", "linearizable") }), ReadCommand{Name: "find"}, mongoerr.NotWritablePrimary, Read{}},
		{"linearizable $out", doc(func(b *bson.Builder) { b.AppendString("level", "linearizable") }), ReadCommand{Name: "aggregate", Primary: true, WriteStage: "$out"}, mongoerr.InvalidOptions, Read{}},
		{"snapshot at", doc(func(b *bson.Builder) { b.AppendString("level", "snapshot"); b.AppendTimestamp("atClusterTime", 5, 1) }), ReadCommand{Name: "find"}, 0, Read{Snapshot: true, At: repl.MakeTimestamp(5, 1), HasAt: true}},
		{"at without snapshot", doc(func(b *bson.Builder) { b.AppendTimestamp("atClusterTime", 5, 1) }), ReadCommand{Name: "find"}, mongoerr.InvalidOptions, Read{}},
		{"after and at", doc(func(b *bson.Builder) {
			b.AppendString("level", "snapshot")
			b.AppendTimestamp("atClusterTime", 5, 1)
			b.AppendTimestamp("afterClusterTime", 5, 1)
		}), ReadCommand{Name: "find"}, mongoerr.InvalidOptions, Read{}},
		{"null afterClusterTime", doc(func(b *bson.Builder) { b.AppendTimestamp("afterClusterTime", 0, 0) }), ReadCommand{Name: "find"}, mongoerr.InvalidOptions, Read{}},
		{"snapshot count", doc(func(b *bson.Builder) { b.AppendString("level", "snapshot") }), ReadCommand{Name: "count"}, mongoerr.InvalidOptions, Read{}},
		{"snapshot count in a transaction", doc(func(b *bson.Builder) { b.AppendString("level", "snapshot") }), ReadCommand{Name: "count", InTxn: true}, 0, Read{Snapshot: true}},
		{"snapshot $out", doc(func(b *bson.Builder) { b.AppendString("level", "snapshot") }), ReadCommand{Name: "aggregate", Body: pipeline}, mongoerr.InvalidOptions, Read{}},
		{"afterOpTime", doc(func(b *bson.Builder) {
			b.StartDocument("afterOpTime")
			b.AppendTimestamp("ts", 7, 2)
			b.AppendInt64("t", 1)
			b.End()
		}), ReadCommand{Name: "find"}, 0, Read{After: repl.MakeTimestamp(7, 2), AfterOpTime: true}},
		{"unknown field", doc(func(b *bson.Builder) { b.AppendInt32("x", 1) }), ReadCommand{Name: "find"}, mongoerr.IDLUnknownField, Read{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRead(tc.rc, tc.cmd)
			if code(err) != tc.code {
				t.Fatalf("err %v, want code %d", err, tc.code)
			}
			if err == nil && got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTakesWriteConcern(t *testing.T) {
	none := func() string { return "" }
	out := func() string { return "$out" }
	cases := []struct {
		name  string
		write bool
		stage func() string
		want  bool
	}{
		{"insert", true, none, true},
		{"compact", true, none, false},
		{"createUser", false, none, true},
		{"find", false, none, false},
		{"aggregate", false, none, false},
		{"aggregate", false, out, true},
	}
	for _, tc := range cases {
		if got := TakesWriteConcern(tc.name, tc.write, tc.stage); got != tc.want {
			t.Errorf("%s (stage %q): %v, want %v", tc.name, tc.stage(), got, tc.want)
		}
	}
}

func TestNextDefaults(t *testing.T) {
	rc := bson.Value{Type: bson.TypeDocument, Data: doc(func(b *bson.Builder) { b.AppendString("level", "majority") })}
	bad := bson.Value{Type: bson.TypeDocument, Data: doc(func(b *bson.Builder) { b.AppendString("level", "snapshot") })}
	w0 := bson.Value{Type: bson.TypeDocument, Data: doc(func(b *bson.Builder) { b.AppendInt32("w", 0) })}
	if _, err := Next(RWDefaults{}, bson.Value{}, false, bson.Value{}, false, false); code(err) != mongoerr.BadValue {
		t.Fatalf("neither: %v", err)
	}
	if _, err := Next(RWDefaults{}, bad, true, bson.Value{}, false, false); code(err) != mongoerr.BadValue {
		t.Fatalf("snapshot default: %v", err)
	}
	if _, err := Next(RWDefaults{}, bson.Value{}, false, w0, true, false); code(err) != mongoerr.BadValue {
		t.Fatalf("w: 0 default: %v", err)
	}
	next, err := Next(RWDefaults{}, rc, true, bson.Value{}, false, false)
	if err != nil || next.ReadConcern == nil || next.Updated.IsZero() {
		t.Fatalf("majority default: %+v, %v", next, err)
	}
}

// FuzzParseRead: any readConcern document parses or answers an error;
// neither panics.
func FuzzParseRead(f *testing.F) {
	f.Add([]byte(doc(func(b *bson.Builder) { b.AppendString("level", "snapshot"); b.AppendTimestamp("atClusterTime", 5, 1) })))
	f.Add([]byte(doc(func(b *bson.Builder) { b.StartDocument("afterOpTime"); b.AppendTimestamp("ts", 1, 1); b.End() })))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bson.Validate(data, 100) != nil {
			return
		}
		d := bson.Doc(data)
		_, _ = ParseRead(d, ReadCommand{Name: "aggregate", Body: d, Primary: true})
		_ = CheckStandalone(bson.Value{Type: bson.TypeDocument, Data: data}, true)
		_, _ = ParseDoc(d, true)
	})
}

func TestDurabilityReplicated(t *testing.T) {
	cases := []struct {
		name string
		wc   Write
		want exec.Durability
	}{
		{"majority, one member", Write{W: -1, Majority: true}, exec.Sync},
		{"majority, several", Write{W: -1, Majority: true, Replicated: true}, exec.Lazy},
		{"majority j: false, several", Write{W: -1, Majority: true, JSet: true, Replicated: true}, exec.Lazy},
		{"majority j: true, several", Write{W: -1, Majority: true, J: true, JSet: true, Replicated: true}, exec.Sync},
		{"majority j: true, one member", Write{W: -1, Majority: true, J: true, JSet: true}, exec.Sync},
		{"w: 1 j: true, several", Write{W: 1, J: true, JSet: true, Replicated: true}, exec.Sync},
		{"w: 1, several", Write{W: 1, Replicated: true}, exec.Lazy},
		{"w: 2, several", Write{W: 2, Replicated: true}, exec.Lazy},
		{"w: 1, one member", Write{W: 1}, exec.Lazy},
	}
	for _, c := range cases {
		if got := c.wc.Durability(); got != c.want {
			t.Errorf("%s: Durability() = %v, want %v", c.name, got, c.want)
		}
	}
}
