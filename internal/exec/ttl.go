package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"math"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/kv"
)

// TTL monitor: like mongod's, a background pass every interval (default
// 60 s, mongod's ttlMonitorSleepSecs) deletes the documents whose indexed
// date, plus the index's expireAfterSeconds, is in the past. A field holding
// an array expires with its earliest date; documents without a date in the
// field never expire. A clustered collection's expireAfterSeconds is a TTL
// on _id: its documents whose _id is a date older than that are removed,
// found by a range of the data tree (which is in _id order), from the
// first date key to the cutoff, without reading the others.

// RunTTLMonitor runs passes until ctx ends, logging failed passes and
// deletions to log. interval is read before every wait and at least once
// a second while waiting (setParameter ttlMonitorSleepSecs takes effect
// within a second; a non-positive interval means 60 s).
func RunTTLMonitor(ctx context.Context, e *Engine, log *slog.Logger, interval func() time.Duration) {
	every := func() time.Duration {
		if d := interval(); d > 0 {
			return d
		}
		return 60 * time.Second
	}
	last := time.Now()
	t := time.NewTimer(min(every(), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			d := every()
			if wait := last.Add(d).Sub(now); wait > 0 {
				t.Reset(min(wait, time.Second))
				continue
			}
			last = now
			t.Reset(min(d, time.Second))
			n, err := TTLPass(ctx, e, now)
			if err != nil {
				log.Warn("TTL pass failed", "c", "INDEX", "ctx", "TTLMonitor", "error", err.Error())
			} else if n > 0 {
				log.Info("Deleted expired documents", "c", "INDEX", "id", 5479200, "ctx", "TTLMonitor", "numDeleted", n)
			}
		}
	}
}

// TTLPass deletes every expired document once and returns how many.
func TTLPass(ctx context.Context, e *Engine, now time.Time) (int64, error) {
	var colls []*catalog.Collection
	if err := e.KV.View(func(tx *kv.Tx) error {
		var err error
		colls, err = catalog.List(tx, "")
		return err
	}); err != nil {
		return 0, err
	}
	var total int64
	for _, c := range colls {
		n, err := timeseriesTTL(ctx, e, c, now)
		total += n
		if err != nil {
			return total, err
		}
		if secs := c.ClusteredExpireAfterSeconds(); secs >= 0 {
			n, err := expireClustered(ctx, e, c, secs, now)
			total += n
			if err != nil {
				return total, err
			}
		}
		for _, ix := range c.Indexes {
			if !ix.Ready {
				continue
			}
			spec, err := index.ParseCached(ix.Spec)
			if err != nil || spec.ExpireAfterSeconds < 0 || len(spec.Fields) != 1 || spec.Fields[0].Hashed {
				continue
			}
			n, err := expire(ctx, e, c, spec, now)
			total += n
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

func expire(ctx context.Context, e *Engine, c *catalog.Collection, spec *index.Spec, now time.Time) (int64, error) {
	cutoff := now.Add(-time.Duration(spec.ExpireAfterSeconds) * time.Second).UnixMilli()
	return removeExpired(ctx, e, c, nil, nil, func(v []byte) bool {
		return expired(bson.Doc(v), spec.Fields[0].Parts, cutoff)
	})
}

// removeExpired removes, in one transaction, the documents of c whose
// storage keys lie in [lo, hi) (nil: unbounded) and for which isExpired
// holds (nil: all of them), through the collection writer so that indexes
// and the oplog follow. A collection dropped or recreated since c was read
// is left alone.
func removeExpired(ctx context.Context, e *Engine, c *catalog.Collection, lo, hi []byte, isExpired func(doc []byte) bool) (int64, error) {
	var n int64
	err := e.KV.Update(ctx, func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, c.DB, c.Name)
		if err != nil || coll == nil || coll.UUID != c.UUID {
			return err
		}
		w, err := OpenWriter(tx, coll)
		if err != nil {
			return err
		}
		w.Oplog = e.Oplog
		type victim struct {
			key []byte
			doc bson.Doc
		}
		var victims []victim
		cur := w.Data.Cursor()
		k, v := cur.First()
		if lo != nil {
			k, v = cur.Seek(lo)
		}
		for ; k != nil && (hi == nil || bytes.Compare(k, hi) < 0); k, v = cur.Next() {
			if isExpired == nil || isExpired(v) {
				victims = append(victims, victim{append([]byte(nil), k...), bson.Doc(append([]byte(nil), v...))})
			}
		}
		if err := cur.Err(); err != nil {
			return err
		}
		for _, vic := range victims {
			if err := w.Remove(vic.key, vic.doc); err != nil {
				return err
			}
		}
		n = int64(len(victims))
		return nil
	})
	return n, err
}

// expired reports whether the earliest date at path is before cutoff.
func expired(d bson.Doc, path []string, cutoff int64) bool {
	found, earliest := false, int64(0)
	PathValues(d, path, func(v bson.Value) {
		check := func(x bson.Value) {
			if x.Type == bson.TypeDateTime && (!found || x.DateTime() < earliest) {
				found, earliest = true, x.DateTime()
			}
		}
		if v.Type == bson.TypeArray {
			it := v.Document().Iter()
			for it.Next() {
				check(it.Element().Value)
			}
			return
		}
		check(v)
	})
	return found && earliest < cutoff
}

// expireClustered removes the documents of clustered collection c whose
// _id is a date before now - secs.
func expireClustered(ctx context.Context, e *Engine, c *catalog.Collection, secs int64, now time.Time) (int64, error) {
	cutoff := now.Add(-time.Duration(secs) * time.Second).UnixMilli()
	date := func(ms int64) bson.Value {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(ms))
		return bson.Value{Type: bson.TypeDateTime, Data: b[:]}
	}
	lo, hi := DocKey(nil, date(math.MinInt64)), DocKey(nil, date(cutoff))
	return removeExpired(ctx, e, c, lo, hi, nil)
}
