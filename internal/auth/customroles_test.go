package auth

import (
	"context"
	"errors"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

func privsValue(t testing.TB, privs dbson.A) bson.Value {
	t.Helper()
	raw, err := dbson.Marshal(dbson.D{{Key: "p", Value: privs}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := bson.Doc(raw).Lookup("p")
	return v
}

func res(db, coll string) dbson.D {
	return dbson.D{{Key: "db", Value: db}, {Key: "collection", Value: coll}}
}

func pr(r dbson.D, actions ...string) dbson.D {
	a := dbson.A{}
	for _, x := range actions {
		a = append(a, x)
	}
	return dbson.D{{Key: "resource", Value: r}, {Key: "actions", Value: a}}
}

// TestPermitsResources: which namespaces each resource pattern grants.
func TestPermitsResources(t *testing.T) {
	cluster := dbson.D{{Key: "cluster", Value: true}}
	anyRes := dbson.D{{Key: "anyResource", Value: true}}
	cases := []struct {
		privs dbson.A
		need  Need
		want  bool
	}{
		{dbson.A{pr(res("app", "c"), "find")}, Need{DB: "app", Coll: "c", Actions: Find}, true},
		{dbson.A{pr(res("app", "c"), "find")}, Need{DB: "app", Coll: "d", Actions: Find}, false},
		{dbson.A{pr(res("app", "c"), "find")}, Need{DB: "app", Actions: Find}, false}, // a database-wide need
		{dbson.A{pr(res("app", "c"), "find")}, Need{DB: "other", Coll: "c", Actions: Find}, false},
		{dbson.A{pr(res("app", "c"), "find")}, Need{DB: "app", Coll: "c", Actions: Find | Insert}, false},
		{dbson.A{pr(res("app", ""), "find")}, Need{DB: "app", Coll: "x", Actions: Find}, true},
		{dbson.A{pr(res("app", ""), "listCollections")}, Need{DB: "app", Actions: ListCollections}, true},
		{dbson.A{pr(res("", "c"), "find")}, Need{DB: "any", Coll: "c", Actions: Find}, true},
		{dbson.A{pr(res("", "c"), "find")}, Need{DB: "any", Coll: "d", Actions: Find}, false},
		{dbson.A{pr(res("", ""), "insert")}, Need{DB: "any", Coll: "d", Actions: Insert}, true},
		{dbson.A{pr(res("", ""), "insert")}, Need{Actions: ServerStatus}, false},
		{dbson.A{pr(cluster, "serverStatus")}, Need{Actions: ServerStatus}, true},
		{dbson.A{pr(cluster, "serverStatus")}, Need{DB: "app", Coll: "c", Actions: Find}, false},
		{dbson.A{pr(anyRes, "anyAction")}, Need{DB: "app", Coll: "c", Actions: AllActions}, true},
		{dbson.A{pr(anyRes, "find")}, Need{DB: "app", Coll: "c", Actions: Find}, true},
		{dbson.A{pr(res("app", "c"), "find"), pr(res("app", "c"), "insert")}, Need{DB: "app", Coll: "c", Actions: Find | Insert}, true},
		{dbson.A{pr(res("app", "c"), "find", "changeStream")}, Need{DB: "app", Coll: "c", Actions: Find}, true},
	}
	for _, tc := range cases {
		privs, err := ParsePrivileges("privileges", privsValue(t, tc.privs))
		if err != nil {
			t.Fatalf("%v: %v", tc.privs, err)
		}
		p := newPrivileges()
		for _, x := range privs {
			p.addPrivilege(x)
		}
		if got := p.Permits(tc.need); got != tc.want {
			t.Errorf("%v permits %+v: %v, want %v", tc.privs, tc.need, got, tc.want)
		}
	}
}

func TestParsePrivilegesErrors(t *testing.T) {
	for _, tc := range []struct {
		privs dbson.A
		code  int32
	}{
		{dbson.A{pr(res("app", ""), "fly")}, mongoerr.BadValue},
		{dbson.A{pr(dbson.D{{Key: "db", Value: "app"}}, "find")}, mongoerr.BadValue},
		{dbson.A{pr(dbson.D{{Key: "cluster", Value: false}}, "find")}, mongoerr.BadValue},
		{dbson.A{pr(dbson.D{{Key: "cluster", Value: true}, {Key: "db", Value: "a"}, {Key: "collection", Value: ""}}, "find")}, mongoerr.BadValue},
		{dbson.A{pr(dbson.D{{Key: "db", Value: 1}, {Key: "collection", Value: ""}}, "find")}, mongoerr.TypeMismatch},
		{dbson.A{dbson.D{{Key: "resource", Value: res("a", "")}}}, mongoerr.IDLFailedToParse},
		{dbson.A{dbson.D{{Key: "actions", Value: dbson.A{"find"}}}}, mongoerr.IDLFailedToParse},
		{dbson.A{"find"}, mongoerr.TypeMismatch},
	} {
		_, err := ParsePrivileges("privileges", privsValue(t, tc.privs))
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tc.code {
			t.Errorf("%v: %v, want code %d", tc.privs, err, tc.code)
		}
	}
}

// TestRoleGraph: inheritance resolves at any depth, a cycle is refused,
// and dropping a role removes it from the roles and users holding it.
func TestRoleGraph(t *testing.T) {
	m := newManager(t)
	update := func(fn func(tx *kv.Tx) error) error { return m.db.Update(context.Background(), fn) }
	privs, err := ParsePrivileges("privileges", privsValue(t, dbson.A{pr(res("app", "c"), "find")}))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := RoleRef{"a", "app"}, RoleRef{"b", "app"}, RoleRef{"c", "app"}
	err = update(func(tx *kv.Tx) error {
		for _, x := range []struct {
			ref   RoleRef
			privs []Privilege
			roles []RoleRef
		}{{a, privs, nil}, {b, nil, []RoleRef{a}}, {c, nil, []RoleRef{b, {"read", "app"}}}} {
			r, err := NewRole(tx, x.ref, x.privs, x.roles)
			if err != nil {
				return err
			}
			if err := PutRole(tx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	addUser(t, m, "admin", "u", "pw", c)
	err = m.db.View(func(tx *kv.Tx) error {
		p, all, err := ResolveRoles(tx, []RoleRef{c})
		if err != nil {
			return err
		}
		if len(all) != 4 || !p.Permits(Need{DB: "app", Coll: "c", Actions: Find}) || !p.Allows("app", ListCollections) || p.Allows("app", Insert) {
			t.Errorf("resolve c: %v %v", all, p.List())
		}
		err = CheckGrantRoles(tx, a, []RoleRef{c})
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != mongoerr.InvalidRoleModification {
			t.Errorf("a inheriting c: %v, want InvalidRoleModification", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := update(func(tx *kv.Tx) error { return DropRoles(tx, []RoleRef{b}) }); err != nil {
		t.Fatal(err)
	}
	err = m.db.View(func(tx *kv.Tx) error {
		rc, err := GetRole(tx, c)
		if err != nil || rc == nil || len(rc.Roles) != 1 || rc.Roles[0] != (RoleRef{"read", "app"}) {
			t.Errorf("c after dropping b: %+v, %v", rc, err)
		}
		u, err := GetUser(tx, "admin", "u")
		if err != nil || len(u.Roles) != 1 {
			t.Errorf("user after dropping b: %+v, %v", u, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzParsePrivileges: any privileges document parses or is refused with
// a MongoDB error, never panics, and what parses survives a store and
// reload unchanged.
func FuzzParsePrivileges(f *testing.F) {
	seed := func(privs dbson.A) {
		raw, _ := dbson.Marshal(dbson.D{{Key: "p", Value: privs}})
		f.Add(raw)
	}
	seed(dbson.A{pr(res("app", "c"), "find", "insert")})
	seed(dbson.A{pr(dbson.D{{Key: "cluster", Value: true}}, "serverStatus"), pr(dbson.D{{Key: "anyResource", Value: true}}, "anyAction")})
	seed(dbson.A{pr(res("", ""), "fly")})
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := bson.Doc(raw)
		if bson.Validate(d, bson.MaxDepth) != nil {
			return
		}
		v, ok := d.Lookup("p")
		if !ok {
			return
		}
		privs, err := ParsePrivileges("privileges", v)
		if err != nil {
			var me *mongoerr.Error
			if !errors.As(err, &me) {
				t.Fatalf("not a MongoDB error: %v", err)
			}
			return
		}
		r := &Role{Name: "r", DB: "admin", Privileges: privs, Roles: []RoleRef{}}
		back, err := decodeRole(r.encode())
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if len(back.Privileges) != len(privs) {
			t.Fatalf("reload changed privileges: %v -> %v", privs, back.Privileges)
		}
	})
}
