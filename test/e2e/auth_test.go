package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// authClient dials uri as user (on admin) with a mechanism ("" lets the
// driver negotiate: SCRAM-SHA-256 with speculative authentication).
func authClient(t *testing.T, uri, user, pwd, mech string, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	cred := options.Credential{Username: user, Password: pwd, AuthSource: "admin", AuthMechanism: mech}
	return dial(t, uri, append([]*options.ClientOptions{options.Client().SetAuth(cred)}, opts...)...)
}

// authFails asserts that connecting as user with pwd is refused with
// AuthenticationFailed.
func authFails(t *testing.T, uri, user, pwd, mech string) {
	t.Helper()
	cred := options.Credential{Username: user, Password: pwd, AuthSource: "admin", AuthMechanism: mech}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetAuth(cred).SetTimeout(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = client.Ping(c, nil)
	if err == nil || !strings.Contains(err.Error(), "(AuthenticationFailed) Authentication failed.") {
		t.Fatalf("%s %s/%q: ping error %v, want AuthenticationFailed", mech, user, pwd, err)
	}
}

// errMsg asserts a command error's code and message.
func errMsg(t *testing.T, err error, code int32, prefix string) {
	t.Helper()
	cmdErr(t, err, code)
	var ce mongo.CommandError
	if errors.As(err, &ce) && !strings.HasPrefix(ce.Message, prefix) {
		t.Fatalf("error %q, want prefix %q", ce.Message, prefix)
	}
}

func createUser(t *testing.T, db *mongo.Database, name, pwd string, roles bson.A, extra ...bson.E) {
	t.Helper()
	cmd := bson.D{{Key: "createUser", Value: name}, {Key: "pwd", Value: pwd}, {Key: "roles", Value: roles}}
	cmd = append(cmd, extra...)
	if err := db.RunCommand(ctx(t), cmd).Err(); err != nil {
		t.Fatalf("createUser %s: %v", name, err)
	}
}

func TestAuthMechanismsAndLocalhostException(t *testing.T) {
	srv := cairndtest.Start(t, "--auth")
	anon := dial(t, srv.URI) // ping needs no authentication
	_, err := anon.Database("app").Collection("c").InsertOne(ctx(t), bson.D{{Key: "a", Value: 1}})
	errMsg(t, err, 13, "Command insert requires authentication")
	err = anon.Database("app").RunCommand(ctx(t), bson.D{{Key: "listCollections", Value: 1}}).Err()
	errMsg(t, err, 13, "Command listCollections requires authentication")

	// The localhost exception: the first user, on admin only.
	err = anon.Database("app").RunCommand(ctx(t), bson.D{{Key: "createUser", Value: "x"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{}}}).Err()
	errMsg(t, err, 13, "Command createUser requires authentication")
	createUser(t, anon.Database("admin"), "root", "rootpw", bson.A{"root"})
	err = anon.Database("admin").RunCommand(ctx(t), bson.D{{Key: "createUser", Value: "second"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{"root"}}}).Err()
	errMsg(t, err, 13, "Command createUser requires authentication")

	root := authClient(t, srv.URI, "root", "rootpw", "")
	createUser(t, root.Database("admin"), "sha1only", "pw1", bson.A{"readWriteAnyDatabase"},
		bson.E{Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}})
	createUser(t, root.Database("admin"), "prep", "I\u00ADX", bson.A{"readWriteAnyDatabase"})

	for _, mech := range []string{"", "SCRAM-SHA-1", "SCRAM-SHA-256"} {
		c := authClient(t, srv.URI, "root", "rootpw", mech)
		if _, err := c.Database("app").Collection("c").InsertOne(ctx(t), bson.D{{Key: "mech", Value: mech}}); err != nil {
			t.Fatalf("%q: insert: %v", mech, err)
		}
		authFails(t, srv.URI, "root", "wrong", mech)
		authFails(t, srv.URI, "nobody", "rootpw", mech)
	}
	// A user with SCRAM-SHA-1 credentials only: the driver negotiates it
	// through saslSupportedMechs; SCRAM-SHA-256 is refused.
	authClient(t, srv.URI, "sha1only", "pw1", "")
	authClient(t, srv.URI, "sha1only", "pw1", "SCRAM-SHA-1")
	authFails(t, srv.URI, "sha1only", "pw1", "SCRAM-SHA-256")
	// SASLprep: the soft hyphen is mapped to nothing.
	authClient(t, srv.URI, "prep", "IX", "SCRAM-SHA-256")

	var hello bson.M
	if err := anon.Database("admin").RunCommand(ctx(t), bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: "admin.sha1only"}}).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	if got, ok := hello["saslSupportedMechs"].(bson.A); !ok || len(got) != 1 || got[0] != "SCRAM-SHA-1" {
		t.Errorf("saslSupportedMechs = %v", hello["saslSupportedMechs"])
	}
	if !strings.Contains(srv.Logs(), `"Authentication failed"`) || !strings.Contains(srv.Logs(), `"user":"nobody"`) {
		t.Error("failed logins are not logged with the user")
	}
	// Stored credentials never contain the password.
	var info struct {
		Users []struct {
			Credentials map[string]struct {
				IterationCount             int32
				Salt, StoredKey, ServerKey string
			}
		}
	}
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "usersInfo", Value: "root"}, {Key: "showCredentials", Value: true}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if len(info.Users) != 1 {
		t.Fatalf("usersInfo: %v", info.Users)
	}
	want := map[string]int32{"SCRAM-SHA-1": 10000, "SCRAM-SHA-256": 15000}
	for mech, iters := range want {
		c, ok := info.Users[0].Credentials[mech]
		if !ok || c.Salt == "" || c.StoredKey == "" || c.ServerKey == "" || c.IterationCount != iters {
			t.Errorf("credentials[%s] = %+v", mech, c)
		}
	}
	if strings.Contains(srv.Logs(), "rootpw") {
		t.Error("the password appears in the log")
	}
}

