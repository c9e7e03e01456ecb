package auth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/xdg-go/scram"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

func newManager(t testing.TB) *Manager {
	t.Helper()
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m, err := NewManager(db, Options{Enabled: true, FailureDelay: -1, SHA1Iterations: 4096, SHA256Iterations: 4096,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func addUser(t testing.TB, m *Manager, db, name, pwd string, roles ...RoleRef) {
	t.Helper()
	u := &User{Name: name, DB: db, Credentials: map[string]Credential{}, Roles: roles}
	for _, mech := range Mechanisms {
		c, err := NewCredential(mech, name, pwd, m.Iterations(mech))
		if err != nil {
			t.Fatal(err)
		}
		u.Credentials[mech] = c
	}
	if err := m.db.Update(context.Background(), func(tx *kv.Tx) error { return PutUser(tx, u) }); err != nil {
		t.Fatal(err)
	}
	if err := m.Changed(); err != nil {
		t.Fatal(err)
	}
}

// client returns a driver-style SCRAM client: SCRAM-SHA-1 over MongoDB's
// password digest, SCRAM-SHA-256 over the SASLprepped password.
func client(t *testing.T, mech, user, pwd string) *scram.ClientConversation {
	t.Helper()
	var c *scram.Client
	var err error
	if mech == SCRAMSHA1 {
		c, err = scram.SHA1.NewClientUnprepped(user, mongoPasswordDigest(user, pwd), "")
	} else {
		c, err = scram.SHA256.NewClient(user, pwd, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	return c.NewConversation()
}

// converse runs a whole exchange for a user of admin and returns the first
// error.
func converse(t *testing.T, m *Manager, s *Session, mech, user, pwd string, skipEmpty bool) error {
	t.Helper()
	return converseDB(t, m, s, mech, "admin", user, pwd, skipEmpty)
}

// converseDB runs a whole exchange for a user of db.
func converseDB(t *testing.T, m *Manager, s *Session, mech, db, user, pwd string, skipEmpty bool) error {
	t.Helper()
	cc := client(t, mech, user, pwd)
	c1, _ := cc.Step("")
	st, err := s.Start(context.Background(), m, mech, db, []byte(c1), skipEmpty)
	if err != nil {
		return err
	}
	c2, err := cc.Step(string(st.Payload))
	if err != nil {
		t.Fatalf("client step 2: %v", err)
	}
	st, err = s.Continue(context.Background(), m, st.ConversationID, []byte(c2))
	if err != nil {
		return err
	}
	if _, err := cc.Step(string(st.Payload)); err != nil || !cc.Valid() {
		t.Fatalf("client did not accept the server signature: %v", err)
	}
	if st.Done != skipEmpty {
		t.Fatalf("done = %v after the proof with skipEmptyExchange %v", st.Done, skipEmpty)
	}
	if !skipEmpty {
		st, err = s.Continue(context.Background(), m, st.ConversationID, nil)
		if err != nil {
			return err
		}
		if !st.Done {
			t.Fatal("not done after the empty exchange")
		}
	}
	return nil
}

func TestSCRAM(t *testing.T) {
	m := newManager(t)
	addUser(t, m, "admin", "alice", "s3cret", RoleRef{"readWrite", "app"})
	addUser(t, m, "admin", "ivan", "I\u00ADX", RoleRef{"read", "app"}) // soft hyphen: SASLprep maps it away
	for _, mech := range Mechanisms {
		for _, skip := range []bool{true, false} {
			cases := []struct {
				user, pwd string
				ok        bool
			}{
				{"alice", "s3cret", true},
				{"alice", "wrong", false},
				{"nobody", "s3cret", false},
				{"ivan", "I\u00ADX", true},
			}
			if mech == SCRAMSHA256 {
				cases = append(cases, struct {
					user, pwd string
					ok        bool
				}{"ivan", "IX", true}) // the same password after SASLprep
			}
			for _, tc := range cases {
				s := &Session{Remote: "127.0.0.1:1"}
				err := converse(t, m, s, mech, tc.user, tc.pwd, skip)
				if tc.ok {
					if err != nil {
						t.Errorf("%s skip=%v %s/%q: %v", mech, skip, tc.user, tc.pwd, err)
					} else if u := s.User(); u == nil || u.User != tc.user || u.DB != "admin" {
						t.Errorf("%s %s: authenticated as %v", mech, tc.user, u)
					}
					continue
				}
				var me *mongoerr.Error
				if !errors.As(err, &me) || me.Code != mongoerr.AuthenticationFailed || me.Message != "Authentication failed." {
					t.Errorf("%s skip=%v %s/%q: err = %v, want AuthenticationFailed", mech, skip, tc.user, tc.pwd, err)
				}
				if s.Authenticated() {
					t.Errorf("%s %s/%q: authenticated after a failure", mech, tc.user, tc.pwd)
				}
			}
		}
	}
}

// TestReauthentication follows mongod (6.0 on): one user per connection.
// The same user may authenticate again; another user of the same database
// or of another database is refused and the first stays authenticated;
// after logout any user may authenticate.
func TestReauthentication(t *testing.T) {
	m := newManager(t)
	addUser(t, m, "admin", "alice", "pa")
	addUser(t, m, "admin", "bob", "pb")
	addUser(t, m, "app", "carol", "pc")
	steps := []struct {
		db, user, pwd string
		logout        string // database to log out of first
		code          int32  // 0: success
		msg           string
		after         string // user@db authenticated afterwards ("" none)
	}{
		{"admin", "alice", "pa", "", 0, "", "alice@admin"},
		{"admin", "alice", "pa", "", 0, "", "alice@admin"},
		{"admin", "bob", "pb", "", 5626701, "Each client connection may only be authenticated once. Previously authenticated as: alice@admin", "alice@admin"},
		{"app", "carol", "pc", "", 5626702, "Client has attempted to authenticate on multiple databases.Already authenticated as: alice@admin", "alice@admin"},
		{"admin", "bob", "wrong", "", mongoerr.AuthenticationFailed, "Authentication failed.", "alice@admin"},
		{"admin", "bob", "pb", "app", 5626701, "Each client connection may only be authenticated once. Previously authenticated as: alice@admin", "alice@admin"},
		{"admin", "bob", "pb", "admin", 0, "", "bob@admin"},
		{"app", "carol", "pc", "admin", 0, "", "carol@app"},
	}
	for _, mech := range Mechanisms {
		for _, skip := range []bool{true, false} {
			s := &Session{Remote: "127.0.0.1:1"}
			for i, st := range steps {
				if st.logout != "" {
					s.Logout(st.logout)
				}
				err := converseDB(t, m, s, mech, st.db, st.user, st.pwd, skip)
				var me *mongoerr.Error
				switch {
				case st.code == 0 && err != nil:
					t.Errorf("%s skip=%v step %d (%s@%s): %v", mech, skip, i, st.user, st.db, err)
				case st.code != 0 && (!errors.As(err, &me) || me.Code != st.code || me.Message != st.msg):
					t.Errorf("%s skip=%v step %d (%s@%s): err = %v, want %d %q", mech, skip, i, st.user, st.db, err, st.code, st.msg)
				}
				got := ""
				if u := s.User(); u != nil {
					got = u.String()
				}
				if got != st.after {
					t.Errorf("%s skip=%v step %d: authenticated as %q, want %q", mech, skip, i, got, st.after)
				}
			}
		}
	}
}

func TestSASLProtocolErrors(t *testing.T) {
	m := newManager(t)
	addUser(t, m, "admin", "alice", "pw")
	s := &Session{}
	var me *mongoerr.Error
	if _, err := s.Start(context.Background(), m, "PLAIN", "admin", []byte("x"), true); !errors.As(err, &me) || me.Code != mongoerr.MechanismUnavailable {
		t.Errorf("PLAIN: %v", err)
	}
	if _, err := s.Continue(context.Background(), m, 7, []byte("x")); !errors.As(err, &me) || me.Code != mongoerr.ProtocolError {
		t.Errorf("continue without start: %v", err)
	}
	for _, payload := range []string{"", "garbage", "n,,n=alice", "p=tls-unique,,n=alice,r=abc"} {
		if _, err := s.Start(context.Background(), m, SCRAMSHA256, "admin", []byte(payload), true); !errors.As(err, &me) || me.Code != mongoerr.AuthenticationFailed {
			t.Errorf("payload %q: %v", payload, err)
		}
	}
	// A forged final message with a wrong proof.
	cc := client(t, SCRAMSHA256, "alice", "pw")
	c1, _ := cc.Step("")
	st, err := s.Start(context.Background(), m, SCRAMSHA256, "admin", []byte(c1), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Continue(context.Background(), m, st.ConversationID, []byte("c=biws,r=bogus,p=AAAA")); !errors.As(err, &me) || me.Code != mongoerr.AuthenticationFailed {
		t.Errorf("forged proof: %v", err)
	}
}

func TestPrivileges(t *testing.T) {
	cases := []struct {
		roles   []RoleRef
		db      string
		need    Action
		allowed bool
	}{
		{[]RoleRef{{"read", "app"}}, "app", Find, true},
		{[]RoleRef{{"read", "app"}}, "app", Insert, false},
		{[]RoleRef{{"read", "app"}}, "other", Find, false},
		{[]RoleRef{{"readWrite", "app"}}, "app", Insert | Find | CreateIndex, true},
		{[]RoleRef{{"dbAdmin", "app"}}, "app", Find, false},
		{[]RoleRef{{"dbAdmin", "app"}}, "app", CollMod | DropDatabase, true},
		{[]RoleRef{{"userAdmin", "app"}}, "app", CreateUser | GrantRole, true},
		{[]RoleRef{{"dbOwner", "app"}}, "app", Insert | CollMod | CreateUser, true},
		{[]RoleRef{{"readAnyDatabase", "admin"}}, "x", Find, true},
		{[]RoleRef{{"readAnyDatabase", "admin"}}, "x", ListDatabases, true},
		{[]RoleRef{{"readAnyDatabase", "app"}}, "x", Find, false}, // only exists on admin
		{[]RoleRef{{"clusterMonitor", "admin"}}, "", ServerStatus, true},
		{[]RoleRef{{"clusterMonitor", "admin"}}, "x", Find, false},
		{[]RoleRef{{"clusterMonitor", "admin"}}, "", SetParameter, false},
		{[]RoleRef{{"root", "admin"}}, "x", AllActions &^ Internal, true},
		// Only the members' __system user runs their commands (--keyFile).
		{[]RoleRef{{"root", "admin"}}, "admin", Internal, false},
		{[]RoleRef{{"clusterAdmin", "admin"}}, "admin", Internal, false},
		{[]RoleRef{{"__system", "admin"}}, "admin", Internal, true},
		{[]RoleRef{{"__system", "admin"}}, "x", AllActions, true},
		{[]RoleRef{{"readWrite", "app"}, {"read", "other"}}, "other", Find, true},
		{nil, "app", Find, false},
	}
	for _, tc := range cases {
		if got := Resolve(tc.roles).Allows(tc.db, tc.need); got != tc.allowed {
			t.Errorf("%v on %q needing %v: %v, want %v", tc.roles, tc.db, tc.need, got, tc.allowed)
		}
	}
	if IsBuiltin(RoleRef{"root", "app"}) {
		t.Error("root@app is built in")
	}
	if !IsBuiltin(RoleRef{"readWrite", "app"}) {
		t.Error("readWrite@app is not built in")
	}
}

func TestSessionSeesRevocation(t *testing.T) {
	m := newManager(t)
	addUser(t, m, "admin", "bob", "pw", RoleRef{"readWrite", "app"})
	s := &Session{}
	if err := converse(t, m, s, SCRAMSHA256, "bob", "pw", true); err != nil {
		t.Fatal(err)
	}
	p, _, _ := s.Privileges(m)
	if !p.Allows("app", Insert) {
		t.Fatal("readWrite does not allow insert")
	}
	addUser(t, m, "admin", "bob", "pw", RoleRef{"read", "app"})
	p, _, _ = s.Privileges(m)
	if p.Allows("app", Insert) {
		t.Fatal("revoked role still allows insert")
	}
	if !s.Logout("admin") || s.Authenticated() {
		t.Fatal("logout")
	}
}

func TestParseKeyFile(t *testing.T) {
	cases := []struct {
		in, key string
		ok      bool
	}{
		{"abcdef", "abcdef", true},
		{"  abc def\n\tghi+/=\r\n", "abcdefghi+/=", true},
		{"abc", "", false},
		{"abcdef!", "", false},
		{strings.Repeat("a", 1025), "", false},
		{strings.Repeat("a", 1024), strings.Repeat("a", 1024), true},
	}
	for _, tc := range cases {
		key, err := ParseKeyFile(tc.in)
		if (err == nil) != tc.ok || key != tc.key {
			t.Errorf("ParseKeyFile(%q) = %q, %v; want %q, ok %v", tc.in, key, err, tc.key, tc.ok)
		}
	}
}
