package repl

// A member of a set of several members: the consensus (internal/raftrepl)
// decides the member's state, and the Set only records it for hello,
// replSetGetStatus and the write path. Follow installs a stored
// configuration without the single-node election; Become installs what
// the consensus decided (the member's state, the term, the primary's
// host); Install records a configuration the consensus committed.

import "time"

// Multi reports whether cfg is a set of several members (run on Raft).
func (c *Config) Multi() bool { return c != nil && len(c.Members) > 1 }

// Follow installs cfg, found in storage at start, as a member of a set of
// several members: SECONDARY until the consensus says otherwise.
func (s *Set) Follow(cfg *Config, term int64) {
	s.change.Lock()
	defer s.change.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.term, s.state = cfg, term, StateSecondary
	s.multi.Store(true)
	if s.timer != nil {
		s.timer.Stop() // a one-member set's pending election
	}
	s.bump()
}

// Install records a configuration the consensus committed.
func (s *Set) Install(cfg *Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = cfg
	if cfg.Multi() {
		s.multi.Store(true)
	}
	s.bump()
}

// Become records the consensus' decision: the member's state, the term
// and the primary's host ("" when none is known). A member becoming
// primary stamps its writes with the new term from now on.
func (s *Set) Become(state State, term int64, primary string, electionTS Timestamp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == StatePrimary {
		s.writeTerm.Store(term)
		s.electionTS = electionTS
	}
	if s.state == state && s.term == term && s.primary == primary {
		return
	}
	s.state, s.term, s.primary = state, term, primary
	s.multi.Store(true)
	s.bump()
}

// Primary returns the primary's host as the member knows it ("": none).
func (s *Set) Primary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.multi.Load() {
		if s.state == StatePrimary {
			return s.me
		}
		return ""
	}
	return s.primary
}

// IsMulti reports whether the member belongs to a set of several members.
// It takes no lock (a change stream's every batch asks).
func (s *Set) IsMulti() bool {
	return s.multi.Load()
}

// RolledBack moves the member's applied optime back to ts (wall its
// date) after it took back the writes above it (internal/raftrepl's
// rollback): hello's opTime and afterClusterTime waits then see what the
// member holds.
func (s *Set) RolledBack(ts Timestamp, wall time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts >= s.applied {
		return
	}
	s.applied, s.appliedWall = ts, wall
	s.wakeApplied()
}
