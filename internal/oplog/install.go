package oplog

// What a member that installs a snapshot of another member's data needs:
// the tree names a snapshot leaves to the member, and to replace its own entries with the snapshot's.

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// MetaTreeName is the kv tree of the oplog's own figures: each member
// keeps its own (a snapshot does not copy it).
const MetaTreeName = metaTree

// ReplaceEntries replaces every entry of the oplog with those next
// returns, in ts order, in tx (kv's writer): the oplog of a member
// installing a snapshot becomes the snapshot's. The size is kept as
// appends keep it, and the clock observes the last entry.
func (l *Log) ReplaceEntries(tx *kv.Tx, next func() (repl.Timestamp, bson.Doc, bool, error)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.begin(tx)
	if err != nil {
		return err
	}
	if _, err := t.DeleteRange(key(0), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}); err != nil {
		return fmt.Errorf("oplog: replacing the entries: %w", err)
	}
	l.pend.bytes, l.pend.count = 0, 0
	l.last = 0
	var last repl.Timestamp
	for {
		ts, doc, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := l.put(tx, t, ts, doc); err != nil {
			return err
		}
		last = ts
	}
	l.last = last
	l.clock.Observe(last)
	return l.saveFigures(tx, last)
}
