package repl

// The one-node replica set's state.
//
// A member starts in STARTUP without a configuration (hello: "Does not
// have a valid replica set config"; writes fail NotWritablePrimary). Once
// initiated (replSetInitiate, or at start from the configuration stored
// in local.system.replset) the only member wins its election at once: the
// term goes up by one, electionId is the term as mongod's protocol-1
// election ids are (7fffffff followed by the term), and the member is
// PRIMARY. A forced replSetStepDown or replSetFreeze makes it SECONDARY
// until the period ends; then it elects itself again, in a new term, as a
// single-node set does.
//
// Every change a client's monitor must see (initiation, reconfig, step
// down, election) increments topologyVersion.counter and closes the
// channel Topology returned, so that awaitable hellos answer at once.
//
// Persistence is the command layer's (Persist): the configuration in
// local.system.replset and the term in local.replset.election, written in
// one transaction before the state changes, so that a restart finds the
// configuration and a term at least as high as any it answered with.

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// State is a member state, numbered as mongod's.
type State int

// Member states.
const (
	StateStartup   State = 0
	StatePrimary   State = 1
	StateSecondary State = 2
	// StateStartup2 is a member of a set of several members that has not
	// installed its initial sync yet (or installs a snapshot): it serves
	// no reads.
	StateStartup2 State = 5
	// StateDown is how a member shows another it cannot reach.
	StateDown State = 8
)

func (s State) String() string {
	switch s {
	case StatePrimary:
		return "PRIMARY"
	case StateSecondary:
		return "SECONDARY"
	case StateStartup2:
		return "STARTUP2"
	case StateDown:
		return "(not reachable/healthy)"
	}
	return "STARTUP"
}

// Persister writes a configuration and the term it is installed in, in
// one durable transaction, and returns the timestamp that transaction was
// stamped with (the election's or reconfig's optime).
type Persister func(cfg *Config, term int64) (Timestamp, error)

// Set is a replica-set member's state. A server in replica-set mode has
// one; a standalone server has none.
type Set struct {
	// Name is the replica set's name (--replSet).
	Name string
	// Clock stamps writes and is the member's cluster time.
	Clock *Clock

	now     func() time.Time
	started time.Time

	change  sync.Mutex // serializes changes (see store)
	mu      sync.Mutex
	me      string
	persist Persister
	cfg     *Config
	state   State
	term    int64
	// writeTerm is the term writes are stamped with (the oplog's t,
	// lastWriteOpTime.t), read without mu by writers that hold kv's
	// writer; it is the new term already while an election stores its
	// configuration (whose no-op entry carries it).
	writeTerm atomic.Int64
	// electionTS is the optime of the current term's election.
	electionTS Timestamp
	// frozenUntil: no election before (replSetStepDown, replSetFreeze).
	frozenUntil time.Time
	timer       *time.Timer
	counter     int64
	changed     chan struct{}
	applied     Timestamp
	appliedWall time.Time
	// appliedCond is closed when applied next moves; nil until a waiter
	// asks for it (AppliedAt), so that a write nobody waits on allocates
	// no channel.
	appliedCond chan struct{}
	// multi: a set of several members, whose state the consensus sets
	// (multi.go; set under mu, read without); primary is the primary's
	// host there.
	multi   atomic.Bool
	primary string
}

// NewSet returns the state of a member of the set name whose clock
// follows now (time.Now when nil).
func NewSet(name string, now func() time.Time) *Set {
	if now == nil {
		now = time.Now
	}
	return &Set{Name: name, Clock: NewClock(now, 0), now: now, started: now(),
		changed: make(chan struct{})}
}

// SetMe sets the host:port this member advertises (hello's me, the
// default configuration's member).
func (s *Set) SetMe(host string) {
	s.mu.Lock()
	s.me = host
	s.mu.Unlock()
}

// Me is the host:port this member advertises.
func (s *Set) Me() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.me
}

// SetPersister sets how configurations are stored.
func (s *Set) SetPersister(p Persister) {
	s.mu.Lock()
	s.persist = p
	s.mu.Unlock()
}

// Uptime is how long the member has run.
func (s *Set) Uptime() time.Duration { return s.now().Sub(s.started) }

// Status is a consistent view of the member's state.
type Status struct {
	// Config is the installed configuration (nil: not initiated); the
	// caller must not modify it.
	Config     *Config
	State      State
	Term       int64
	ElectionTS Timestamp
	Counter    int64 // topologyVersion.counter
	Applied    Timestamp
	AppliedAt  time.Time
	Me         string
}

