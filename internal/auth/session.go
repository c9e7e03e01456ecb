package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xdg-go/scram"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// UserName identifies a user: its name and authentication database.
type UserName struct {
	User, DB string
}

func (u UserName) String() string { return u.User + "@" + u.DB }

// Session is one connection's authentication state. It is used by the
// connection's own goroutine only.
type Session struct {
	// Remote is the client's address (for the log) and Loopback whether it
	// is a loopback address (for the localhost exception); set by the
	// server when the connection opens.
	Remote   string
	Loopback bool

	user  *UserName
	roles []RoleRef
	privs *Privileges
	gen   uint64

	conv   *conversation
	convID int32
}

// conversation is a SASL exchange in progress.
type conversation struct {
	mech      string
	db        string
	user      string
	server    *scram.ServerConversation
	skipEmpty bool
	// verified: the client proved its password; the exchange waits for the
	// client's empty final message (no skipEmptyExchange).
	verified bool
}

// User is the authenticated user, or nil.
func (s *Session) User() *UserName { return s.user }

// Authenticated reports whether the connection has authenticated.
func (s *Session) Authenticated() bool { return s.user != nil }

// Logout forgets the authenticated user if it belongs to db; it reports
// whether one was logged out.
func (s *Session) Logout(db string) bool {
	if s.user == nil || s.user.DB != db {
		return false
	}
	s.user, s.roles, s.privs = nil, nil, nil
	return true
}

