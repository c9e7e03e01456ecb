package session

// Session patterns: which sessions killAllSessions(ByPattern),
// $listLocalSessions and $listSessions select.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Pattern is one pattern of killAllSessions(ByPattern) and of
// $listLocalSessions/$listSessions' users: a session matches when it meets
// every criterion given.
type Pattern struct {
	// LSID selects one session (nil: any).
	LSID *Key
	// UIDs selects the sessions of these users' digests (nil: any user).
	UIDs map[[32]byte]bool
}

// Match reports whether the session k matches p.
func (p Pattern) Match(k Key) bool {
	if p.LSID != nil && *p.LSID != k {
		return false
	}
	return p.UIDs == nil || p.UIDs[k.UID]
}

// MatchAny reports whether k matches one of the patterns (none: every
// session matches).
func MatchAny(patterns []Pattern, k Key) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if p.Match(k) {
			return true
		}
	}
	return false
}

// UserDigests reads [{user, db}, ...] as the users' digests (field names
// the array in errors).
func UserDigests(v bson.Value, field string) (map[[32]byte]bool, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'array'", field, v.Type)
	}
	out := make(map[[32]byte]bool)
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element().Value
		if e.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'object'", field, it.Element().Key, e.Type)
		}
		u, okU := e.Document().Lookup("user")
		d, okD := e.Document().Lookup("db")
		if !okU || u.Type != bson.TypeString {
			return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.user' is missing but a required field", field)
		}
		if !okD || d.Type != bson.TypeString {
			return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.db' is missing but a required field", field)
		}
		out[UserDigest(u.StringValue()+"@"+d.StringValue())] = true
	}
	return out, nil
}

// ParseKillPattern reads one killAllSessionsByPattern pattern.
func ParseKillPattern(v bson.Value) (Pattern, error) {
	var p Pattern
	const field = "KillAllSessionsByPattern"
	if v.Type != bson.TypeDocument {
		return p, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'killAllSessionsByPattern.killAllSessionsByPattern' is the wrong type '%s', expected type 'object'", v.Type)
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "lsid":
			var uid [32]byte
			if u, ok := e.Value.Document().Lookup("uid"); ok && e.Value.Type == bson.TypeDocument && u.Type == bson.TypeBinary {
				_, data := u.Binary()
				copy(uid[:], data)
			} else {
				return p, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.lsid.uid' is missing but a required field", field)
			}
			k, err := ParseLSID(e.Value, uid, field+".lsid")
			if err != nil {
				return p, err
			}
			p.LSID = &k
		case "uid":
			_, data := binaryValue(e.Value)
			if len(data) != 32 {
				return p, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.uid' is the wrong type '%s', expected type 'bindata'", field, e.Value.Type)
			}
			var uid [32]byte
			copy(uid[:], data)
			p.UIDs = map[[32]byte]bool{uid: true}
		case "users":
			uids, err := UserDigests(e.Value, field+".users")
			if err != nil {
				return p, err
			}
			if p.UIDs != nil { // uid and users: both must hold
				for u := range p.UIDs {
					if !uids[u] {
						delete(p.UIDs, u)
					}
				}
			} else {
				p.UIDs = uids
			}
		case "roles":
			return p, mongoerr.New(mongoerr.NotImplemented, "killAllSessionsByPattern by roles is not supported: sessions do not record their users' roles")
		default:
			return p, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", field, e.Key)
		}
	}
	return p, nil
}

func binaryValue(v bson.Value) (byte, []byte) {
	if v.Type != bson.TypeBinary {
		return 0, nil
	}
	return v.Binary()
}

// ListPattern reads $listLocalSessions' and $listSessions' (stage) spec:
// {} (the caller's sessions: self is the caller's user digest),
// {allUsers: true} or {users: [...]}.
func ListPattern(stage string, spec bson.Doc, self [32]byte) (Pattern, error) {
	var p Pattern
	all := false
	if v, ok := spec.Lookup("allUsers"); ok {
		all = v.Truthy()
	}
	users, hasUsers := spec.Lookup("users")
	if all && hasUsers {
		return p, mongoerr.New(mongoerr.BadValue, "The allUsers and users options of %s are mutually exclusive", stage)
	}
	switch {
	case all:
	case hasUsers:
		uids, err := UserDigests(users, stage+".users")
		if err != nil {
			return p, err
		}
		p.UIDs = uids
	default:
		p.UIDs = map[[32]byte]bool{self: true}
	}
	return p, nil
}

// LocalSessions implements $listLocalSessions: the sessions of the
// registry that spec selects (self: the caller's user digest).
func (r *Registry) LocalSessions(spec bson.Doc, self [32]byte) ([]bson.Doc, error) {
	p, err := ListPattern("$listLocalSessions", spec, self)
	if err != nil {
		return nil, err
	}
	recs := r.List(func(rec *Record) bool { return p.Match(rec.Key) })
	out := make([]bson.Doc, len(recs))
	for i := range recs {
		out[i] = recs[i].Doc()
	}
	return out, nil
}

// ListSessions implements $listSessions: the records of
// config.system.sessions in the pipeline's snapshot (k) that spec selects.
func ListSessions(k *exec.AggCatalog, spec bson.Doc, self [32]byte) ([]bson.Doc, error) {
	p, err := ListPattern("$listSessions", spec, self)
	if err != nil {
		return nil, err
	}
	src := k.ScanCollection(ConfigDB, SessionsColl, nil)
	var out []bson.Doc
	for {
		d, err := src.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			return out, nil
		}
		if sk, ok := keyOf(d); ok && p.Match(sk) {
			out = append(out, append(bson.Doc(nil), d...))
		}
	}
}

// keyOf reads the {_id: {id, uid}} of a session record.
func keyOf(d bson.Doc) (Key, bool) {
	var k Key
	idv, ok1 := d.LookupPath("_id", "id")
	uidv, ok2 := d.LookupPath("_id", "uid")
	_, id := binaryValue(idv)
	_, uid := binaryValue(uidv)
	if !ok1 || !ok2 || len(id) != 16 || len(uid) != 32 {
		return k, false
	}
	copy(k.ID[:], id)
	copy(k.UID[:], uid)
	return k, true
}