// Status returns the member's state.
func (s *Set) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{State: s.state, Term: s.term, ElectionTS: s.electionTS, Counter: s.counter,
		Applied: s.applied, AppliedAt: s.appliedWall, Me: s.me}
	st.Config = s.cfg // installed configurations are never modified
	return st
}

// ElectionID is the protocol-1 election id of a term: 7fffffff followed
// by the term, big-endian.
func ElectionID(term int64) (id [12]byte) {
	id[0], id[1], id[2], id[3] = 0x7f, 0xff, 0xff, 0xff
	for i := 0; i < 8; i++ {
		id[4+i] = byte(uint64(term) >> (56 - 8*i))
	}
	return id
}

// WriteTerm returns the term writes are stamped with: the current term, 1
// before the first election. It takes no lock, so writers holding kv's
// writer may call it.
func (s *Set) WriteTerm() int64 {
	if s == nil {
		return 1
	}
	if t := s.writeTerm.Load(); t > 0 {
		return t
	}
	return 1
}

// Hosts returns the hosts hello lists.
func (c *Config) Hosts() []string { return c.sortedHosts() }

// IsWritablePrimary reports whether the member accepts writes.
func (s *Set) IsWritablePrimary() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == StatePrimary
}

// Topology returns topologyVersion's counter and a channel closed at the
// next topology change.
func (s *Set) Topology() (int64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counter, s.changed
}

// bump records a topology change (s.mu held).
func (s *Set) bump() {
	s.counter++
	close(s.changed)
	s.changed = make(chan struct{})
}

// ErrAlreadyInitialized is replSetInitiate's answer on an initiated set.
var ErrAlreadyInitialized = mongoerr.New(mongoerr.AlreadyInitialized, "already initialized")

// Changes (initiation, elections, reconfigs, step downs) are serialized by
// s.change; s.mu guards the fields and is never held while a change is
// stored, since storing waits for the engine's writer, which a command may
// hold while it reads the member's state.

// store persists cfg in term (s.change held, s.mu not).
func (s *Set) store(cfg *Config, term int64) (Timestamp, error) {
	s.mu.Lock()
	p := s.persist
	s.mu.Unlock()
	if p == nil {
		return 0, errors.New("repl: the member is stopped")
	}
	return p(cfg, term)
}

// Load installs the configuration found in storage at start (term: the
// last term stored) and elects the member.
func (s *Set) Load(cfg *Config, term int64) error {
	s.change.Lock()
	defer s.change.Unlock()
	s.mu.Lock()
	s.term = term
	s.mu.Unlock()
	return s.elect(cfg)
}

// Initiate installs a first configuration and elects the member.
func (s *Set) Initiate(cfg *Config) error {
	s.change.Lock()
	defer s.change.Unlock()
	if s.Status().Config != nil {
		return ErrAlreadyInitialized
	}
	return s.elect(cfg)
}

