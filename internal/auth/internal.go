package auth

// Internal authentication: the members of a replica set started with the
// same --keyFile authenticate to each other as the __system user of the
// local database with SCRAM-SHA-256 (or SCRAM-SHA-1), whose password is
// the key file's content without its whitespace, as mongod's
// security.keyFile. The user is not stored (usersInfo does not list it)
// and holds the __system role, the one that grants the internal action
// the members' commands need (_raftMessages, _raftJoin, _raftSnapshot):
// no client without the key can run them, whatever its roles (root has
// every action but internal).

import (
	"strings"

	"github.com/cairndb/cairn/internal/mongoerr"
)

const (
	// SystemUser and SystemDB name the user members authenticate as.
	SystemUser = "__system"
	SystemDB   = "local"
)

// ParseKeyFile checks a key file's content as mongod does (base64
// characters once whitespace is removed, 6 to 1024 of them) and returns
// the key.
func ParseKeyFile(content string) (string, error) {
	key := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' {
			return -1
		}
		return r
	}, content)
	if len(key) < 6 {
		return "", mongoerr.New(mongoerr.BadValue, "security key in the key file is too short (%d characters; at least 6)", len(key))
	}
	if len(key) > 1024 {
		return "", mongoerr.New(mongoerr.BadValue, "security key in the key file is too long (%d characters; at most 1024)", len(key))
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=') {
			return "", mongoerr.New(mongoerr.BadValue, "invalid char in key file: %q (only base64 characters and whitespace are allowed)", r)
		}
	}
	return key, nil
}

// systemUser makes the __system user of key.
func systemUser(key string, opts Options) (*User, error) {
	u := &User{Name: SystemUser, DB: SystemDB, Credentials: map[string]Credential{},
		Roles: []RoleRef{{Role: "__system", DB: "admin"}}}
	for _, mech := range []string{SCRAMSHA256, SCRAMSHA1} {
		it := opts.SHA256Iterations
		if mech == SCRAMSHA1 {
			it = opts.SHA1Iterations
		}
		c, err := NewCredential(mech, SystemUser, key, it)
		if err != nil {
			return nil, err
		}
		u.Credentials[mech] = c
	}
	return u, nil
}

// systemUser returns the __system user for db.name when a key file is set.
func (m *Manager) systemUser(db, name string) *User {
	if m.system != nil && db == SystemDB && name == SystemUser {
		return m.system
	}
	return nil
}

// HasKeyFile reports whether members authenticate with a key file.
func (m *Manager) HasKeyFile() bool { return m != nil && m.system != nil }

// MemberKey returns the key members authenticate with ("" when none).
func (m *Manager) MemberKey() string {
	if m == nil {
		return ""
	}
	return m.opts.KeyFile
}
