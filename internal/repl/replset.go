package repl

import "time"

// Set is a replica-set member's state. A server in replica-set mode has
// one; a standalone server has none.
type Set struct {
	// Name is the replica set's name (--replSet).
	Name string
	// Clock stamps writes and is the member's cluster time.
	Clock *Clock
}

// NewSet returns the state of a member of the set name whose clock
// follows now (time.Now when nil).
func NewSet(name string, now func() time.Time) *Set {
	return &Set{Name: name, Clock: NewClock(now, 0)}
}
