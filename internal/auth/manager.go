package auth

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/kv"
)

// Options configure a Manager. Zero values mean the documented defaults.
type Options struct {
	// Enabled turns access control on (--auth). Users can be managed
	// either way; only with Enabled are commands checked.
	Enabled bool
	// FailureDelay is how long a failed authentication waits before it is
	// answered, to slow down password guessing (default 200 ms; negative:
	// none).
	FailureDelay time.Duration
	// FailuresPerMinute and FailureBurst limit failed authentications per
	// client address (ratelimit.go): an address may fail FailureBurst
	// times in a row, then FailuresPerMinute times a minute (defaults 30
	// and 10; a negative FailuresPerMinute turns the limit off).
	FailuresPerMinute, FailureBurst int64
	// SHA1Iterations and SHA256Iterations are the PBKDF2 iteration counts
	// of new credentials (defaults 10,000 and 15,000, as mongod's).
	SHA1Iterations, SHA256Iterations int
	// Logger receives authentication successes and failures.
	Logger *slog.Logger
	// KeyFile is the content of the --keyFile (whitespace removed; ""
	// when none): the password of the __system user the members of a
	// replica set authenticate as (internal.go).
	KeyFile string
}

// Manager is the server's access control state: whether it is on, the
// user store's generation (sessions re-read their roles when it moves) and
// whether any user exists (the localhost exception).
type Manager struct {
	opts     Options
	db       *kv.DB
	gen      atomic.Uint64
	hasUsers atomic.Bool
	limiter  *failureLimiter
	// system is the __system user when a key file is set.
	system *User
}

// NewManager prepares access control over db's user store.
func NewManager(db *kv.DB, opts Options) (*Manager, error) {
	if opts.FailureDelay == 0 {
		opts.FailureDelay = 200 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FailuresPerMinute == 0 {
		opts.FailuresPerMinute = DefaultFailuresPerMinute
	}
	if opts.FailureBurst <= 0 {
		opts.FailureBurst = DefaultFailureBurst
	}
	m := &Manager{opts: opts, db: db, limiter: newFailureLimiter(max(0, opts.FailuresPerMinute), opts.FailureBurst)}
	if opts.KeyFile != "" {
		u, err := systemUser(opts.KeyFile, opts)
		if err != nil {
			return nil, err
		}
		m.system = u
	}
	if err := m.Changed(); err != nil {
		return nil, err
	}
	return m, nil
}

// Enabled reports whether commands are checked.
func (m *Manager) Enabled() bool { return m != nil && m.opts.Enabled }

// Iterations is the iteration count for new credentials of mech.
func (m *Manager) Iterations(mech string) int {
	if mech == SCRAMSHA1 {
		return m.opts.SHA1Iterations
	}
	return m.opts.SHA256Iterations
}

// HasUsers reports whether any user exists.
func (m *Manager) HasUsers() bool { return m.hasUsers.Load() }

// Changed must be called after every committed change to the users or
// roles: it makes every session re-read its roles and refreshes HasUsers.
func (m *Manager) Changed() error {
	m.gen.Add(1)
	return m.db.View(func(tx *kv.Tx) error {
		n, err := CountUsers(tx)
		if err != nil {
			return fmt.Errorf("auth: counting users: %w", err)
		}
		m.hasUsers.Store(n > 0)
		return nil
	})
}

// lookup reads a user in a fresh snapshot.
func (m *Manager) lookup(db, name string) (*User, error) {
	if u := m.systemUser(db, name); u != nil {
		return u, nil
	}
	var u *User
	err := m.db.View(func(tx *kv.Tx) error {
		var err error
		u, err = GetUser(tx, db, name)
		return err
	})
	return u, err
}

// Lookup reads db's user name (nil if there is none).
func (m *Manager) Lookup(db, name string) (*User, error) { return m.lookup(db, name) }

// FailureLimit reports the limit of failed authentications per client
// address: failures a minute (0: no limit) and the burst.
func (m *Manager) FailureLimit() (perMinute, burst int64) {
	return m.limiter.perMinute.Load(), m.limiter.burst.Load()
}

// SetFailureLimit changes the limit of failed authentications per client
// address (setParameter): perMinute 0 turns it off; burst must be
// positive.
func (m *Manager) SetFailureLimit(perMinute, burst int64) {
	m.limiter.perMinute.Store(max(0, perMinute))
	m.limiter.burst.Store(max(1, burst))
}

// FailureCounts reports the failed authentications counted by the limit
// and the attempts it refused.
func (m *Manager) FailureCounts() (failed, limited int64) {
	return m.limiter.failed.Load(), m.limiter.limited.Load()
}
