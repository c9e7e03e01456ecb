package auth

// Cursor ownership under access control, as mongod: a cursor belongs to
// the user authenticated on the connection that opened it; getMore needs
// that same user (isCoauthorizedWith) and the privileges of the command
// that opened the cursor still, killCursors that user or the
// killAnyCursor privilege on the cluster. A nil session is a caller
// without a connection (internal use): it owns every cursor.

import "github.com/cairndb/cairn/internal/mongoerr"

// CursorOwner is the user a cursor opened on session s belongs to: nil
// without access control or without an authenticated user.
func (m *Manager) CursorOwner(s *Session) *UserName {
	if !m.Enabled() || s == nil {
		return nil
	}
	if u := s.User(); u != nil {
		owner := *u
		return &owner
	}
	return nil
}

// OwnsCursor reports whether the user authenticated on s is owner (both
// none counts: a cursor opened without a user, under the localhost
// exception, stays usable without one).
func (m *Manager) OwnsCursor(s *Session, owner *UserName) bool {
	if !m.Enabled() || s == nil {
		return true
	}
	u := s.User()
	if u == nil || owner == nil {
		return u == nil && owner == nil
	}
	return *u == *owner
}

// MayContinueCursor checks a getMore of cursor id: the cursor must be
// s's user's, and that user must still hold what the command that opened
// it needed (origin: a role revoked meanwhile stops the cursor).
func (m *Manager) MayContinueCursor(s *Session, id int64, owner *UserName, origin []Need) error {
	if !m.OwnsCursor(s, owner) {
		return mongoerr.New(mongoerr.Unauthorized, "cursor id %d was not created by the authenticated user", id)
	}
	if len(origin) == 0 {
		return nil
	}
	privs, _, err := s.Privileges(m)
	if err != nil {
		return err
	}
	for _, n := range origin {
		if !privs.Permits(n) {
			return mongoerr.New(mongoerr.Unauthorized, "not authorized for getMore with cursor id %d", id)
		}
	}
	return nil
}

// MayKillCursor reports whether s may kill a cursor of owner: its owner,
// or a user with killAnyCursor on the cluster.
func (m *Manager) MayKillCursor(s *Session, owner *UserName) bool {
	if m.OwnsCursor(s, owner) {
		return true
	}
	privs, _, err := s.Privileges(m)
	return err == nil && privs.Allows("", KillAnyCursor)
}
