package auth

import "github.com/cairndb/cairn/bson"

// AppendConnectionStatus appends connectionStatus's authInfo for session
// s (nil, or a nil manager: no access control): the authenticated user,
// its roles and, with showPrivileges, its privileges.
func (m *Manager) AppendConnectionStatus(b *bson.Builder, s *Session, showPrivileges bool) error {
	var user *UserName
	var roles []RoleRef
	var privs *Privileges
	if s != nil && m != nil {
		user = s.User()
		var err error
		if privs, roles, err = s.Privileges(m); err != nil {
			return err
		}
	}
	b.StartDocument("authInfo")
	b.StartArray("authenticatedUsers")
	if user != nil {
		b.StartDocument("0")
		b.AppendString("user", user.User)
		b.AppendString("db", user.DB)
		b.End()
	}
	b.End()
	b.StartArray("authenticatedUserRoles")
	for i, role := range roles {
		b.StartDocument(bson.Index(i))
		b.AppendString("role", role.Role)
		b.AppendString("db", role.DB)
		b.End()
	}
	b.End()
	if showPrivileges {
		b.StartArray("authenticatedUserPrivileges")
		if privs != nil {
			privs.AppendTo(b)
		}
		b.End()
	}
	b.End()
	return nil
}

// VisibleDatabases is listDatabases' filter under access control for
// session s: nil when the caller may list every database (listDatabases
// privilege) or access control is off, otherwise the databases its roles
// grant something on, as MongoDB's authorizedDatabases does; refuse
// (authorizedDatabases: false) without the privilege is denied's error.
func (m *Manager) VisibleDatabases(s *Session, refuse bool, denied func() error) (func(string) bool, error) {
	if !m.Enabled() || s == nil {
		return nil, nil
	}
	privs, _, err := s.Privileges(m)
	if err != nil {
		return nil, err
	}
	if privs.Allows("", ListDatabases) {
		return nil, nil
	}
	if refuse {
		return nil, denied()
	}
	dbs := map[string]bool{}
	if privs != nil {
		for _, db := range privs.Databases() {
			dbs[db] = true
		}
	}
	return func(db string) bool { return dbs[db] }, nil
}