// elect wins the single-node election (s.change held): a new term, the
// configuration rewritten in it (mongod bumps the config term after an
// election), stored, then installed.
func (s *Set) elect(cfg *Config) error {
	s.mu.Lock()
	term := s.term + 1
	s.mu.Unlock()
	next := cfg.Clone()
	next.Term = term
	prev := s.writeTerm.Swap(term)
	ts, err := s.store(next, term)
	if err != nil {
		s.writeTerm.Store(prev)
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.term, s.electionTS, s.state = next, term, ts, StatePrimary
	s.noteAppliedLocked(ts, s.now())
	s.bump()
	return nil
}

// install stores and installs a configuration of the current term (s.change
// held).
func (s *Set) install(next *Config, term int64) error {
	ts, err := s.store(next, term)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = next
	s.noteAppliedLocked(ts, s.now())
	s.bump()
	return nil
}

// Reconfig installs a new configuration (validated by the caller against
// the current one); forced reconfigs are written with term -1.
func (s *Set) Reconfig(cfg *Config, force bool) error {
	s.change.Lock()
	defer s.change.Unlock()
	st := s.Status()
	if st.Config == nil {
		return mongoerr.New(mongoerr.NotYetInitialized, "no replset config has been received")
	}
	if !force && st.State != StatePrimary {
		return mongoerr.New(mongoerr.NotWritablePrimary, "replSetReconfig should only be run on a writable PRIMARY. Current state %s;", st.State)
	}
	next := cfg.Clone()
	next.Term = st.Term
	if force {
		next.Term = -1
	}
	return s.install(next, st.Term)
}

// Rehost moves the one member to host (the node's address changed between
// runs: a one-member set has no other member that knows the old one), as a
// reconfig of the next version would. It reports whether it changed it.
func (s *Set) Rehost(host string) (bool, error) {
	s.change.Lock()
	defer s.change.Unlock()
	st := s.Status()
	if st.Config == nil || len(st.Config.Members) != 1 || st.Config.Members[0].Host == host {
		return false, nil
	}
	next := st.Config.Clone()
	next.Members[0].Host = host
	next.Version++
	return true, s.install(next, st.Term)
}

// StepDown makes the primary a secondary until the period ends; then it
// elects itself again.
func (s *Set) StepDown(period time.Duration) error {
	s.change.Lock()
	defer s.change.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StatePrimary {
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary so can't step down")
	}
	s.state = StateSecondary
	s.frozenUntil = s.now().Add(period)
	s.bump()
	s.scheduleLocked()
	return nil
}

// Freeze keeps a secondary from running for election for secs seconds (0:
// unfreezes, and a single-node set elects itself at once). It returns
// the reply's info/warning message.
func (s *Set) Freeze(secs int64) (info, warning string, err error) {
	s.change.Lock()
	defer s.change.Unlock()
	s.mu.Lock()
	state, cfg, now := s.state, s.cfg, s.now()
	if state == StatePrimary {
		s.mu.Unlock()
		return "", "", mongoerr.New(mongoerr.NotSecondary, "cannot freeze node when primary or running for election. state: Primary")
	}
	if secs <= 0 {
		s.frozenUntil = now
		s.mu.Unlock()
		if cfg != nil && state == StateSecondary {
			if err := s.elect(cfg); err != nil {
				return "", "", err
			}
		}
		return "unfreezing", "", nil
	}
	defer s.mu.Unlock()
	if secs == 1 {
		warning = "you really want to freeze for only 1 second?"
	}
	if until := now.Add(time.Duration(secs) * time.Second); until.After(s.frozenUntil) {
		s.frozenUntil = until
	}
	s.scheduleLocked()
	return "", warning, nil
}

// scheduleLocked arranges the election at frozenUntil (s.mu held).
func (s *Set) scheduleLocked() {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timer = time.AfterFunc(max(s.frozenUntil.Sub(s.now()), 0), s.electIfDue)
}

// electIfDue runs the single-node election once the freeze is over.
func (s *Set) electIfDue() {
	s.change.Lock()
	defer s.change.Unlock()
	s.mu.Lock()
	if s.state != StateSecondary || s.cfg == nil || s.persist == nil {
		s.mu.Unlock()
		return
	}
	if d := s.frozenUntil.Sub(s.now()); d > 0 {
		s.timer = time.AfterFunc(d, s.electIfDue)
		s.mu.Unlock()
		return
	}
	cfg := s.cfg
	s.mu.Unlock()
	if err := s.elect(cfg); err != nil {
		// Storage failed: try again later, as mongod retries elections.
		s.mu.Lock()
		if s.persist != nil {
			s.timer = time.AfterFunc(time.Second, s.electIfDue)
		}
		s.mu.Unlock()
	}
}

// Stop cancels a pending election and further changes (server shutdown).
func (s *Set) Stop() {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.persist = nil
	s.mu.Unlock()
}

// NoteApplied records that every write stamped up to ts is committed (the
// writer stamps inside its transaction, so commit order is stamp order).
func (s *Set) NoteApplied(ts Timestamp, wall time.Time) {
	s.mu.Lock()
	s.noteAppliedLocked(ts, wall)
	s.mu.Unlock()
}

func (s *Set) noteAppliedLocked(ts Timestamp, wall time.Time) {
	if ts <= s.applied {
		return
	}
	s.applied, s.appliedWall = ts, wall
	s.wakeApplied()
}

// wakeApplied wakes the waiters for the applied optime (s.mu held).
func (s *Set) wakeApplied() {
	if s.appliedCond != nil {
		close(s.appliedCond)
		s.appliedCond = nil
	}
}

// Applied returns the last applied optime and its wall time.
func (s *Set) Applied() (Timestamp, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied, s.appliedWall
}

// AppliedAt returns whether ts is applied, and a channel closed at the
// next applied optime when it is not.
func (s *Set) AppliedAt(ts Timestamp) (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.appliedCond == nil {
		s.appliedCond = make(chan struct{})
	}
	return s.applied >= ts, s.appliedCond
}
