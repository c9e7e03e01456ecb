package index

import (
	"strconv"
	"sync/atomic"
)

// Phase is the stage an index build is in, as currentOp reports it.
type Phase int32

// The phases of a build, in order.
const (
	PhaseNone  Phase = iota
	PhaseScan        // scanning the collection, extracting and sorting keys
	PhaseLoad        // loading the sorted keys into the index
	PhaseDrain       // applying the writes made during the build
)

// String is mongod's name for the phase.
func (ph Phase) String() string {
	switch ph {
	case PhaseScan:
		return "Index Build: scanning collection"
	case PhaseLoad:
		return "Index Build: inserting keys from external sorter into index"
	case PhaseDrain:
		return "Index Build: draining writes received during build"
	}
	return ""
}

// Progress is a build's progress, written by the build and read
// concurrently by currentOp. A nil *Progress ignores every update.
type Progress struct {
	phase       atomic.Int32
	done, total atomic.Int64
}

// Start begins phase ph, with total units of work.
func (p *Progress) Start(ph Phase, total int64) {
	if p == nil {
		return
	}
	p.done.Store(0)
	p.total.Store(total)
	p.phase.Store(int32(ph))
}

// Add records n more units done.
func (p *Progress) Add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// State returns the phase, the units done and the total.
func (p *Progress) State() (ph Phase, done, total int64) {
	if p == nil {
		return PhaseNone, 0, 0
	}
	ph, done, total = Phase(p.phase.Load()), p.done.Load(), p.total.Load()
	// A collection that grows during the scan can outrun its count.
	return ph, done, max(total, done)
}

// Message is mongod's currentOp msg for the state: the phase, then its
// progress meter ("Index Build: scanning collection Index Build: scanning
// collection: 1200/5000 24%").
func (p *Progress) Message() string {
	ph, done, total := p.State()
	if ph == PhaseNone {
		return ""
	}
	pct := int64(0)
	if total > 0 {
		pct = done * 100 / total
	}
	return ph.String() + " " + ph.String() + ": " + strconv.FormatInt(done, 10) + "/" + strconv.FormatInt(total, 10) + " " + strconv.FormatInt(pct, 10) + "%"
}