func TestAuthLogoutConnectionStatusAndRevocation(t *testing.T) {
	srv := cairndtest.Start(t, "--auth")
	anon := dial(t, srv.URI)
	createUser(t, anon.Database("admin"), "root", "pw", bson.A{"root"})
	root := authClient(t, srv.URI, "root", "pw", "")
	createUser(t, root.Database("admin"), "w", "pw", bson.A{bson.D{{Key: "role", Value: "readWrite"}, {Key: "db", Value: "app"}}})

	one := options.Client().SetMaxPoolSize(1)
	w := authClient(t, srv.URI, "w", "pw", "", one)
	var st struct {
		AuthInfo struct {
			Users []bson.M `bson:"authenticatedUsers"`
			Roles []bson.M `bson:"authenticatedUserRoles"`
		} `bson:"authInfo"`
	}
	if err := w.Database("admin").RunCommand(ctx(t), bson.D{{Key: "connectionStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.AuthInfo.Users) != 1 || st.AuthInfo.Users[0]["user"] != "w" || st.AuthInfo.Users[0]["db"] != "admin" ||
		len(st.AuthInfo.Roles) != 1 || st.AuthInfo.Roles[0]["role"] != "readWrite" || st.AuthInfo.Roles[0]["db"] != "app" {
		t.Errorf("connectionStatus = %+v", st.AuthInfo)
	}
	coll := w.Database("app").Collection("c")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	// Revoking takes effect on the open connection.
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "revokeRolesFromUser", Value: "w"},
		{Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "readWrite"}, {Key: "db", Value: "app"}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(ctx(t), bson.D{{Key: "a", Value: 2}})
	errMsg(t, err, 13, "not authorized on app to execute command { insert: \"c\"")
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "grantRolesToUser", Value: "w"},
		{Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: "app"}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n != 1 {
		t.Fatalf("count after grant: %d %v", n, err)
	}
	// logout leaves the (single) connection unauthenticated.
	if err := w.Database("admin").RunCommand(ctx(t), bson.D{{Key: "logout", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = coll.CountDocuments(ctx(t), bson.D{})
	errMsg(t, err, 13, "Command aggregate requires authentication")
	// A dropped user loses its privileges at once, too.
	w2 := authClient(t, srv.URI, "w", "pw", "", one)
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "dropUser", Value: "w"}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = w2.Database("app").Collection("c").CountDocuments(ctx(t), bson.D{})
	cmdErr(t, err, 13)
	authFails(t, srv.URI, "w", "pw", "")
}

func TestUserManagementCommands(t *testing.T) {
	_, client := connect(t) // access control off: user commands still work
	db := client.Database("app")
	createUser(t, db, "u1", "pw", bson.A{"read", bson.D{{Key: "role", Value: "dbAdmin"}, {Key: "db", Value: "other"}}},
		bson.E{Key: "customData", Value: bson.D{{Key: "team", Value: "x"}}})
	cases := []struct {
		name string
		cmd  bson.D
		code int32
	}{
		{"duplicate", bson.D{{Key: "createUser", Value: "u1"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}}, 51003},
		{"no pwd", bson.D{{Key: "createUser", Value: "u2"}, {Key: "roles", Value: bson.A{}}}, 2},
		{"empty pwd", bson.D{{Key: "createUser", Value: "u2"}, {Key: "pwd", Value: ""}, {Key: "roles", Value: bson.A{}}}, 2},
		{"no roles", bson.D{{Key: "createUser", Value: "u2"}, {Key: "pwd", Value: "pw"}}, 40414},
		{"unknown role", bson.D{{Key: "createUser", Value: "u2"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"nope"}}}, 31},
		{"root off admin", bson.D{{Key: "createUser", Value: "u2"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}}, 31},
		{"bad mechanism", bson.D{{Key: "createUser", Value: "u2"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}, {Key: "mechanisms", Value: bson.A{"PLAIN"}}}, 2},
		{"unknown field", bson.D{{Key: "createUser", Value: "u2"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}, {Key: "x", Value: 1}}, 40415},
		{"update nothing", bson.D{{Key: "updateUser", Value: "u1"}}, 2},
		{"update missing", bson.D{{Key: "updateUser", Value: "zz"}, {Key: "pwd", Value: "x"}}, 11},
		{"drop missing", bson.D{{Key: "dropUser", Value: "zz"}}, 11},
		{"grant missing user", bson.D{{Key: "grantRolesToUser", Value: "zz"}, {Key: "roles", Value: bson.A{"read"}}}, 11},
		{"grant unknown role", bson.D{{Key: "grantRolesToUser", Value: "u1"}, {Key: "roles", Value: bson.A{"nope"}}}, 31},
		{"saslContinue without start", bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: 1}, {Key: "payload", Value: bson.Binary{Data: []byte("x")}}}, 17},
		{"saslStart PLAIN", bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "PLAIN"}, {Key: "payload", Value: bson.Binary{Data: []byte("x")}}}, 334},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmdErr(t, db.RunCommand(ctx(t), tc.cmd).Err(), tc.code)
		})
	}
	users := func(cmd bson.D) []bson.M {
		t.Helper()
		var r struct {
			Users []bson.M `bson:"users"`
		}
		if err := db.RunCommand(ctx(t), cmd).Decode(&r); err != nil {
			t.Fatal(err)
		}
		return r.Users
	}
	createUser(t, db, "u2", "pw", bson.A{})
	if got := users(bson.D{{Key: "usersInfo", Value: 1}}); len(got) != 2 || got[0]["user"] != "u1" || got[1]["user"] != "u2" {
		t.Fatalf("usersInfo 1 = %v", got)
	}
	u1 := users(bson.D{{Key: "usersInfo", Value: "u1"}})
	if len(u1) != 1 || u1[0]["_id"] != "app.u1" || u1[0]["credentials"] != nil || u1[0]["customData"].(bson.D)[0].Value != "x" ||
		len(u1[0]["roles"].(bson.A)) != 2 || len(u1[0]["mechanisms"].(bson.A)) != 2 {
		t.Fatalf("usersInfo u1 = %v", u1)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "grantRolesToUser", Value: "u2"}, {Key: "roles", Value: bson.A{"readWrite"}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "updateUser", Value: "u2"}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-256"}}}).Err(); err != nil {
		t.Fatal(err)
	}
	u2 := users(bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "u2"}, {Key: "db", Value: "app"}}}})
	if len(u2) != 1 || len(u2[0]["roles"].(bson.A)) != 1 || len(u2[0]["mechanisms"].(bson.A)) != 1 {
		t.Fatalf("usersInfo u2 = %v", u2)
	}
	if got := users(bson.D{{Key: "usersInfo", Value: bson.D{{Key: "forAllDBs", Value: true}}}}); len(got) != 2 {
		t.Fatalf("forAllDBs = %v", got)
	}
	var r bson.M
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dropAllUsersFromDatabase", Value: 1}}).Decode(&r); err != nil || r["n"] != int32(2) {
		t.Fatalf("dropAllUsersFromDatabase = %v %v", r, err)
	}
	if got := users(bson.D{{Key: "usersInfo", Value: 1}}); len(got) != 0 {
		t.Fatalf("after dropAll: %v", got)
	}
}
