package exec

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func extDoc(t *testing.T, s string) bson.Doc {
	t.Helper()
	d, err := bson.UnmarshalExtJSON([]byte(s), false)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

// TestCappedCreateOptions: create's capped options, their checks and the
// stored options (size rounded up to 256 bytes).
func TestCappedCreateOptions(t *testing.T) {
	for _, tc := range []struct {
		db, opts string
		code     int32
		stored   string
	}{
		{db: "d", opts: `{"capped":true,"size":1000,"max":5}`, stored: `{"capped":true,"size":1024,"max":5}`},
		{db: "d", opts: `{"capped":true}`, code: mongoerr.InvalidOptions},
		{db: "d", opts: `{"size":1000}`, code: mongoerr.InvalidOptions},
		{db: "d", opts: `{"capped":true,"size":0}`, code: mongoerr.IDLValueOutOfRange},
		{db: "d", opts: `{"capped":true,"size":"x"}`, code: mongoerr.TypeMismatch},
		{db: "d", opts: `{"capped":true,"size":10,"max":{"$numberLong":"2147483648"}}`, code: mongoerr.BadValue},
		{db: "d", opts: `{"capped":true,"size":10,"autoIndexId":false}`, code: mongoerr.AutoIndexIDReplicated},
		{db: "local", opts: `{"autoIndexId":false}`, code: mongoerr.CommandNotSupported},
		{db: "local", opts: `{"capped":true,"size":10,"autoIndexId":false}`, stored: `{"capped":true,"size":256,"autoIndexId":false}`},
	} {
		var o CappedCreateOptions
		err := func() error {
			it := extDoc(t, tc.opts).Iter()
			for it.Next() {
				if ok, err := o.Take(it.Element()); !ok || err != nil {
					return err
				}
			}
			return o.Check(tc.db, "c")
		}()
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("%s: err %v, want code %d", tc.opts, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.opts, err)
		}
		j, _ := o.StoredOptions(nil).MarshalExtJSON(false)
		if got := string(j); got != tc.stored {
			t.Errorf("%s: stored %s, want %s", tc.opts, got, tc.stored)
		}
	}
}

func TestCappedSizeArg(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int64
		code int32
	}{
		{v: `100`, want: 100},
		{v: `1.5`, want: 1},
		{v: `-1`, code: mongoerr.BadValue},
		{v: `"x"`, code: mongoerr.TypeMismatch},
		{v: `1e300`, code: mongoerr.BadValue},
	} {
		v, _ := extDoc(t, `{"v":`+tc.v+`}`).Lookup("v")
		n, err := CappedSizeArg(v, true, "convertToCapped")
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("%s: %d, %v; want code %d", tc.v, n, err, tc.code)
			}
		} else if err != nil || n != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.v, n, err, tc.want)
		}
	}
	if _, err := CappedSizeArg(bson.Value{}, false, "convertToCapped"); err == nil || mongoerr.As(err).Code != mongoerr.IDLFailedToParse {
		t.Errorf("missing size: %v", err)
	}
}
