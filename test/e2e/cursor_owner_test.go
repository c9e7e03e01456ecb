package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// dialLoad dials srv with a raw wire connection: one connection, so that
// its authentication state is exactly what the test did on it.
func dialLoad(t *testing.T, srv *cairndtest.Server) *loadConn {
	t.Helper()
	nc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &loadConn{nc: nc, r: wire.NewReader(nc, 0)}
}

// scramAuth authenticates c as user of db with SCRAM-SHA-256
// (skipEmptyExchange) and returns the server's error reply, if any.
func scramAuth(t *testing.T, c *loadConn, db, user, pwd string) (bson.Raw, error) {
	t.Helper()
	cl, err := scram.SHA256.NewClient(user, pwd, "")
	if err != nil {
		t.Fatal(err)
	}
	conv := cl.NewConversation()
	first, err := conv.Step("")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.run(bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
		{Key: "payload", Value: bson.Binary{Data: []byte(first)}}, {Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}},
		{Key: "$db", Value: db}})
	if err != nil {
		return r, err
	}
	_, server1 := r.Lookup("payload").Binary()
	final, err := conv.Step(string(server1))
	if err != nil {
		t.Fatal(err)
	}
	r, err = c.run(bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: r.Lookup("conversationId").Int32()},
		{Key: "payload", Value: bson.Binary{Data: []byte(final)}}, {Key: "$db", Value: db}})
	if err != nil {
		return r, err
	}
	_, server2 := r.Lookup("payload").Binary()
	if _, err := conv.Step(string(server2)); err != nil || !conv.Valid() || !r.Lookup("done").Boolean() {
		t.Fatalf("%s@%s: server signature not accepted or not done: %v %v", user, db, err, r)
	}
	return r, nil
}

// wantCode asserts a raw reply is the error code (and codeName) with msg.
func wantCode(t *testing.T, what string, reply bson.Raw, err error, code int32, codeName, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want error %d", what, code)
	}
	got, _ := reply.Lookup("code").Int32OK()
	name, _ := reply.Lookup("codeName").StringValueOK()
	m, _ := reply.Lookup("errmsg").StringValueOK()
	if got != code || name != codeName || m != msg {
		t.Fatalf("%s: %d %s %q, want %d %s %q", what, got, name, m, code, codeName, msg)
	}
}

// authenticatedAs returns connectionStatus' authenticated users as
// "user@db" strings.
func authenticatedAs(t *testing.T, c *loadConn) string {
	t.Helper()
	r, err := c.run(bson.D{{Key: "connectionStatus", Value: 1}, {Key: "$db", Value: "admin"}})
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := r.Lookup("authInfo", "authenticatedUsers").Array().Values()
	var users []string
	for _, v := range vals {
		d := v.Document()
		users = append(users, d.Lookup("user").StringValue()+"@"+d.Lookup("db").StringValue())
	}
	return strings.Join(users, ",")
}

