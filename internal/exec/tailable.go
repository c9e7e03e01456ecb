package exec

// Tailable cursors and record ranges. A tailable cursor's scan
// (ScanSource.Tailable) walks a capped collection forward in record order
// and is never exhausted: when it reaches the newest document it stops and
// the cursor stays open. Each batch reads the data as it is now (the
// command layer gives tailable cursors no snapshot of their own), resuming
// after the last record it examined; when that record is gone — the
// capping removed it, or a delete — the scan cannot tell what it missed
// and fails with CappedPositionLost (136), as mongod's collection scan. The
// await of awaitData cursors is the command layer's (getMore), woken by
// kv's tree watches.
//
// A find on local.oplog.rs whose filter bounds ts scans only the record
// keys of those timestamps (the oplog's record id is its ts), forward or,
// for a tailable cursor, from the first entry in range.

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// ErrCappedPositionLost is the error of a tailable scan whose position was
// removed (rid is the last record it saw).
func ErrCappedPositionLost(rid uint64) error {
	return mongoerr.New(mongoerr.CappedPositionLost, "CollectionScan died due to position in capped collection being deleted. Last seen record id: RecordId(%d)", rid)
}

// fillTailable is Fill for a tailable cursor.
func (s *ScanSource) fillTailable(ctx context.Context, coll *catalog.Collection, t *kv.Tree, emit func(bson.Doc) bool) (bool, error) {
	if !coll.Capped {
		return false, mongoerr.New(mongoerr.BadValue, "error processing query: tailable cursor requested on non capped collection")
	}
	if !s.Planned {
		s.Planned = true
		if coll.IsOplog() {
			if r, ok := OplogRange(s.Spec.FilterDoc); ok {
				s.idr, s.RecordRange = &r, &r
			}
		}
	}
	cur := t.Cursor()
	var k, v []byte
	switch {
	case s.lastKey == nil && s.idr != nil:
		k, v = cur.Seek(s.idr.Start)
		for k != nil && !s.idr.PastStart(k) {
			k, v = cur.Next()
		}
	case s.lastKey == nil:
		k, v = cur.First()
	default:
		k, _ = cur.Seek(s.lastKey)
		if k == nil || string(k) != string(s.lastKey) {
			rid, _ := catalog.RecordID(s.lastKey)
			s.done = true
			return false, ErrCappedPositionLost(rid)
		}
		k, v = cur.Next()
	}
	s.started = true
	var md query.MatchDetails
	n := 0
	for ; k != nil && (s.idr == nil || s.idr.BeforeEnd(k)); k, v = cur.Next() {
		if n++; n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return false, mongoerr.FromContext(err)
			}
		}
		md = query.MatchDetails{}
		s.DocsExamined++
		ok, err := Matches(s.Spec.Filter, bson.Doc(v), &md)
		if err != nil {
			return false, err
		}
		if ok && s.Skip > 0 {
			s.Skip--
			ok = false
		}
		if ok {
			out, err := s.projectDetails(bson.Doc(v), &md)
			if err != nil {
				return false, err
			}
			if !emit(out) {
				return false, nil
			}
		}
		s.lastKey = append(s.lastKey[:0], k...)
	}
	if err := cur.Err(); err != nil {
		return false, fmt.Errorf("tailing %s: %w", coll.Namespace(), err)
	}
	return false, nil
}

// OplogRange is the range of oplog record keys a filter's ts bounds allow
// (ok=false: none, scan everything). Bounds are a superset: every entry is
// filtered again.
func OplogRange(filter bson.Doc) (index.KeyRange, bool) {
	if filter.Len() == 0 {
		return index.KeyRange{}, false
	}
	ivs, ok := index.FieldBounds(filter, "ts", false)
	if !ok || len(ivs) == 0 {
		return index.KeyRange{}, false
	}
	lo, hi := ivs[0], ivs[len(ivs)-1]
	r := index.KeyRange{
		Start: catalog.AppendRecordKey(nil, 0),
		End:   catalog.AppendRecordKey(nil, ^uint64(0)), EndInclusivePrefix: true,
	}
	bounded := false
	if lo.Lo.Type == bson.TypeTimestamp {
		t, i := lo.Lo.Timestamp()
		r.Start = catalog.AppendRecordKey(nil, uint64(t)<<32|uint64(i))
		r.StartExclusivePrefix = !lo.LoInc
		bounded = true
	}
	if hi.Hi.Type == bson.TypeTimestamp {
		t, i := hi.Hi.Timestamp()
		r.End = catalog.AppendRecordKey(nil, uint64(t)<<32|uint64(i))
		r.EndInclusivePrefix = hi.HiInc
		bounded = true
	}
	return r, bounded
}

// RecordRangeBounds returns the first and last record ids a range allows,
// for explain's minRecord and maxRecord (the ts values).
func RecordRangeBounds(r *index.KeyRange) (lo, hi bson.Value) {
	ts := func(key []byte) bson.Value {
		rid, _ := catalog.RecordID(key)
		var b bson.Builder
		b.AppendTimestamp("x", uint32(rid>>32), uint32(rid))
		v, _ := b.Finish().Lookup("x")
		return v
	}
	return ts(r.Start), ts(r.End)
}
