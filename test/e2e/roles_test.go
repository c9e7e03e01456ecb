package e2e

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestRoles runs one operation of each privilege class as a user of each
// built-in role and checks that exactly the expected ones are allowed (and
// the others refused with Unauthorized).
func TestRoles(t *testing.T) {
	srv := cairndtest.Start(t, "--auth")
	anon := dial(t, srv.URI)
	createUser(t, anon.Database("admin"), "root", "pw", bson.A{"root"})
	root := authClient(t, srv.URI, "root", "pw", "")
	for _, db := range []string{"app", "other"} {
		if _, err := root.Database(db).Collection("c").InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	type op struct {
		name string
		run  func(c *mongo.Client, user string) error
	}
	run := func(db string, cmd bson.D) func(*mongo.Client, string) error {
		return func(c *mongo.Client, _ string) error { return c.Database(db).RunCommand(ctx(t), cmd).Err() }
	}
	ops := []op{
		{"find", func(c *mongo.Client, _ string) error {
			return c.Database("app").Collection("c").FindOne(ctx(t), bson.D{}).Err()
		}},
		{"findOther", func(c *mongo.Client, _ string) error {
			return c.Database("other").Collection("c").FindOne(ctx(t), bson.D{}).Err()
		}},
		{"insert", func(c *mongo.Client, _ string) error {
			_, err := c.Database("app").Collection("c").InsertOne(ctx(t), bson.D{})
			return err
		}},
		{"insertOther", func(c *mongo.Client, _ string) error {
			_, err := c.Database("other").Collection("c").InsertOne(ctx(t), bson.D{})
			return err
		}},
		{"upsert", func(c *mongo.Client, _ string) error {
			_, err := c.Database("app").Collection("c").UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
			return err
		}},
		{"createIndex", func(c *mongo.Client, user string) error {
			_, err := c.Database("app").Collection("c").Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: user, Value: 1}}})
			return err
		}},
		{"aggregateOut", func(c *mongo.Client, _ string) error {
			cur, err := c.Database("app").Collection("c").Aggregate(ctx(t), bson.A{bson.D{{Key: "$out", Value: "copy"}}})
			if err == nil {
				cur.Close(ctx(t))
			}
			return err
		}},
		{"collMod", run("app", bson.D{{Key: "collMod", Value: "c"}})},
		{"listCollections", run("app", bson.D{{Key: "listCollections", Value: 1}})},
		{"createUser", func(c *mongo.Client, user string) error {
			return c.Database("app").RunCommand(ctx(t), bson.D{{Key: "createUser", Value: "made_by_" + user},
				{Key: "pwd", Value: "x"}, {Key: "roles", Value: bson.A{"read"}}}).Err()
		}},
		{"usersInfo", run("app", bson.D{{Key: "usersInfo", Value: 1}})},
		{"serverStatus", run("admin", bson.D{{Key: "serverStatus", Value: 1}})},
		{"setParameter", run("admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: 0}})},
		{"listDatabasesAll", run("admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "authorizedDatabases", Value: false}})},
		{"explainFind", run("app", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}})},
		{"ping", run("admin", bson.D{{Key: "ping", Value: 1}})},
	}
	roles := []struct {
		user    string
		role    bson.D
		allowed string // names of the allowed operations
	}{
		{"reader", bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: "app"}}, "find listCollections explainFind ping"},
		{"writer", bson.D{{Key: "role", Value: "readWrite"}, {Key: "db", Value: "app"}}, "find insert upsert createIndex aggregateOut listCollections explainFind ping"},
		{"dbadmin", bson.D{{Key: "role", Value: "dbAdmin"}, {Key: "db", Value: "app"}}, "createIndex collMod listCollections ping"},
		{"useradmin", bson.D{{Key: "role", Value: "userAdmin"}, {Key: "db", Value: "app"}}, "createUser usersInfo ping"},
		{"owner", bson.D{{Key: "role", Value: "dbOwner"}, {Key: "db", Value: "app"}}, "find insert upsert createIndex aggregateOut collMod listCollections createUser usersInfo explainFind ping"},
		{"readany", bson.D{{Key: "role", Value: "readAnyDatabase"}, {Key: "db", Value: "admin"}}, "find findOther listCollections listDatabasesAll explainFind ping"},
		{"rwany", bson.D{{Key: "role", Value: "readWriteAnyDatabase"}, {Key: "db", Value: "admin"}}, "find findOther insert insertOther upsert createIndex aggregateOut listCollections listDatabasesAll explainFind ping"},
		{"uany", bson.D{{Key: "role", Value: "userAdminAnyDatabase"}, {Key: "db", Value: "admin"}}, "createUser usersInfo listDatabasesAll ping"},
		{"monitor", bson.D{{Key: "role", Value: "clusterMonitor"}, {Key: "db", Value: "admin"}}, "listCollections serverStatus listDatabasesAll ping"},
		{"root2", bson.D{{Key: "role", Value: "root"}, {Key: "db", Value: "admin"}}, "find findOther insert insertOther upsert createIndex aggregateOut collMod listCollections createUser usersInfo serverStatus setParameter listDatabasesAll explainFind ping"},
	}
	for _, r := range roles {
		createUser(t, root.Database("admin"), r.user, "pw", bson.A{r.role})
	}
	for _, r := range roles {
		t.Run(r.user, func(t *testing.T) {
			c := authClient(t, srv.URI, r.user, "pw", "", options.Client().SetMaxPoolSize(1))
			allowed := map[string]bool{}
			for _, n := range strings.Fields(r.allowed) {
				allowed[n] = true
			}
			for _, o := range ops {
				err := o.run(c, r.user)
				if allowed[o.name] {
					if err != nil && err != mongo.ErrNoDocuments {
						t.Errorf("%s: %v", o.name, err)
					}
					continue
				}
				if err == nil {
					t.Errorf("%s: allowed, want Unauthorized", o.name)
					continue
				}
				var se mongo.ServerError
				if !asServerError(err, &se) || !se.HasErrorCode(13) || !strings.Contains(err.Error(), "not authorized on ") {
					t.Errorf("%s: %v, want Unauthorized", o.name, err)
				}
			}
			// listDatabases (authorizedDatabases by default) lists only
			// what the user's roles reach.
			res, err := c.ListDatabaseNames(ctx(t), bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(res)
			if strings.HasSuffix(r.role[1].Value.(string), "app") && got != "[app]" {
				t.Errorf("listDatabases = %s, want [app]", got)
			}
		})
	}
}
