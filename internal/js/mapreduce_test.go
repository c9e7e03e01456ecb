package js

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func TestMapReduce(t *testing.T) {
	input := []string{`{"_id":1,"k":"b","n":2}`, `{"_id":2,"k":"a","n":3}`, `{"_id":3,"k":"b","n":5}`}
	sum := `function(k, vs) { return Array.sum(vs); }`
	for _, tc := range []struct {
		name     string
		mr       MapReduce
		existing []string
		want     string
		code     int32
	}{
		{name: "grouped and sorted by key", mr: MapReduce{Map: `function() { emit(this.k, this.n); }`, Reduce: sum},
			want: `[{"_id":"a","value":3.0},{"_id":"b","value":7.0}]`},
		{name: "finalize", mr: MapReduce{Map: `function() { emit(this.k, this.n); }`, Reduce: sum, Finalize: `function(k, v) { return v * 10; }`},
			want: `[{"_id":"a","value":30.0},{"_id":"b","value":70.0}]`},
		{name: "reduce existing", mr: MapReduce{Map: `function() { emit(this.k, this.n); }`, Reduce: sum},
			existing: []string{`{"_id":"b","value":100}`, `{"_id":"z","value":1}`},
			want:     `[{"_id":"a","value":3.0},{"_id":"b","value":107.0}]`},
		{name: "memory limit", mr: MapReduce{Map: `function() { emit(this.k, this.n); }`, Reduce: sum, MaxBytes: 10},
			code: mongoerr.ExceededMemoryLimit},
		{name: "map throws", mr: MapReduce{Map: `function() { throw new Error("x"); }`, Reduce: sum}, code: mongoerr.JSInterpreterFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.mr.Session = session(t)
			var docs []bson.Doc
			for _, s := range input {
				docs = append(docs, doc(t, s))
			}
			got, err := tc.mr.Run(docs)
			if err == nil && tc.existing != nil {
				var ex []bson.Doc
				for _, s := range tc.existing {
					ex = append(ex, doc(t, s))
				}
				got, err = tc.mr.ReduceExisting(got, ex)
			}
			if tc.code != 0 {
				if code(err) != tc.code {
					t.Fatalf("err = %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b := bson.NewBuilder(nil)
			for i, d := range got {
				b.AppendDocument(bson.Index(i), d)
			}
			j, err := wrapArr(b.Finish()).MarshalExtJSON(false)
			if err != nil {
				t.Fatal(err)
			}
			if s := string(j); s != `{"v":`+tc.want+`}` {
				t.Errorf("got %s, want %s", s, tc.want)
			}
		})
	}
}

func wrapArr(arr bson.Doc) bson.Doc { return wrap(bson.Value{Type: bson.TypeArray, Data: arr}) }

func TestParseMapReduceOut(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want MapReduceOut
		code int32
	}{
		{out: `"c"`, want: MapReduceOut{Mode: "replace", DB: "d", Coll: "c"}},
		{out: `{"inline":1}`, want: MapReduceOut{Inline: true, Mode: "replace", DB: "d"}},
		{out: `{"merge":"c","db":"e"}`, want: MapReduceOut{Mode: "merge", DB: "e", Coll: "c", DBExplicit: true}},
		{out: `{"reduce":1}`, code: mongoerr.TypeMismatch},
		{out: `{"merge":"c","reduce":"c"}`, code: mongoerr.BadValue},
		{out: `{"sharded":true,"merge":"c"}`, code: mongoerr.InvalidOptions},
		{out: `{"replace":""}`, code: mongoerr.InvalidNamespace},
		{out: `1`, code: mongoerr.BadValue},
	} {
		v, _ := doc(t, `{"v":`+tc.out+`}`).Lookup("v")
		got, err := ParseMapReduceOut("mapReduce", "d", v, true)
		if tc.code != 0 {
			if code(err) != tc.code {
				t.Errorf("%s: err = %v, want code %d", tc.out, err, tc.code)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.out, got, err, tc.want)
		}
	}
	if _, err := ParseMapReduceOut("mapReduce", "d", bson.Value{}, false); code(err) != mongoerr.IDLFailedToParse {
		t.Errorf("missing out: %v", err)
	}
}
