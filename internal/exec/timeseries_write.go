package exec

// Updates and deletes on a time-series collection, as MongoDB 7.0 allows
// them: a delete may have any filter (the buckets that may hold a match —
// by their meta value and time bounds, through the buckets' indexes — are
// unpacked, and rewritten without the deleted measurements or removed);
// an update's filter and modifications may name only the metaField, and
// it changes the meta value of whole buckets. Both count measurements.

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/timeseries"
)

// bucketMatches selects the buckets of ts that may hold measurements
// matching filter.
func (e *Engine) bucketMatches(c WriteCmd, tx *Tx, w *CollWriter, ts *Timeseries, filter bson.Doc, opts *query.Options) ([]Match, error) {
	bf, err := CompileWriteFilter(ts.Opts.BucketFilter(filter), &query.Options{Collation: opts.Collation})
	if err != nil {
		return nil, fmt.Errorf("timeseries: bucket filter: %w", err)
	}
	return e.SelectDocs(c, tx, ts.Buckets, w.Data, &bf, bson.Value{}, nil, 0)
}

// DeleteMeasurements deletes the measurements of ts matching where (at
// most one when limit is 1) and returns how many it deleted.
func (e *Engine) DeleteMeasurements(c WriteCmd, tx *Tx, ts *Timeseries, q bson.Doc, where *WriteFilter, limit int) (int, error) {
	w, err := c.Writer(tx, ts.Buckets)
	if err != nil {
		return 0, err
	}
	ms, err := e.bucketMatches(c, tx, w, ts, q, where.opts)
	if err != nil {
		return 0, err
	}
	up := &timeseries.Unpacker{TimeField: ts.Opts.TimeField, MetaField: ts.Opts.MetaField}
	n := 0
	for _, m := range ms {
		if limit == 1 && n == 1 {
			break
		}
		var keep []bson.Doc
		removed := 0
		if err := up.Unpack(m.Doc, func(d bson.Doc) bool {
			if (limit != 1 || n+removed == 0) && where.Filter.Match(d) {
				removed++
			} else {
				keep = append(keep, d)
			}
			return true
		}); err != nil {
			return n, err
		}
		if removed == 0 {
			continue
		}
		if len(keep) == 0 {
			err = w.Remove(m.Key, m.Doc)
		} else {
			var rebuilt bson.Doc
			if rebuilt, err = timeseries.RebuildLike(ts.Opts, m.Doc, keep); err != nil {
				return n, fmt.Errorf("%s: %w", ts.Buckets.Namespace(), err)
			}
			err = w.Replace(m.Key, m.Doc, rebuilt)
		}
		if err != nil {
			return n, err
		}
		n += removed
	}
	return n, nil
}

// UpdateMeasurements runs a meta-only update statement on ts (checked by
// the caller with Options.UpdateError and MetaOnly): each bucket whose
// meta value matches has it updated.
func (e *Engine) UpdateMeasurements(c WriteCmd, tx *Tx, ts *Timeseries, q bson.Doc, s *UpdateStmt) (UpdateResult, error) {
	var res UpdateResult
	w, err := c.Writer(tx, ts.Buckets)
	if err != nil {
		return res, err
	}
	ms, err := e.bucketMatches(c, tx, w, ts, q, s.Where.opts)
	if err != nil {
		return res, err
	}
	for i := range ms {
		m := &ms[i]
		meta, _ := m.Doc.Lookup("meta")
		doc := ts.Opts.MetaDoc(meta)
		if !s.Where.Filter.Match(doc) {
			continue
		}
		count := bucketCount(m.Doc, ts.Opts.TimeField)
		res.Matched += count
		var md query.MatchDetails
		out, changed, err := s.Upd.ApplyContext(c, nil, doc, &md, false)
		if err != nil {
			return res, err
		}
		if !changed {
			continue
		}
		nm, _ := out.Lookup(ts.Opts.MetaField)
		if err := w.Replace(m.Key, m.Doc, timeseries.WithMeta(m.Doc, nm)); err != nil {
			return res, err
		}
		res.Modified += count
	}
	return res, nil
}

// bucketCount is how many measurements a bucket holds.
func bucketCount(bucket bson.Doc, timeField string) int {
	return timeseries.BucketCount(bucket, timeField)
}
