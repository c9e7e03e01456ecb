package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// FuzzSASL sends arbitrary client-first and client-final messages through
// a SCRAM conversation: every failure must be AuthenticationFailed (or
// ProtocolError for a bad conversation id), never a panic, and nothing
// but the right proof may authenticate.
func FuzzSASL(f *testing.F) {
	f.Add("SCRAM-SHA-256", []byte("n,,n=alice,r=abcdef"), []byte("c=biws,r=abcdef,p=AAAA"), true)
	f.Add("SCRAM-SHA-1", []byte("n,,n=alice,r=x"), []byte(""), false)
	f.Add("SCRAM-SHA-256", []byte("y,,n=al=2Cice,r=1"), []byte("c=eSws,r=1,p=="), true)
	f.Add("SCRAM-SHA-256", []byte("n,a=bob,n=alice,r=abc"), []byte("c=bixhPWJvYiw=,r=abc,p=QUJD"), false)
	f.Add("PLAIN", []byte("\x00alice\x00pw"), []byte{}, true)
	m := newManager(f)
	addUser(f, m, "admin", "alice", "pw", RoleRef{"read", "app"})
	f.Fuzz(func(t *testing.T, mech string, first, final []byte, skip bool) {
		s := &Session{}
		st, err := s.Start(context.Background(), m, mech, "admin", first, skip)
		if err != nil {
			var me *mongoerr.Error
			if !errors.As(err, &me) || (me.Code != mongoerr.AuthenticationFailed && me.Code != mongoerr.MechanismUnavailable) {
				t.Fatalf("start: %v", err)
			}
			return
		}
		_, err = s.Continue(context.Background(), m, st.ConversationID, final)
		if err == nil {
			// Only a correct proof, which random bytes do not produce.
			t.Fatalf("authenticated with %q / %q", first, final)
		}
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != mongoerr.AuthenticationFailed {
			t.Fatalf("continue: %v", err)
		}
		if s.Authenticated() {
			t.Fatal("authenticated after a failure")
		}
	})
}
