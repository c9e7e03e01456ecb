package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/session"
)

// sessionPattern is one pattern of killAllSessions(ByPattern) and of
// $listLocalSessions/$listSessions' users: a session matches when it
// meets every criterion given.
type sessionPattern struct {
	lsid *session.Key
	uids map[[32]byte]bool // nil: any user
}

func (p sessionPattern) match(k session.Key) bool {
	if p.lsid != nil && *p.lsid != k {
		return false
	}
	return p.uids == nil || p.uids[k.UID]
}

// userDigests reads [{user, db}, ...] (field names the array in errors).
func userDigests(v bson.Value, field string) (map[[32]byte]bool, error) {
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
		out[session.UserDigest(u.StringValue()+"@"+d.StringValue())] = true
	}
	return out, nil
}

// parseKillPattern reads one killAllSessionsByPattern pattern.
func parseKillPattern(v bson.Value) (sessionPattern, error) {
	var p sessionPattern
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
			k, err := session.ParseLSID(e.Value, uid, field+".lsid")
			if err != nil {
				return p, err
			}
			p.lsid = &k
		case "uid":
			_, data := binaryValue(e.Value)
			if len(data) != 32 {
				return p, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.uid' is the wrong type '%s', expected type 'bindata'", field, e.Value.Type)
			}
			var uid [32]byte
			copy(uid[:], data)
			p.uids = map[[32]byte]bool{uid: true}
		case "users":
			uids, err := userDigests(e.Value, field+".users")
			if err != nil {
				return p, err
			}
			if p.uids != nil { // uid and users: both must hold
				for u := range p.uids {
					if !uids[u] {
						delete(p.uids, u)
					}
				}
			} else {
				p.uids = uids
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

// killMatching kills the sessions matching any of the patterns (none:
// every session).
func killMatching(c *Ctx, patterns []sessionPattern) {
	keys := c.Env.Sessions.Matching(func(r *session.Record) bool {
		if len(patterns) == 0 {
			return true
		}
		for _, p := range patterns {
			if p.match(r.Key) {
				return true
			}
		}
		return false
	})
	c.Env.KillSessions(keys)
}

func killAllSessions(c *Ctx) error {
	first := newArgs(c).first()
	uids, err := userDigests(first, "killAllSessions.killAllSessions")
	if err != nil {
		return err
	}
	var patterns []sessionPattern
	if len(uids) > 0 {
		patterns = []sessionPattern{{uids: uids}}
	}
	killMatching(c, patterns)
	return nil
}

func killAllSessionsByPattern(c *Ctx) error {
	first := newArgs(c).first()
	if first.Type != bson.TypeArray {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'killAllSessionsByPattern.killAllSessionsByPattern' is the wrong type '%s', expected type 'array'", first.Type)
	}
	var patterns []sessionPattern
	it := first.Document().Iter()
	for it.Next() {
		p, err := parseKillPattern(it.Element().Value)
		if err != nil {
			return err
		}
		patterns = append(patterns, p)
	}
	killMatching(c, patterns)
	return nil
}

// listSessionsPattern reads $listLocalSessions' and $listSessions' spec:
// {} (the caller's sessions), {allUsers: true} or {users: [...]}.
func listSessionsPattern(c *Ctx, stage string, spec bson.Doc) (sessionPattern, error) {
	var p sessionPattern
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
		uids, err := userDigests(users, stage+".users")
		if err != nil {
			return p, err
		}
		p.uids = uids
	default:
		p.uids = map[[32]byte]bool{sessionDigest(c): true}
	}
	return p, nil
}

// sessionLister answers the session stages of a command's pipeline
// (exec.SessionLister).
type sessionLister struct{ c *Ctx }

// LocalSessions implements $listLocalSessions: the sessions of the
// registry.
func (l sessionLister) LocalSessions(spec bson.Doc) ([]bson.Doc, error) {
	if l.c.Env.Sessions == nil {
		return nil, nil
	}
	p, err := listSessionsPattern(l.c, "$listLocalSessions", spec)
	if err != nil {
		return nil, err
	}
	recs := l.c.Env.Sessions.List(func(r *session.Record) bool { return p.match(r.Key) })
	out := make([]bson.Doc, len(recs))
	for i := range recs {
		out[i] = recs[i].Doc()
	}
	return out, nil
}

// ListSessions implements $listSessions: the records of
// config.system.sessions in the pipeline's snapshot.
func (l sessionLister) ListSessions(k *exec.AggCatalog, spec bson.Doc) ([]bson.Doc, error) {
	p, err := listSessionsPattern(l.c, "$listSessions", spec)
	if err != nil {
		return nil, err
	}
	src := k.ScanCollection(session.ConfigDB, session.SessionsColl, nil)
	var out []bson.Doc
	for {
		d, err := src.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			return out, nil
		}
		if sk, ok := sessionKeyOf(d); ok && p.match(sk) {
			out = append(out, append(bson.Doc(nil), d...))
		}
	}
}

// sessionKeyOf reads the {_id: {id, uid}} of a session record.
func sessionKeyOf(d bson.Doc) (session.Key, bool) {
	var k session.Key
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
