package session

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func extValue(t *testing.T, s string) bson.Value {
	t.Helper()
	d, err := bson.UnmarshalExtJSON([]byte(`{"v":`+s+`}`), false)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	v, _ := d.Lookup("v")
	return v
}

// TestPatterns: killAllSessionsByPattern's patterns and the list stages'
// specs select the sessions of the users they name.
func TestPatterns(t *testing.T) {
	alice, bob := UserDigest("alice@admin"), UserDigest("bob@admin")
	ka, kb := Key{ID: [16]byte{1}, UID: alice}, Key{ID: [16]byte{2}, UID: bob}
	for _, tc := range []struct {
		pattern string
		code    int32
		a, b    bool
	}{
		{pattern: `{}`, a: true, b: true},
		{pattern: `{"users":[{"user":"alice","db":"admin"}]}`, a: true},
		{pattern: `{"users":[{"user":"alice"}]}`, code: mongoerr.IDLFailedToParse},
		{pattern: `{"roles":[]}`, code: mongoerr.NotImplemented},
		{pattern: `{"uid":1}`, code: mongoerr.TypeMismatch},
		{pattern: `{"x":1}`, code: mongoerr.IDLUnknownField},
		{pattern: `1`, code: mongoerr.TypeMismatch},
	} {
		p, err := ParseKillPattern(extValue(t, tc.pattern))
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("%s: %v, want code %d", tc.pattern, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if p.Match(ka) != tc.a || p.Match(kb) != tc.b {
			t.Errorf("%s: matches alice %v bob %v, want %v %v", tc.pattern, p.Match(ka), p.Match(kb), tc.a, tc.b)
		}
	}
	if !MatchAny(nil, ka) {
		t.Error("no patterns: every session matches")
	}
	self, err := ListPattern("$listLocalSessions", bson.EmptyDoc, bob)
	if err != nil || self.Match(ka) || !self.Match(kb) {
		t.Errorf("{}: the caller's sessions only (%v)", err)
	}
	both := extValue(t, `{"allUsers":true,"users":[]}`).Document()
	if _, err := ListPattern("$listSessions", both, bob); err == nil || mongoerr.As(err).Code != mongoerr.BadValue {
		t.Errorf("allUsers and users: %v", err)
	}
}