func TestCursorOwnership(t *testing.T) {
	srv := cairndtest.Start(t, "--auth")
	t.Cleanup(func() { srv.Stop() })
	root := dialLoad(t, srv)
	must := func(c *loadConn, cmd bson.D) bson.Raw {
		t.Helper()
		r, err := c.run(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	must(root, bson.D{{Key: "createUser", Value: "root"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}, {Key: "$db", Value: "admin"}})
	if _, err := scramAuth(t, root, "admin", "root", "pw"); err != nil {
		t.Fatal(err)
	}
	rw := bson.A{bson.D{{Key: "role", Value: "readWrite"}, {Key: "db", Value: "app"}}}
	for _, u := range []string{"alice", "bob"} {
		must(root, bson.D{{Key: "createUser", Value: u}, {Key: "pwd", Value: "pw-" + u}, {Key: "roles", Value: rw}, {Key: "$db", Value: "admin"}})
	}
	docs := bson.A{}
	for i := range 10 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	must(root, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "app"}})

	alice, bob := dialLoad(t, srv), dialLoad(t, srv)
	for c, u := range map[*loadConn]string{alice: "alice", bob: "bob"} {
		if _, err := scramAuth(t, c, "admin", u, "pw-"+u); err != nil {
			t.Fatal(err)
		}
	}
	open := func(c *loadConn) int64 {
		t.Helper()
		r := must(c, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}, {Key: "$db", Value: "app"}})
		return r.Lookup("cursor", "id").Int64()
	}
	getMore := func(c *loadConn, id int64) (bson.Raw, error) {
		return c.run(bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 2}, {Key: "$db", Value: "app"}})
	}
	kill := func(c *loadConn, ids ...int64) (bson.Raw, error) {
		a := bson.A{}
		for _, id := range ids {
			a = append(a, id)
		}
		return c.run(bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: a}, {Key: "$db", Value: "app"}})
	}
	ids := func(r bson.Raw, field string) string {
		vals, _ := r.Lookup(field).Array().Values()
		var s []string
		for _, v := range vals {
			s = append(s, fmt.Sprint(v.Int64()))
		}
		return strings.Join(s, ",")
	}

	a := open(alice)
	r, err := getMore(bob, a)
	wantCode(t, "bob's getMore on alice's cursor", r, err, 13, "Unauthorized", fmt.Sprintf("cursor id %d was not created by the authenticated user", a))
	r, err = kill(bob, a)
	wantCode(t, "bob's killCursors of alice's cursor", r, err, 13, "Unauthorized", "not authorized to kill cursor on app.c")
	// One cursor the caller may not kill fails the whole command: nothing
	// is killed, not even the caller's own.
	b := open(bob)
	r, err = kill(bob, b, a)
	wantCode(t, "bob's killCursors of his and alice's cursors", r, err, 13, "Unauthorized", "not authorized to kill cursor on app.c")
	if _, err := getMore(bob, b); err != nil {
		t.Fatalf("bob's own cursor after the refused killCursors: %v", err)
	}
	// Unknown ids are no authorization matter.
	r = must(bob, bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{int64(12345), b}}, {Key: "$db", Value: "app"}})
	if ids(r, "cursorsKilled") != fmt.Sprint(b) || ids(r, "cursorsNotFound") != "12345" {
		t.Errorf("bob's killCursors: %v", r)
	}
	// The owner continues; root (killAnyCursor) kills it.
	if r, err := getMore(alice, a); err != nil || len(mustValues(t, r.Lookup("cursor", "nextBatch").Array())) != 2 {
		t.Fatalf("alice's getMore: %v %v", r, err)
	}
	r = must(root, bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{a}}, {Key: "$db", Value: "app"}})
	if ids(r, "cursorsKilled") != fmt.Sprint(a) {
		t.Errorf("root's killCursors: %v", r)
	}
	r, err = getMore(alice, a)
	wantCode(t, "getMore after root killed the cursor", r, err, 43, "CursorNotFound", fmt.Sprintf("cursor id %d not found", a))

	// A cursor belongs to the user, not the connection: after logout and
	// authenticating as bob, alice's cursor is bob's no more than before.
	a = open(alice)
	must(alice, bson.D{{Key: "logout", Value: 1}, {Key: "$db", Value: "admin"}})
	r, err = getMore(alice, a)
	wantCode(t, "getMore after logout", r, err, 13, "Unauthorized", "Command getMore requires authentication")
	if _, err := scramAuth(t, alice, "admin", "bob", "pw-bob"); err != nil {
		t.Fatal(err)
	}
	r, err = getMore(alice, a)
	wantCode(t, "bob's getMore on the connection alice left", r, err, 13, "Unauthorized", fmt.Sprintf("cursor id %d was not created by the authenticated user", a))
	// alice, on another connection, still owns it.
	alice2 := dialLoad(t, srv)
	if _, err := scramAuth(t, alice2, "admin", "alice", "pw-alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := getMore(alice2, a); err != nil {
		t.Fatalf("alice's getMore from another connection: %v", err)
	}
	if r, err := kill(alice2, a); err != nil || ids(r, "cursorsKilled") != fmt.Sprint(a) {
		t.Fatalf("alice kills her cursor: %v %v", r, err)
	}
	// The owner must still hold what the find needed: revoking it stops
	// the cursor; granting it back lets it go on.
	a = open(alice2)
	roleCmd := func(cmd string) {
		t.Helper()
		must(root, bson.D{{Key: cmd, Value: "alice"}, {Key: "roles", Value: rw}, {Key: "$db", Value: "admin"}})
	}
	roleCmd("revokeRolesFromUser")
	r, err = getMore(alice2, a)
	wantCode(t, "getMore after the role was revoked", r, err, 13, "Unauthorized", fmt.Sprintf("not authorized for getMore with cursor id %d", a))
	roleCmd("grantRolesToUser")
	if _, err := getMore(alice2, a); err != nil {
		t.Fatalf("getMore after the role was granted back: %v", err)
	}
}

