// Package auth owns Cairn's access control: users and their SCRAM
// credentials (stored in the kv tree "_users", one document per user in
// the shape of MongoDB's admin.system.users), the built-in and
// user-defined roles (customroles.go) and the privileges they grant
// (privilege.go), and each connection's authentication state (Session)
// including the SASL conversation of saslStart/saslContinue.
//
// Passwords are never stored: a user holds, per mechanism, a salt, an
// iteration count, StoredKey and ServerKey (RFC 5802). The SCRAM exchange
// itself is github.com/xdg-go/scram's; SASLprep is xdg-go/stringprep's.
package auth
