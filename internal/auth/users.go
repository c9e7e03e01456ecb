package auth

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// usersTree is the kv tree holding one document per user, keyed by
// db + "\x00" + user name, so a database's users are one key range.
const usersTree = "_users"

// User is one user: its name and authentication database, credentials per
// mechanism, roles and custom data.
type User struct {
	Name, DB    string
	ID          [16]byte
	Credentials map[string]Credential
	Roles       []RoleRef
	CustomData  bson.Doc // nil when absent
}

// FullName is "db.user", the user document's _id in MongoDB.
func (u *User) FullName() string { return u.DB + "." + u.Name }

// Mechanisms lists the mechanisms the user has credentials for, in hello's
// order.
func (u *User) Mechanisms() []string {
	var out []string
	for _, m := range Mechanisms {
		if _, ok := u.Credentials[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// NewUserID returns a random user id (a UUID, as MongoDB's userId).
func NewUserID() ([16]byte, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return id, fmt.Errorf("auth: user id: %w", err)
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id, nil
}

func userKey(db, name string) []byte {
	return append(append([]byte(db), 0), name...)
}

// Encode is the user's document in admin.system.users' shape.
func (u *User) Encode(showCredentials bool) bson.Doc {
	var b bson.Builder
	u.AppendTo(&b, showCredentials)
	return b.Finish()
}

// AppendTo appends the user's fields (as usersInfo and the store show them)
// to b.
func (u *User) AppendTo(b *bson.Builder, showCredentials bool) {
	b.AppendString("_id", u.FullName())
	b.AppendBinary("userId", 4, u.ID[:])
	b.AppendString("user", u.Name)
	b.AppendString("db", u.DB)
	if showCredentials {
		b.StartDocument("credentials")
		for _, m := range u.Mechanisms() {
			c := u.Credentials[m]
			b.StartDocument(m)
			b.AppendInt32("iterationCount", int32(c.Iterations))
			b.AppendString("salt", base64.StdEncoding.EncodeToString(c.Salt))
			b.AppendString("storedKey", base64.StdEncoding.EncodeToString(c.StoredKey))
			b.AppendString("serverKey", base64.StdEncoding.EncodeToString(c.ServerKey))
			b.End()
		}
		b.End()
	}
	b.StartArray("roles")
	for i, r := range u.Roles {
		b.StartDocument(bson.Index(i))
		b.AppendString("role", r.Role)
		b.AppendString("db", r.DB)
		b.End()
	}
	b.End()
	if u.CustomData != nil {
		b.AppendDocument("customData", u.CustomData)
	}
	b.StartArray("mechanisms")
	for i, m := range u.Mechanisms() {
		b.AppendString(bson.Index(i), m)
	}
	b.End()
}

var errBadUserDoc = errors.New("auth: malformed user document")

// decodeUser reads a stored user document.
func decodeUser(raw []byte) (*User, error) {
	d := bson.Doc(bytes.Clone(raw))
	if err := bson.Validate(d, bson.MaxDepth); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadUserDoc, err)
	}
	u := &User{Credentials: map[string]Credential{}}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "user":
			u.Name = e.Value.StringValue()
		case "db":
			u.DB = e.Value.StringValue()
		case "userId":
			if e.Value.Type == bson.TypeBinary {
				_, data := e.Value.Binary()
				copy(u.ID[:], data)
			}
		case "customData":
			u.CustomData = e.Value.Document()
		case "roles":
			rit := e.Value.Document().Iter()
			for rit.Next() {
				rd := rit.Element().Value.Document()
				role, _ := rd.Lookup("role")
				db, _ := rd.Lookup("db")
				u.Roles = append(u.Roles, RoleRef{Role: role.StringValue(), DB: db.StringValue()})
			}
		case "credentials":
			cit := e.Value.Document().Iter()
			for cit.Next() {
				c, err := decodeCredential(cit.Element().Value.Document())
				if err != nil {
					return nil, err
				}
				u.Credentials[cit.Element().Key] = c
			}
		}
	}
	if u.Name == "" || u.DB == "" {
		return nil, errBadUserDoc
	}
	return u, nil
}

func decodeCredential(d bson.Doc) (Credential, error) {
	var c Credential
	var err error
	it := d.Iter()
	for it.Next() && err == nil {
		e := it.Element()
		switch e.Key {
		case "iterationCount":
			n, _ := e.Value.AsInt64()
			c.Iterations = int(n)
		case "salt":
			c.Salt, err = base64.StdEncoding.DecodeString(e.Value.StringValue())
		case "storedKey":
			c.StoredKey, err = base64.StdEncoding.DecodeString(e.Value.StringValue())
		case "serverKey":
			c.ServerKey, err = base64.StdEncoding.DecodeString(e.Value.StringValue())
		}
	}
	if err != nil || c.Iterations <= 0 || len(c.StoredKey) == 0 {
		return c, errBadUserDoc
	}
	return c, nil
}

// GetUser reads db's user name in tx; nil if there is none.
func GetUser(tx *kv.Tx, db, name string) (*User, error) {
	t, err := tx.Tree(usersTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: opening users: %w", err)
	}
	v, err := t.Get(userKey(db, name))
	if err != nil {
		return nil, fmt.Errorf("auth: reading user: %w", err)
	}
	if v == nil {
		return nil, nil
	}
	return decodeUser(v)
}

// ListUsers returns db's users (every user when db is ""), by database
// then name.
func ListUsers(tx *kv.Tx, db string) ([]*User, error) {
	t, err := tx.Tree(usersTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: opening users: %w", err)
	}
	var out []*User
	var prefix []byte
	if db != "" {
		prefix = append([]byte(db), 0)
	}
	cur := t.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		u, err := decodeUser(v)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("auth: listing users: %w", err)
	}
	return out, nil
}

// PutUser stores u (creating or replacing it) in the write transaction tx.
func PutUser(tx *kv.Tx, u *User) error {
	t, err := tx.CreateTreeIfNotExists(usersTree)
	if err != nil {
		return fmt.Errorf("auth: opening users: %w", err)
	}
	if err := t.Put(userKey(u.DB, u.Name), u.Encode(true)); err != nil {
		return fmt.Errorf("auth: writing user: %w", err)
	}
	return nil
}

// DeleteUser removes db's user name; it reports whether there was one.
func DeleteUser(tx *kv.Tx, db, name string) (bool, error) {
	t, err := tx.Tree(usersTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("auth: opening users: %w", err)
	}
	ok, err := t.Delete(userKey(db, name))
	if err != nil {
		return false, fmt.Errorf("auth: deleting user: %w", err)
	}
	return ok, nil
}

// CountUsers is the number of users of every database.
func CountUsers(tx *kv.Tx) (int64, error) {
	t, err := tx.Tree(usersTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("auth: opening users: %w", err)
	}
	return t.Len(), nil
}

// HasRole reports whether u holds r.
func (u *User) HasRole(r RoleRef) bool { return slices.Contains(u.Roles, r) }
