package timeseries

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func doc(t testing.TB, js string) bson.Doc {
	t.Helper()
	d, err := bson.UnmarshalExtJSON([]byte(js), false)
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return d
}

func docValue(d bson.Doc) bson.Value { return bson.Value{Type: bson.TypeDocument, Data: d} }

func TestParse(t *testing.T) {
	cases := []struct {
		spec string
		code int32  // 0: accepted
		want string // the listed options when accepted
	}{
		{`{"timeField": "t"}`, 0, `{"timeField": "t", "granularity": "seconds", "bucketMaxSpanSeconds": 3600}`},
		{`{"timeField": "t", "metaField": "m", "granularity": "minutes"}`, 0, `{"timeField": "t", "metaField": "m", "granularity": "minutes", "bucketMaxSpanSeconds": 86400}`},
		{`{"timeField": "t", "granularity": "hours", "bucketMaxSpanSeconds": 2592000}`, 0, `{"timeField": "t", "granularity": "hours", "bucketMaxSpanSeconds": 2592000}`},
		{`{"timeField": "t", "bucketMaxSpanSeconds": 600, "bucketRoundingSeconds": 600}`, 0, `{"timeField": "t", "bucketRoundingSeconds": 600, "bucketMaxSpanSeconds": 600}`},
		{`{"timeField": "t", "bucketMaxSpanSeconds": 600}`, mongoerr.InvalidOptions, ""},
		{`{"timeField": "t", "bucketMaxSpanSeconds": 600, "bucketRoundingSeconds": 60}`, mongoerr.InvalidOptions, ""},
		{`{"timeField": "t", "granularity": "minutes", "bucketMaxSpanSeconds": 3600}`, mongoerr.InvalidOptions, ""},
		{`{"timeField": "t", "granularity": "minutes", "bucketRoundingSeconds": 3600}`, mongoerr.InvalidOptions, ""},
		{`{"timeField": "t", "bucketMaxSpanSeconds": 0, "bucketRoundingSeconds": 0}`, mongoerr.BadValue, ""},
		{`{"timeField": "t", "granularity": "days"}`, mongoerr.BadValue, ""},
		{`{"timeField": 1}`, mongoerr.TypeMismatch, ""},
		{`{"metaField": "m"}`, mongoerr.IDLFailedToParse, ""},
		{`{"timeField": "t", "x": 1}`, mongoerr.IDLUnknownField, ""},
		{`{"timeField": "a.b"}`, mongoerr.InvalidOptions, ""},
		{`{"timeField": "t", "metaField": "t"}`, mongoerr.InvalidOptions, ""},
		{`{"timeField": "t", "metaField": "_id"}`, mongoerr.InvalidOptions, ""},
		{`{"timeField": "t", "metaField": "m.x"}`, mongoerr.InvalidOptions, ""},
	}
	for _, c := range cases {
		o, err := Parse("create", docValue(doc(t, c.spec)))
		if c.code != 0 {
			if me, ok := err.(*mongoerr.Error); !ok || me.Code != c.code {
				t.Errorf("%s: got %v, want code %d", c.spec, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		if got, want := o.Doc(), doc(t, c.want); !bson.Equal(docValue(got), docValue(want)) {
			t.Errorf("%s: listed %s, want %s", c.spec, got, want)
		}
		var sb bson.Builder
		sb.AppendDocument("timeseries", o.Doc())
		if back := FromCollection(sb.Finish()); back == nil || !back.Equal(o) {
			t.Errorf("%s: stored options read back as %+v, want %+v", c.spec, back, o)
		}
	}
}

func TestCollMod(t *testing.T) {
	o, _ := Parse("create", docValue(doc(t, `{"timeField": "t"}`)))
	cases := []struct {
		from, mod string
		code      int32
		changed   bool
	}{
		{`{"timeField": "t"}`, `{"granularity": "minutes"}`, 0, true},
		{`{"timeField": "t", "granularity": "minutes"}`, `{"granularity": "hours"}`, 0, true},
		{`{"timeField": "t", "granularity": "hours"}`, `{"granularity": "minutes"}`, mongoerr.InvalidOptions, false},
		{`{"timeField": "t", "granularity": "minutes"}`, `{"granularity": "seconds"}`, mongoerr.InvalidOptions, false},
		{`{"timeField": "t"}`, `{"granularity": "seconds"}`, 0, false},
		{`{"timeField": "t"}`, `{"bucketMaxSpanSeconds": 7200, "bucketRoundingSeconds": 7200}`, 0, true},
		{`{"timeField": "t"}`, `{"bucketMaxSpanSeconds": 7200}`, mongoerr.InvalidOptions, false},
		{`{"timeField": "t", "granularity": "minutes"}`, `{"bucketMaxSpanSeconds": 60, "bucketRoundingSeconds": 60}`, mongoerr.InvalidOptions, false},
		{`{"timeField": "t"}`, `{"nope": 1}`, mongoerr.IDLUnknownField, false},
	}
	for _, c := range cases {
		from, _ := Parse("create", docValue(doc(t, c.from)))
		if from == nil {
			from = o
		}
		n, changed, err := from.CollMod(docValue(doc(t, c.mod)))
		if c.code != 0 {
			if me, ok := err.(*mongoerr.Error); !ok || me.Code != c.code {
				t.Errorf("%s + %s: got %v, want code %d", c.from, c.mod, err, c.code)
			}
			continue
		}
		if err != nil || changed != c.changed || n == nil {
			t.Errorf("%s + %s: changed %v err %v, want changed %v", c.from, c.mod, changed, err, c.changed)
		}
	}
}

// TestBucketRoundTrip: measurements added to buckets (fields missing here
// and there, in any order) unpack to the same measurements, and the
// control fields bound the data.
func TestBucketRoundTrip(t *testing.T) {
	seed := rand.Int64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	o, _ := Parse("create", docValue(doc(t, `{"timeField": "t", "metaField": "m"}`)))
	meta := bson.Value{Type: bson.TypeString, Data: []byte("\x02\x00\x00\x00a\x00")}
	base := int64(1_700_000_000_000)
	var in []bson.Doc
	b := NewBucket(o, meta, base)
	for i := 0; i < 300; i++ {
		var d bson.Builder
		d.AppendInt32("_id", int32(i))
		d.AppendDateTime("t", base+int64(r.IntN(3_600_000)))
		if r.IntN(3) > 0 {
			d.AppendDouble("v", r.Float64())
		}
		if r.IntN(4) == 0 {
			d.AppendString("s", "x")
		}
		d.AppendValue("m", meta)
		m, err := Prepare(o, d.Finish(), func() [12]byte { return [12]byte{} })
		if err != nil {
			t.Fatal(err)
		}
		b.Add(o, m)
		in = append(in, m.Doc)
	}
	enc := b.Encode(o)
	dec, err := Decode(o, enc)
	if err != nil || dec.Count != len(in) {
		t.Fatalf("decode: %v count %d", err, dec.Count)
	}
	if !bson.Equal(docValue(dec.Encode(o)), docValue(enc)) {
		t.Fatal("decode/encode changed the bucket")
	}
	var out []bson.Doc
	u := &Unpacker{TimeField: "t", MetaField: "m"}
	if err := u.Unpack(enc, func(d bson.Doc) bool { out = append(out, d); return true }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("unpacked %d, want %d", len(out), len(in))
	}
	lo, _ := enc.LookupPath("control", "min", "t")
	hi, _ := enc.LookupPath("control", "max", "t")
	for i := range in {
		for _, k := range []string{"_id", "t", "v", "s", "m"} {
			a, okA := in[i].Lookup(k)
			c, okC := out[i].Lookup(k)
			if okA != okC || (okA && !bson.Equal(a, c)) {
				t.Fatalf("measurement %d field %s: %v vs %v", i, k, a, c)
			}
		}
		tv, _ := out[i].Lookup("t")
		if tv.DateTime() < lo.DateTime() || tv.DateTime() > hi.DateTime() {
			t.Fatalf("time %d outside [%d, %d]", tv.DateTime(), lo.DateTime(), hi.DateTime())
		}
	}
	// Only the included fields are built.
	u = &Unpacker{TimeField: "t", MetaField: "m", Include: map[string]bool{"v": true}}
	_ = u.Unpack(enc, func(d bson.Doc) bool {
		if _, ok := d.Lookup("_id"); ok {
			t.Fatalf("excluded _id built: %s", d)
		}
		return false
	})
}

func TestRewrite(t *testing.T) {
	cases := []struct{ in, want string }{
		{`[{"$_internalUnpackBucket": {"timeField": "t", "metaField": "m", "bucketMaxSpanSeconds": 3600}}, {"$match": {"m.a": 1, "t": {"$gte": {"$date": {"$numberLong": "1000"}}, "$lt": {"$date": {"$numberLong": "5000"}}}, "v": 3}}]`,
			`[{"$match": {"$and": [{"meta.a": 1}, {"control.max.t": {"$gte": {"$date": {"$numberLong": "1000"}}}}, {"control.min.t": {"$lt": {"$date": {"$numberLong": "5000"}}}}]}}, {"$_internalUnpackBucket": {"timeField": "t", "metaField": "m", "bucketMaxSpanSeconds": 3600}}, {"$match": {"m.a": 1, "t": {"$gte": {"$date": {"$numberLong": "1000"}}, "$lt": {"$date": {"$numberLong": "5000"}}}, "v": 3}}]`},
		{`[{"$_internalUnpackBucket": {"timeField": "t", "bucketMaxSpanSeconds": 3600}}, {"$match": {"v": 3}}]`,
			`[{"$_internalUnpackBucket": {"timeField": "t", "bucketMaxSpanSeconds": 3600}}, {"$match": {"v": 3}}]`},
		{`[{"$_internalUnpackBucket": {"timeField": "t", "metaField": "m", "bucketMaxSpanSeconds": 60}}, {"$match": {"t": {"$date": {"$numberLong": "7"}}}}]`,
			`[{"$match": {"$and": [{"control.min.t": {"$lte": {"$date": {"$numberLong": "7"}}}}, {"control.max.t": {"$gte": {"$date": {"$numberLong": "7"}}}}]}}, {"$_internalUnpackBucket": {"timeField": "t", "metaField": "m", "bucketMaxSpanSeconds": 60}}, {"$match": {"t": {"$date": {"$numberLong": "7"}}}}]`},
		{`[{"$match": {"a": 1}}]`, `[{"$match": {"a": 1}}]`},
	}
	for _, c := range cases {
		in := doc(t, `{"p": `+c.in+`}`)
		want := doc(t, `{"p": `+c.want+`}`)
		pv, _ := in.Lookup("p")
		var stages []bson.Doc
		for _, v := range pv.Document().Values() {
			stages = append(stages, v.Document())
		}
		got := Rewrite(stages)
		var b bson.Builder
		b.StartArray("p")
		for i, s := range got {
			b.AppendDocument(bson.Index(i), s)
		}
		b.End()
		if g := b.Finish(); !bson.Equal(docValue(g), docValue(want)) {
			t.Errorf("%s:\n got %s\nwant %s", c.in, g, want)
		}
	}
}

func TestIndexKeys(t *testing.T) {
	o, _ := Parse("create", docValue(doc(t, `{"timeField": "t", "metaField": "m"}`)))
	cases := []struct{ user, buckets string }{
		{`{"m": 1}`, `{"meta": 1}`},
		{`{"m.a": -1, "t": 1}`, `{"meta.a": -1, "control.min.t": 1, "control.max.t": 1}`},
		{`{"t": -1}`, `{"control.max.t": -1, "control.min.t": -1}`},
		{`{"v": 1}`, `{"control.min.v": 1, "control.max.v": 1}`},
	}
	for _, c := range cases {
		got, err := o.BucketIndexKey(doc(t, c.user))
		if err != nil || !bson.Equal(docValue(got), docValue(doc(t, c.buckets))) {
			t.Errorf("%s: %s %v, want %s", c.user, got, err, c.buckets)
			continue
		}
		back, ok := o.UserIndexKey(got)
		if !ok || !bson.Equal(docValue(back), docValue(doc(t, c.user))) {
			t.Errorf("%s: back %s", c.user, back)
		}
	}
	if _, err := o.BucketIndexKey(doc(t, `{"v": "text"}`)); err == nil {
		t.Error("a text key on a measurement field was translated")
	}
}

// FuzzUnpack: decoding and unpacking any bytes as a bucket fails cleanly
// or yields measurements; it never panics.
func FuzzUnpack(f *testing.F) {
	o, _ := Parse("create", docValue(bson.Doc(nil)))
	_ = o
	opts := &Options{TimeField: "t", MetaField: "m", MaxSpan: 3600, Rounding: 60}
	b := NewBucket(opts, bson.Value{}, 1000)
	var d bson.Builder
	d.AppendDateTime("t", 1000)
	d.AppendInt32("v", 1)
	b.Add(opts, Measurement{Doc: d.Finish(), Time: 1000})
	f.Add([]byte(b.Encode(opts)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bson.Validate(data, bson.MaxDepth) != nil {
			return
		}
		_, _ = Decode(opts, bson.Doc(data))
		u := &Unpacker{TimeField: "t", MetaField: "m"}
		_ = u.Unpack(bson.Doc(data), func(bson.Doc) bool { return true })
	})
}

// TestCompressedBucket: a closed bucket is stored compressed (version 2,
// BSONColumn columns, control.count), its measurements sorted by time;
// it decodes and unpacks to the same measurements, reopens for more and
// keeps its compression through RebuildLike; a bucket holding a value
// BSONColumn cannot hold stays uncompressed.
func TestCompressedBucket(t *testing.T) {
	seed := rand.Int64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	o, _ := Parse("create", docValue(doc(t, `{"timeField": "t", "metaField": "m"}`)))
	meta := docValue(doc(t, `{"sensor": 3}`))
	base := int64(1_700_000_000_000)
	build := func(n int, extra func(d *bson.Builder, i int)) (*Bucket, []bson.Doc) {
		b := NewBucket(o, meta, base)
		var in []bson.Doc
		for i := 0; i < n; i++ {
			var d bson.Builder
			d.AppendObjectID("_id", [12]byte{0, 0, 0, byte(i >> 8), 1, 1, 1, 1, 1, 0, byte(i >> 8), byte(i)})
			d.AppendDateTime("t", base+int64(i)*1000-int64(r.IntN(3))*1000) // a little out of order
			if r.IntN(5) > 0 {
				d.AppendDouble("v", float64(r.IntN(10000))/100)
			}
			if i%3 == 0 {
				d.AppendInt32("n", int32(i))
			}
			if i%10 == 0 {
				d.StartDocument("o")
				d.AppendString("s", "x")
				d.End()
			}
			if extra != nil {
				extra(&d, i)
			}
			d.AppendValue("m", meta)
			m, err := Prepare(o, d.Finish(), nil)
			if err != nil {
				t.Fatal(err)
			}
			b.Add(o, m)
			in = append(in, m.Doc)
		}
		return b, in
	}
	b, in := build(MaxCount, nil)
	if !b.Closed() {
		t.Fatal("a bucket of MaxCount measurements is not closed")
	}
	enc := b.Encode(o)
	if v, _ := enc.LookupPath("control", "version"); v.Int32() != 2 {
		t.Fatalf("closed bucket has control.version %v", v)
	}
	if c, _ := enc.LookupPath("control", "count"); c.Int32() != MaxCount {
		t.Fatalf("control.count %v", c)
	}
	if col, _ := enc.LookupPath("data", "t"); col.Type != bson.TypeBinary {
		t.Fatalf("data.t is %v, not a binary", col.Type)
	} else if sub, _ := col.Binary(); sub != 7 {
		t.Fatalf("data.t has subtype %d", sub)
	}
	if n := BucketCount(enc, "t"); n != MaxCount {
		t.Fatalf("BucketCount %d", n)
	}
	// Measurements come out in time order (stable).
	want := append([]bson.Doc(nil), in...)
	sortByTime := func(ds []bson.Doc) {
		slices.SortStableFunc(ds, func(a, b bson.Doc) int {
			x, _ := a.Lookup("t")
			y, _ := b.Lookup("t")
			return cmp.Compare(x.DateTime(), y.DateTime())
		})
	}
	sortByTime(want)
	unpack := func(bucket bson.Doc) []bson.Doc {
		var out []bson.Doc
		u := &Unpacker{TimeField: "t", MetaField: "m"}
		for range 2 { // the unpacker's memory is reused
			out = out[:0]
			if err := u.Unpack(bucket, func(d bson.Doc) bool { out = append(out, d); return true }); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	same := func(got, want []bson.Doc) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("unpacked %d, want %d", len(got), len(want))
		}
		for i := range want {
			for _, k := range []string{"_id", "t", "v", "n", "o", "m"} {
				a, okA := want[i].Lookup(k)
				c, okC := got[i].Lookup(k)
				if okA != okC || (okA && !bson.Equal(a, c)) {
					t.Fatalf("measurement %d field %s: %v vs %v", i, k, c, a)
				}
			}
		}
	}
	same(unpack(enc), want)
	plain := b.encodeUncompressed(o)
	if len(enc)*3 > len(plain) {
		t.Errorf("compressed bucket %d bytes, uncompressed %d", len(enc), len(plain))
	}
	// Decoding reads the same measurements; a reopened bucket that is no
	// longer full is written uncompressed.
	dec, err := Decode(o, enc)
	if err != nil || dec.Count != MaxCount || dec.Start != b.Start || !bson.Equal(dec.Meta, meta) {
		t.Fatalf("decode: %v count %d", err, dec.Count)
	}
	same(unpack(dec.Encode(o)), want)
	keep := unpack(enc)[10:]
	re, err := RebuildLike(o, enc, keep)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := re.LookupPath("control", "version"); v.Int32() != 2 {
		t.Fatalf("rebuilt compressed bucket has control.version %v", v)
	}
	same(unpack(re), want[10:])
	dec, _ = Decode(o, re)
	if dec.Closed() {
		t.Fatal("a bucket with room is closed")
	}
	if v, _ := dec.Encode(o).LookupPath("control", "version"); v.Int32() != 1 {
		t.Fatalf("open bucket has control.version %v", v)
	}
	// MinKey does not compress: the bucket stays version 1.
	b, in = build(MaxCount, func(d *bson.Builder, i int) {
		if i == 5 {
			d.AppendMinKey("k")
		}
	})
	enc = b.Encode(o)
	if v, _ := enc.LookupPath("control", "version"); v.Int32() != 1 {
		t.Fatalf("bucket with MinKey has control.version %v", v)
	}
	same(unpack(enc), in)
}

// memStore is a buckets collection in memory.
type memStore struct{ docs map[[12]byte]bson.Doc }

func (m *memStore) Get(id [12]byte) (bson.Doc, error) {
	if d := m.docs[id]; d != nil {
		return append(bson.Doc(nil), d...), nil
	}
	return nil, nil
}

func (m *memStore) Insert(d bson.Doc) error {
	id, _ := d.Lookup("_id")
	m.docs[id.ObjectID()] = d
	return nil
}

func (m *memStore) Replace(id [12]byte, _, d bson.Doc) error {
	m.docs[id] = d
	return nil
}

func (m *memStore) Reopen(*Options, bson.Value, int64) ([][12]byte, error) { return nil, nil }

// TestCatalogReusedRequests: the catalog keeps the bucket it last wrote
// for each meta value decoded; the measurements it took point into
// requests whose memory is reused afterwards, which must not change the
// buckets written later (nor their field names).
func TestCatalogReusedRequests(t *testing.T) {
	o, _ := Parse("create", docValue(doc(t, `{"timeField": "t", "metaField": "m"}`)))
	st := &memStore{docs: map[[12]byte]bson.Doc{}}
	c := NewCatalog()
	buf := make([]byte, 0, 1<<20)
	want := map[int64]float64{}
	n := 0
	for batch := 0; batch < 30; batch++ {
		buf = append(buf[:0], make([]byte, 1+batch%5)...) // documents at other offsets than the last batch's
		var ms []Measurement
		for i := 0; i < 100; i++ {
			var b bson.Builder
			b.AppendObjectID("_id", [12]byte{byte(n >> 16), byte(n >> 8), byte(n)})
			b.AppendDateTime("t", 1767225600000+int64(n)*1000)
			b.StartDocument("m")
			b.AppendInt32("sensor", int32(n%3))
			b.End()
			b.AppendDouble("v", float64(n))
			want[1767225600000+int64(n)*1000] = float64(n)
			n++
			at := len(buf)
			buf = append(buf, b.Finish()...)
			m, err := Prepare(o, bson.Doc(buf[at:len(buf):len(buf)]), nil)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		if err := c.Insert(st, [16]byte{}, o, ms); err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = 0xEE // the request's memory is reused
		}
	}
	got := 0
	u := &Unpacker{TimeField: "t", MetaField: "m"}
	for _, d := range st.docs {
		if err := u.Unpack(d, func(m bson.Doc) bool {
			tv, _ := m.Lookup("t")
			v, _ := m.Lookup("v")
			s, _ := m.LookupPath("m", "sensor")
			if v.Type != bson.TypeDouble || want[tv.DateTime()] != v.Double() || int(s.Int32()) != int(v.Double())%3 {
				t.Fatalf("measurement %s", m)
			}
			got++
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got != n {
		t.Fatalf("buckets hold %d measurements, want %d", got, n)
	}
}