// Privileges returns the authenticated user's privileges, re-read from the
// store when users changed since they were last resolved (a revoked role
// or dropped user takes effect on open connections at their next command).
func (s *Session) Privileges(m *Manager) (*Privileges, []RoleRef, error) {
	if s.user == nil {
		return nil, nil, nil
	}
	if g := m.gen.Load(); s.privs == nil || g != s.gen {
		var roles []RoleRef
		var privs *Privileges
		err := m.db.View(func(tx *kv.Tx) error {
			var err error
			u := m.systemUser(s.user.DB, s.user.User)
			if u == nil {
				if u, err = GetUser(tx, s.user.DB, s.user.User); err != nil || u == nil {
					return err
				}
			}
			roles = u.Roles
			privs, _, err = ResolveRoles(tx, roles)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		if privs == nil {
			privs = newPrivileges()
		}
		s.gen, s.roles, s.privs = g, roles, privs
	}
	return s.privs, s.roles, nil
}

// SASLStep is one server answer in a SASL exchange.
type SASLStep struct {
	ConversationID int32
	Done           bool
	Payload        []byte
}

// errAuthFailed is MongoDB's answer to every credential problem: it does
// not tell an unknown user from a wrong password.
func errAuthFailed() error {
	return mongoerr.New(mongoerr.AuthenticationFailed, "Authentication failed.")
}

// Start begins a SASL exchange (saslStart, or hello's
// speculativeAuthenticate) for a user of db.
func (s *Session) Start(ctx context.Context, m *Manager, mech, db string, payload []byte, skipEmpty bool) (SASLStep, error) {
	hf, ok := hashOf(mech)
	if !ok {
		return SASLStep{}, mongoerr.New(mongoerr.MechanismUnavailable, "Received authentication for mechanism %s which is not enabled", mech)
	}
	c := &conversation{mech: mech, db: db, skipEmpty: skipEmpty}
	s.conv = nil
	if err := s.limited(ctx, m, mech, db); err != nil {
		return SASLStep{}, err
	}
	srv, err := hf.NewServer(func(name string) (scram.StoredCredentials, error) {
		c.user = name
		u, err := m.lookup(db, name)
		if err != nil {
			return scram.StoredCredentials{}, err
		}
		if u == nil {
			//lint:ignore ST1005 mongod's message, logged as it logs it
			return scram.StoredCredentials{}, fmt.Errorf("Could not find user \"%s\" for db \"%s\"", name, db)
		}
		cred, ok := u.Credentials[mech]
		if !ok {
			//lint:ignore ST1005 mongod's message, logged as it logs it
			return scram.StoredCredentials{}, fmt.Errorf("Unable to use %s based authentication for user without any %s credentials registered", mech, mech)
		}
		return cred.stored(), nil
	})
	if err != nil {
		return SASLStep{}, fmt.Errorf("auth: %w", err)
	}
	c.server = srv.NewConversation()
	s.convID++
	s.conv = c
	out, err := c.server.Step(string(payload))
	if err != nil {
		return SASLStep{}, s.fail(ctx, m, err, false)
	}
	return SASLStep{ConversationID: s.convID, Payload: []byte(out)}, nil
}

// Continue answers saslContinue.
func (s *Session) Continue(ctx context.Context, m *Manager, convID int32, payload []byte) (SASLStep, error) {
	c := s.conv
	if c == nil || convID != s.convID {
		return SASLStep{}, mongoerr.New(mongoerr.ProtocolError, "No SASL session state found")
	}
	if c.verified {
		// The client's empty acknowledgement of the server's signature.
		s.conv = nil
		if len(payload) != 0 {
			return SASLStep{}, s.fail(ctx, m, errors.New("unexpected payload after the server's final message"), false)
		}
		return SASLStep{ConversationID: convID, Done: true, Payload: []byte{}}, nil
	}
	if err := s.limited(ctx, m, c.mech, c.db); err != nil {
		s.conv = nil
		return SASLStep{}, err
	}
	out, err := c.server.Step(string(payload))
	if err != nil || !c.server.Valid() {
		if err == nil {
			err = errors.New("SCRAM exchange incomplete")
		}
		return SASLStep{}, s.fail(ctx, m, err, true)
	}
	name := UserName{User: c.user, DB: c.db}
	if err := s.reauthenticate(m, name, c.mech); err != nil {
		s.conv = nil
		return SASLStep{}, err
	}
	s.user = &name
	s.privs, s.roles = nil, nil
	m.opts.Logger.Info("Successfully authenticated", "c", "ACCESS", "id", 5286306, "ctx", "conn",
		"user", c.user, "db", c.db, "mechanism", c.mech, "remote", s.Remote)
	step := SASLStep{ConversationID: convID, Payload: []byte(out), Done: c.skipEmpty}
	if c.skipEmpty {
		s.conv = nil
	} else {
		c.verified = true
	}
	return step, nil
}

// reauthenticate applies mongod's rule (6.0 on) for a connection that is
// already authenticated when an exchange for name succeeds: the same user
// again is accepted, with a warning; another user of the same database
// answers 5626701, a user of another database 5626702. The connection
// stays authenticated as before; logout ends it first.
func (s *Session) reauthenticate(m *Manager, name UserName, mech string) error {
	prev := s.user
	if prev == nil {
		return nil
	}
	if *prev == name {
		m.opts.Logger.Warn("Client has attempted to reauthenticate as a single user", "c", "ACCESS", "id", 5626700, "ctx", "conn",
			"user", name.String(), "remote", s.Remote)
		return nil
	}
	var err error
	if prev.DB == name.DB {
		err = mongoerr.New(mongoerr.AlreadyAuthenticated, "Each client connection may only be authenticated once. Previously authenticated as: %s", prev)
	} else {
		err = mongoerr.New(mongoerr.AuthenticatedOnOtherDatabase, "Client has attempted to authenticate on multiple databases.Already authenticated as: %s", prev)
	}
	m.opts.Logger.Warn("Authentication failed", "c", "ACCESS", "id", 5286307, "ctx", "conn", "remote", s.Remote,
		"mechanism", mech, "user", name.User, "db", name.DB, "error", err.Error())
	return err
}

// fail logs a failed authentication, counts it against the client's
// address if a password was tested (the client's proof checked: an unknown
// user, a mechanism the user has no credentials for — which drivers
// negotiating a mechanism meet in honest logins — or a malformed message
// tests none), waits the manager's failure delay (or until ctx ends) and
// returns AuthenticationFailed.
func (s *Session) fail(ctx context.Context, m *Manager, cause error, tested bool) error {
	c := s.conv
	s.conv = nil
	attrs := []any{"c", "ACCESS", "id", 5286307, "ctx", "conn", "remote", s.Remote, "error", cause.Error()}
	if c != nil {
		attrs = append(attrs, "mechanism", c.mech, "user", c.user, "db", c.db)
	}
	m.opts.Logger.Warn("Authentication failed", attrs...)
	if tested {
		m.limiter.fail(clientAddr(s.Remote))
	}
	s.delay(ctx, m)
	return errAuthFailed()
}

// limited refuses the exchange, before its password is looked at, when the
// client's address has failed too often (ratelimit.go).
func (s *Session) limited(ctx context.Context, m *Manager, mech, db string) error {
	addr := clientAddr(s.Remote)
	r := m.limiter.allow(addr)
	if !r.limited {
		return nil
	}
	if r.log {
		perMinute, burst := m.FailureLimit()
		m.opts.Logger.Warn("Authentication refused: too many failed authentications from this address", "c", "ACCESS", "ctx", "conn",
			"remote", s.Remote, "address", addr, "mechanism", mech, "db", db,
			"authFailuresPerMinute", perMinute, "authFailureBurst", burst, "refusalsNotLogged", r.suppressed)
	}
	s.delay(ctx, m)
	return errAuthFailed()
}

// delay waits the manager's failure delay, or until ctx ends.
func (s *Session) delay(ctx context.Context, m *Manager) {
	if d := m.opts.FailureDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}