func mustValues(t *testing.T, a bson.RawArray) []bson.RawValue {
	t.Helper()
	vals, err := a.Values()
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

// TestReauthentication: one user per connection, as mongod 6.0 on.
func TestReauthentication(t *testing.T) {
	srv := cairndtest.Start(t, "--auth")
	t.Cleanup(func() { srv.Stop() })
	c := dialLoad(t, srv)
	create := func(db, name string, role bson.D) {
		t.Helper()
		if _, err := c.run(bson.D{{Key: "createUser", Value: name}, {Key: "pwd", Value: "pw-" + name}, {Key: "roles", Value: bson.A{role}}, {Key: "$db", Value: db}}); err != nil {
			t.Fatal(err)
		}
	}
	create("admin", "alice", bson.D{{Key: "role", Value: "root"}, {Key: "db", Value: "admin"}}) // the localhost exception
	if _, err := scramAuth(t, c, "admin", "alice", "pw-alice"); err != nil {
		t.Fatal(err)
	}
	create("admin", "bob", bson.D{{Key: "role", Value: "root"}, {Key: "db", Value: "admin"}})
	create("app", "carol", bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: "app"}})
	if got := authenticatedAs(t, c); got != "alice@admin" {
		t.Fatalf("authenticated as %q", got)
	}
	// The same user again: accepted.
	if _, err := scramAuth(t, c, "admin", "alice", "pw-alice"); err != nil {
		t.Fatalf("re-authenticating alice: %v", err)
	}
	r, err := scramAuth(t, c, "admin", "bob", "pw-bob")
	wantCode(t, "bob after alice", r, err, 5626701, "Location5626701", "Each client connection may only be authenticated once. Previously authenticated as: alice@admin")
	r, err = scramAuth(t, c, "app", "carol", "pw-carol")
	wantCode(t, "carol@app after alice", r, err, 5626702, "Location5626702", "Client has attempted to authenticate on multiple databases.Already authenticated as: alice@admin")
	if got := authenticatedAs(t, c); got != "alice@admin" {
		t.Fatalf("after the refused attempts: authenticated as %q", got)
	}
	// logout, then another user.
	if _, err := c.run(bson.D{{Key: "logout", Value: 1}, {Key: "$db", Value: "admin"}}); err != nil {
		t.Fatal(err)
	}
	if got := authenticatedAs(t, c); got != "" {
		t.Fatalf("after logout: authenticated as %q", got)
	}
	if _, err := scramAuth(t, c, "app", "carol", "pw-carol"); err != nil {
		t.Fatalf("carol after logout: %v", err)
	}
	if got := authenticatedAs(t, c); got != "carol@app" {
		t.Fatalf("authenticated as %q, want carol@app", got)
	}
	if !strings.Contains(srv.Logs(), "Client has attempted to reauthenticate as a single user") {
		t.Error("re-authenticating the same user is not logged")
	}
}
