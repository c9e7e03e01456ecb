package e2e

import (
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

func priv(res bson.D, actions ...string) bson.D {
	a := bson.A{}
	for _, x := range actions {
		a = append(a, x)
	}
	return bson.D{{Key: "resource", Value: res}, {Key: "actions", Value: a}}
}

func ns(db, coll string) bson.D {
	return bson.D{{Key: "db", Value: db}, {Key: "collection", Value: coll}}
}

func roleRef(role, db string) bson.D {
	return bson.D{{Key: "role", Value: role}, {Key: "db", Value: db}}
}

// TestUserDefinedRoles: createRole and friends as mongod 7.0 — resource
// documents ({db, collection}, {db: "", collection}, {cluster: true},
// {anyResource: true}), roles inheriting roles (cycles refused), grants to
// users, and every change reaching a connection that is already open at
// its next command.
func TestUserDefinedRoles(t *testing.T) {
	srv := cairndtest.Start(t, "--auth")
	createUser(t, dial(t, srv.URI).Database("admin"), "root", "pw", bson.A{"root"})
	root := authClient(t, srv.URI, "root", "pw", "")
	for _, n := range []string{"app.c", "app.d", "other.c", "other.d"} {
		db, coll, _ := strings.Cut(n, ".")
		if _, err := root.Database(db).Collection(coll).InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	app, admin := root.Database("app"), root.Database("admin")
	must := func(db *mongo.Database, cmd bson.D) bson.Raw {
		t.Helper()
		out, err := db.RunCommand(ctx(t), cmd).Raw()
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		return out
	}
	must(app, bson.D{{Key: "createRole", Value: "cReader"}, {Key: "privileges", Value: bson.A{priv(ns("app", "c"), "find")}}, {Key: "roles", Value: bson.A{}}})
	createUser(t, admin, "alice", "pw", bson.A{roleRef("cReader", "app")})
	alice := authClient(t, srv.URI, "alice", "pw", "")

	find := func(c *mongo.Client, db, coll string) error {
		return c.Database(db).Collection(coll).FindOne(ctx(t), bson.D{}).Err()
	}
	insert := func(c *mongo.Client, db, coll string) error {
		_, err := c.Database(db).Collection(coll).InsertOne(ctx(t), bson.D{})
		return err
	}
	allowed := func(what string, err error, want bool) {
		t.Helper()
		if want && err != nil {
			t.Errorf("%s: %v, want allowed", what, err)
		} else if !want {
			if err == nil {
				t.Errorf("%s allowed, want Unauthorized", what)
			} else {
				cmdErr(t, err, 13)
			}
		}
	}
	allowed("find app.c", find(alice, "app", "c"), true)
	allowed("find app.d", find(alice, "app", "d"), false)
	allowed("insert app.c", insert(alice, "app", "c"), false)

	// Changes reach alice's open connection at its next command.
	must(app, bson.D{{Key: "grantPrivilegesToRole", Value: "cReader"}, {Key: "privileges", Value: bson.A{priv(ns("app", "c"), "insert")}}})
	allowed("insert app.c after grantPrivilegesToRole", insert(alice, "app", "c"), true)
	must(app, bson.D{{Key: "revokePrivilegesFromRole", Value: "cReader"}, {Key: "privileges", Value: bson.A{priv(ns("app", "c"), "insert")}}})
	allowed("insert app.c after revokePrivilegesFromRole", insert(alice, "app", "c"), false)

	// Inheritance: appAll inherits cReader and the built-in read.
	must(app, bson.D{{Key: "createRole", Value: "appAll"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"cReader"}}})
	must(app, bson.D{{Key: "grantRolesToRole", Value: "appAll"}, {Key: "roles", Value: bson.A{"read"}}})
	must(admin, bson.D{{Key: "grantRolesToUser", Value: "alice"}, {Key: "roles", Value: bson.A{roleRef("appAll", "app")}}})
	allowed("find app.d through appAll -> read", find(alice, "app", "d"), true)
	allowed("find other.c", find(alice, "other", "c"), false)

	for _, tc := range []struct {
		name string
		db   *mongo.Database
		cmd  bson.D
		code int32
	}{
		{"cycle", app, bson.D{{Key: "grantRolesToRole", Value: "cReader"}, {Key: "roles", Value: bson.A{"appAll"}}}, 49},
		{"itself", app, bson.D{{Key: "grantRolesToRole", Value: "cReader"}, {Key: "roles", Value: bson.A{"cReader"}}}, 49},
		{"cycle through updateRole", app, bson.D{{Key: "updateRole", Value: "cReader"}, {Key: "roles", Value: bson.A{"appAll"}}}, 49},
		{"duplicate", app, bson.D{{Key: "createRole", Value: "cReader"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}, 51002},
		{"built-in name", app, bson.D{{Key: "createRole", Value: "read"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}, 2},
		{"unknown action", app, bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{priv(ns("app", ""), "fly")}}, {Key: "roles", Value: bson.A{}}}, 2},
		{"unknown role", app, bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"nope"}}}, 31},
		{"cluster outside admin", app, bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{priv(bson.D{{Key: "cluster", Value: true}}, "serverStatus")}}, {Key: "roles", Value: bson.A{}}}, 49},
		{"other database outside admin", app, bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{priv(ns("other", ""), "find")}}, {Key: "roles", Value: bson.A{}}}, 49},
		{"other database's role outside admin", app, bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{roleRef("read", "other")}}}, 49},
		{"bad resource", app, bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{priv(bson.D{{Key: "db", Value: "app"}}, "find")}}, {Key: "roles", Value: bson.A{}}}, 2},
		{"no privileges field", app, bson.D{{Key: "createRole", Value: "x"}, {Key: "roles", Value: bson.A{}}}, 40414},
		{"modify built-in", app, bson.D{{Key: "grantPrivilegesToRole", Value: "read"}, {Key: "privileges", Value: bson.A{priv(ns("app", ""), "insert")}}}, 2},
		{"grant no privileges", app, bson.D{{Key: "grantPrivilegesToRole", Value: "cReader"}, {Key: "privileges", Value: bson.A{}}}, 2},
		{"revoke no roles", app, bson.D{{Key: "revokeRolesFromRole", Value: "cReader"}, {Key: "roles", Value: bson.A{}}}, 2},
		{"grant roles unknown field", app, bson.D{{Key: "grantRolesToRole", Value: "cReader"}, {Key: "roles", Value: bson.A{"read"}}, {Key: "privileges", Value: bson.A{}}}, 40415},
		{"grant roles to missing role", app, bson.D{{Key: "grantRolesToRole", Value: "nope"}, {Key: "roles", Value: bson.A{"read"}}}, 31},
		{"drop missing", app, bson.D{{Key: "dropRole", Value: "nope"}}, 31},
		{"update nothing", app, bson.D{{Key: "updateRole", Value: "cReader"}}, 2},
		{"grant missing role to user", admin, bson.D{{Key: "grantRolesToUser", Value: "alice"}, {Key: "roles", Value: bson.A{roleRef("nope", "app")}}}, 31},
	} {
		_, err := tc.db.RunCommand(ctx(t), tc.cmd).Raw()
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		cmdErr(t, err, tc.code)
	}

	// rolesInfo and usersInfo show the inheritance.
	out := must(app, bson.D{{Key: "rolesInfo", Value: "appAll"}, {Key: "showPrivileges", Value: true}})
	var info struct {
		Roles []struct {
			Role, DB            string
			IsBuiltin           bool                        `bson:"isBuiltin"`
			InheritedRoles      []struct{ Role, DB string } `bson:"inheritedRoles"`
			InheritedPrivileges []bson.Raw                  `bson:"inheritedPrivileges"`
		}
	}
	if err := bson.Unmarshal(out, &info); err != nil || len(info.Roles) != 1 {
		t.Fatalf("rolesInfo = %v, %v", out, err)
	}
	r := info.Roles[0]
	var inherited []string
	for _, ir := range r.InheritedRoles {
		inherited = append(inherited, ir.Role+"@"+ir.DB)
	}
	slices.Sort(inherited)
	if r.IsBuiltin || !slices.Equal(inherited, []string{"cReader@app", "read@app"}) || len(r.InheritedPrivileges) < 2 {
		t.Errorf("rolesInfo appAll = %v", out)
	}
	out = must(app, bson.D{{Key: "rolesInfo", Value: 1}, {Key: "showBuiltinRoles", Value: true}})
	if s := out.String(); !strings.Contains(s, `"role": "read"`) || !strings.Contains(s, `"role": "appAll"`) || !strings.Contains(s, `"role": "cReader"`) {
		t.Errorf("rolesInfo 1 with built-in roles = %s", s)
	}
	out = must(admin, bson.D{{Key: "usersInfo", Value: "alice"}, {Key: "showPrivileges", Value: true}})
	if s := out.String(); !strings.Contains(s, `"role": "read"`) || !strings.Contains(s, `"collection": "c"`) {
		t.Errorf("usersInfo alice showPrivileges = %s", s)
	}
	// alice may see her own roles, not others'.
	if _, err := alice.Database("app").RunCommand(ctx(t), bson.D{{Key: "rolesInfo", Value: "cReader"}}).Raw(); err != nil {
		t.Errorf("rolesInfo of a held role: %v", err)
	}
	must(app, bson.D{{Key: "createRole", Value: "hidden"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}})
	cmdErr(t, alice.Database("app").RunCommand(ctx(t), bson.D{{Key: "rolesInfo", Value: "hidden"}}).Err(), 13)
	cmdErr(t, alice.Database("app").RunCommand(ctx(t), bson.D{{Key: "createRole", Value: "mine"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}).Err(), 13)

	// Admin roles: the cluster resource, every database's collection c,
	// anyResource.
	must(admin, bson.D{{Key: "createRole", Value: "statusOnly"}, {Key: "privileges", Value: bson.A{priv(bson.D{{Key: "cluster", Value: true}}, "serverStatus")}}, {Key: "roles", Value: bson.A{}}})
	must(admin, bson.D{{Key: "createRole", Value: "cEverywhere"}, {Key: "privileges", Value: bson.A{priv(ns("", "c"), "find")}}, {Key: "roles", Value: bson.A{}}})
	must(admin, bson.D{{Key: "createRole", Value: "everything"}, {Key: "privileges", Value: bson.A{priv(bson.D{{Key: "anyResource", Value: true}}, "anyAction")}}, {Key: "roles", Value: bson.A{}}})
	createUser(t, admin, "bob", "pw", bson.A{"statusOnly", "cEverywhere"})
	createUser(t, admin, "carol", "pw", bson.A{"everything"})
	bob, carol := authClient(t, srv.URI, "bob", "pw", ""), authClient(t, srv.URI, "carol", "pw", "")
	serverStatus := func(c *mongo.Client) error {
		return c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Err()
	}
	allowed("bob serverStatus", serverStatus(bob), true)
	allowed("bob find other.c", find(bob, "other", "c"), true)
	allowed("bob find other.d", find(bob, "other", "d"), false)
	allowed("bob insert other.c", insert(bob, "other", "c"), false)
	allowed("carol serverStatus", serverStatus(carol), true)
	allowed("carol insert other.d", insert(carol, "other", "d"), true)

	// Dropping a role removes it from its holders at once.
	must(app, bson.D{{Key: "dropRole", Value: "appAll"}})
	allowed("find app.d after dropRole", find(alice, "app", "d"), false)
	allowed("find app.c after dropRole (cReader kept)", find(alice, "app", "c"), true)
	out = must(admin, bson.D{{Key: "usersInfo", Value: "alice"}})
	if strings.Contains(out.String(), "appAll") {
		t.Errorf("alice still holds the dropped role: %s", out)
	}
	must(app, bson.D{{Key: "updateRole", Value: "cReader"}, {Key: "privileges", Value: bson.A{priv(ns("app", "d"), "find")}}})
	allowed("find app.c after updateRole", find(alice, "app", "c"), false)
	allowed("find app.d after updateRole", find(alice, "app", "d"), true)
	out = must(app, bson.D{{Key: "dropAllRolesFromDatabase", Value: 1}})
	if n := out.Lookup("n").Int32(); n != 2 {
		t.Errorf("dropAllRolesFromDatabase n = %d, want 2 (cReader, hidden)", n)
	}
	allowed("find app.d after dropAllRolesFromDatabase", find(alice, "app", "d"), false)
}
