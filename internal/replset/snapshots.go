package replset

// Snapshot reads outside transactions (readConcern {level: "snapshot"},
// with or without atClusterTime, on find, aggregate and distinct), as
// mongod 5.0+ serves them.
//
// The read, and every getMore of its cursor, reads one kv snapshot (the
// command's exec.Snapshot; the cursor keeps a clone), and its reply
// carries the snapshot's cluster time as atClusterTime (cursor.atClusterTime
// for find and aggregate, top level for distinct), which a driver's
// snapshot session sends back on its next reads.
//
// A kv snapshot has no timestamp of its own, but the oplog is written in
// the same storage transaction as every change to replicated data, with
// stamps in commit order: the cluster time of a snapshot is the ts of the
// last oplog entry it holds, and a snapshot S (time s) holds exactly the
// data as of a later time t when the current oplog has no entry in (s, t]
// (and its first entry is not after s: nothing between was truncated).
//
// kv keeps a snapshot only while it is referenced, so the history is kept
// here: every snapshot read retains its snapshot (a clone; one per
// distinct time), for minSnapshotHistoryWindowInSeconds (300, as mongod)
// and at most maxSnapHistory of them, the oldest dropped first. A read at
// atClusterTime t:
//
//   - t later than the member's cluster time: InvalidOptions, as mongod;
//   - else it waits until every write stamped up to t is committed (as
//     afterClusterTime), then reads the current snapshot if its last entry
//     is not after t, else the newest retained snapshot at or before t that
//     holds the data as of t (above), else SnapshotTooOld (239) with
//     mongod's message — where mongod (whose WiredTiger keeps all history
//     within the window) would still serve a time no snapshot read retained.
//
// A retained snapshot pins the engine's pages it references, like any
// long reader: the bound on their number and age bounds that cost.

import (
	"sort"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
)

// maxSnapHistory bounds the snapshots retained for snapshot reads.
const maxSnapHistory = 64

// defaultSnapWindow is minSnapshotHistoryWindowInSeconds' default.
const defaultSnapWindow = 300 * time.Second

// SnapHistory is the retained snapshots, ascending by cluster time.
type SnapHistory struct {
	mu      sync.Mutex
	entries []snapEntry
}

type snapEntry struct {
	ts   repl.Timestamp
	tx   *exec.Tx
	kept time.Time
}

// SnapWindow is minSnapshotHistoryWindowInSeconds.
func (s *State) SnapWindow() time.Duration {
	if s := s.SnapWindowSecs.Load(); s > 0 {
		return time.Duration(s-1) * time.Second
	}
	return defaultSnapWindow
}

// keep retains tx (a clone the history now owns) as the snapshot at ts.
func (h *SnapHistory) keep(ts repl.Timestamp, tx *exec.Tx, now time.Time, window time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pruneLocked(now, window)
	i := sort.Search(len(h.entries), func(i int) bool { return h.entries[i].ts >= ts })
	if i < len(h.entries) && h.entries[i].ts == ts {
		h.entries[i].kept = now
		tx.Rollback()
		return
	}
	if window <= 0 {
		tx.Rollback()
		return
	}
	h.entries = append(h.entries, snapEntry{})
	copy(h.entries[i+1:], h.entries[i:])
	h.entries[i] = snapEntry{ts: ts, tx: tx, kept: now}
	for len(h.entries) > maxSnapHistory {
		h.entries[0].tx.Rollback()
		h.entries = h.entries[1:]
	}
}

// at returns a clone of the newest retained snapshot at or before ts and
// its time (nil: none).
func (h *SnapHistory) at(ts repl.Timestamp, now time.Time, window time.Duration) (*exec.Tx, repl.Timestamp, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pruneLocked(now, window)
	i := sort.Search(len(h.entries), func(i int) bool { return h.entries[i].ts > ts })
	if i == 0 {
		return nil, 0, nil
	}
	e := h.entries[i-1]
	tx, err := e.tx.Clone()
	return tx, e.ts, err
}

// Prune drops the snapshots kept longer than the window.
func (h *SnapHistory) Prune(now time.Time, window time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pruneLocked(now, window)
}

func (h *SnapHistory) pruneLocked(now time.Time, window time.Duration) {
	n := 0
	for _, e := range h.entries {
		if now.Sub(e.kept) > window || window <= 0 {
			e.tx.Rollback()
			continue
		}
		h.entries[n] = e
		n++
	}
	clear(h.entries[n:])
	h.entries = h.entries[:n]
}

// Len is the number of retained snapshots.
func (h *SnapHistory) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// CloseAll drops every retained snapshot (shutdown).
func (h *SnapHistory) CloseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.entries {
		e.tx.Rollback()
	}
	h.entries = nil
}

// OpenSnapshot makes tx, the command's snapshot, the snapshot of a
// snapshot read at atClusterTime at (0: the current data), and retains
// it. It returns the read's cluster time and, when the read is of a
// retained snapshot instead, that snapshot (a clone the command adopts).
func (m Member) OpenSnapshot(tx *exec.Tx, at repl.Timestamp) (repl.Timestamp, *exec.Tx, error) {
	now, window := time.Now(), m.SnapWindow()
	last, _, ok, err := oplog.Last(tx)
	if err != nil {
		return 0, nil, err
	}
	if !ok {
		last = m.Set.Clock.Now()
	}
	if at == 0 || last <= at {
		ts := last
		if at != 0 {
			ts = at
		}
		keep, err := tx.Clone()
		if err != nil {
			return 0, nil, err
		}
		m.Snaps.keep(last, keep, now, window)
		return ts, nil, nil
	}
	old, oldTS, err := m.Snaps.at(at, now, window)
	if err != nil {
		return 0, nil, err
	}
	if old != nil {
		valid, err := unchangedSince(tx, oldTS, at)
		if err != nil {
			old.Rollback()
			return 0, nil, err
		}
		if valid {
			return at, old, nil
		}
		old.Rollback()
	}
	return 0, nil, mongoerr.New(mongoerr.SnapshotTooOld, "Read timestamp %s is older than the oldest available timestamp.", at)
}

// unchangedSince reports whether the oplog of tx shows no change in (from,
// to] and holds everything since from (nothing between was truncated).
func unchangedSince(tx *exec.Tx, from, to repl.Timestamp) (bool, error) {
	first, _, ok, err := oplog.First(tx)
	if err != nil || !ok || first > from {
		return false, err
	}
	r, err := oplog.Entries(tx, from+1)
	if err != nil {
		return false, err
	}
	if r.Next() && r.TS() <= to {
		return false, nil
	}
	return true, r.Err()
}
