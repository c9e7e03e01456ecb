package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// ScanSource streams the documents of a collection that match a filter, in
// _id order (or reverse), skipping the first skip matches. Between batches it
// keeps only the key of the last document it returned and resumes after it in
// a fresh snapshot, as MongoDB's cursors resume after yielding.
type ScanSource struct {
	Env     *Engine
	Spec    *FindSpec
	Skip    int64
	Reverse bool
	lastKey []byte
	started bool
	done    bool
	buf     []byte
	// plan is the index plan chosen at the first batch (nil: collection
	// scan); walk is where it stopped.
	Plan    *Plan
	Planned bool
	Walk    WalkState
	// collScanOnly keeps the scan in _id order (it serves a sort on _id).
	CollScanOnly bool
	// idr bounds a forward scan by the filter's _id range.
	idr *index.KeyRange
	// docsExamined counts documents read (for explain's executionStats);
	// keys examined by an index plan are counted in walk.
	DocsExamined int64
	// raw disables projection (internal users that need whole documents).
	Raw bool
	// Tailable makes this a tailable cursor's scan of a capped collection
	// (tailable.go): forward in record order, never exhausted, resuming
	// after its last record in current data, and ended with
	// CappedPositionLost once that record has been removed.
	Tailable bool
	// RecordRange is set once planned for a scan bounded by record keys
	// (a ts range on local.oplog.rs), for explain.
	RecordRange *index.KeyRange
	// reportedKeys and reportedDocs are what was already added to the
	// operation's slow-log figures.
	reportedKeys, reportedDocs int64
	// Orig is, while emit runs, the stored document the emitted one was
	// made from (returnKey and showRecordId change it before a sort).
	Orig    bson.Doc
	decoBuf []byte
}

// reportExamined adds what this Fill examined to the operation's figures
// for the slow-operation log.
func (s *ScanSource) reportExamined(ctx context.Context) {
	_, byID := s.Spec.Filter.IDEquality()
	keys, docs := s.Walk.Keys, s.DocsExamined+s.Walk.Docs
	if byID && docs > 0 {
		keys = 1
	}
	NoteExamined(ctx, PlanSummary(s.Plan, byID && s.Plan == nil), keys-s.reportedKeys, docs-s.reportedDocs)
	s.Env.Counters.KeysExamined.Add(keys - s.reportedKeys)
	s.Env.Counters.DocsExamined.Add(docs - s.reportedDocs)
	s.reportedKeys, s.reportedDocs = keys, docs
}

func (s *ScanSource) Close() {}

func (s *ScanSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	if s.done {
		return true, nil
	}
	defer s.reportExamined(ctx)
	tx, err := SnapshotOf(ctx, s.Env)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, s.Spec.DB, s.Spec.Coll)
	if err != nil {
		return false, err
	}
	if coll == nil {
		s.done = true
		return true, nil
	}
	t, err := DataTree(tx, coll)
	if err != nil {
		return false, err
	}
	if s.Tailable {
		return s.fillTailable(ctx, coll, t, emit)
	}
	if !s.Planned && s.Spec.HasMinMax() {
		s.Planned = true
		if s.Plan, s.idr, err = MinMaxPlan(coll, s.Spec); err != nil {
			return false, err
		}
	}
	if !s.Planned {
		s.Planned = true
		if _, byID := s.Spec.Filter.IDEquality(); !byID && !s.Reverse {
			if !s.CollScanOnly {
				p, _, err := s.Env.PlanQuery(ctx, tx, coll, s.Spec.FilterDoc, s.Spec.Filter, s.Spec.Opts, s.Spec.Hint)
				if err != nil {
					return false, err
				}
				s.Plan = CoverPlan(coll, s.Spec, p)
			}
			if r, ok := IDRange(s.Spec); ok && s.Plan == nil && ScansByID(coll) {
				s.idr = &r
			}
			if s.Plan == nil && coll.IsOplog() {
				if r, ok := OplogRange(s.Spec.FilterDoc); ok {
					s.idr, s.RecordRange = &r, &r
				}
			}
		}
	}
	if s.Plan != nil {
		return s.fillFromIndex(ctx, tx, coll, t, emit)
	}
	cur := t.Cursor()
	var k, v []byte
	// Point lookup on _id.
	if id, ok := s.Spec.Filter.IDEquality(); ok && !s.started && !s.Spec.HasMinMax() && (ScansByID(coll) || coll.HasIDIndex()) {
		s.started = true
		s.done = true
		key, val, err := LookupID(tx, coll, t, nil, id)
		if err != nil {
			return false, err
		}
		ok := false
		if val != nil {
			s.DocsExamined++
			var md query.MatchDetails
			if ok, err = Matches(s.Spec.Filter, bson.Doc(val), &md); err != nil {
				return false, err
			}
		}
		if ok && s.Skip == 0 {
			out, err := s.project(bson.Doc(val))
			if err == nil && s.Spec.decorated() {
				out, err = s.decorate(out, bson.Doc(val), key, coll)
			}
			if err != nil {
				return false, err
			}
			s.Orig = bson.Doc(val)
			if !emit(out) {
				s.done = false
				s.started = false
				return false, nil
			}
		}
		return true, nil
	}
	switch {
	case !s.started && !s.Reverse && s.idr != nil:
		k, v = cur.Seek(s.idr.Start)
		for k != nil && !s.idr.PastStart(k) {
			k, v = cur.Next()
		}
	case !s.started && !s.Reverse:
		k, v = cur.First()
	case !s.started:
		k, v = cur.Last()
	case !s.Reverse:
		k, v = cur.Seek(s.lastKey)
		if k != nil && string(k) == string(s.lastKey) {
			k, v = cur.Next()
		}
	default:
		k, v = cur.SeekLE(s.lastKey)
		if k != nil && string(k) == string(s.lastKey) {
			k, v = cur.Prev()
		}
	}
	s.started = true
	var md query.MatchDetails
	n := 0
	for ; k != nil && (s.idr == nil || s.idr.BeforeEnd(k)); k, v = s.step(cur) {
		if n++; n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return false, mongoerr.FromContext(err)
			}
		}
		md = query.MatchDetails{}
		s.DocsExamined++
		if ok, err := Matches(s.Spec.Filter, bson.Doc(v), &md); err != nil {
			return false, err
		} else if !ok {
			s.lastKey = append(s.lastKey[:0], k...)
			continue
		}
		if s.Skip > 0 {
			s.Skip--
			s.lastKey = append(s.lastKey[:0], k...)
			continue
		}
		out, err := s.projectDetails(bson.Doc(v), &md)
		if err == nil && s.Spec.decorated() {
			out, err = s.decorate(out, bson.Doc(v), k, coll)
		}
		if err != nil {
			return false, err
		}
		s.Orig = bson.Doc(v)
		if !emit(out) {
			return false, nil
		}
		s.lastKey = append(s.lastKey[:0], k...)
	}
	if err := cur.Err(); err != nil {
		return false, err
	}
	s.done = true
	return true, nil
}

// fillFromIndex serves the next documents of an index plan.
func (s *ScanSource) fillFromIndex(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, emit func(bson.Doc) bool) (bool, error) {
	var md query.MatchDetails
	done, err := WalkIndex(ctx, tx, coll, data, s.Plan, &s.Walk, func(dataKey []byte, d bson.Doc) (bool, error) {
		md = query.MatchDetails{}
		if ok, err := Matches(s.Spec.Filter, d, &md); !ok || err != nil {
			return err == nil, err
		}
		if s.Skip > 0 {
			s.Skip--
			return true, nil
		}
		out, err := s.projectDetails(d, &md)
		if err == nil && s.Spec.decorated() {
			out, err = s.decorate(out, d, dataKey, coll)
		}
		if err != nil {
			return false, err
		}
		s.Orig = d
		return emit(out), nil
	})
	if err != nil {
		return false, err
	}
	s.done = done
	return done, nil
}

func (s *ScanSource) step(cur interface {
	Next() ([]byte, []byte)
	Prev() ([]byte, []byte)
}) ([]byte, []byte) {
	if s.Reverse {
		return cur.Prev()
	}
	return cur.Next()
}

func (s *ScanSource) project(d bson.Doc) (bson.Doc, error) {
	var md query.MatchDetails
	s.Spec.Filter.MatchDetails(d, &md)
	return s.projectDetails(d, &md)
}

func (s *ScanSource) projectDetails(d bson.Doc, md *query.MatchDetails) (bson.Doc, error) {
	if s.Spec.Proj == nil || s.Raw {
		return d, nil
	}
	out, err := s.Spec.Proj.Apply(s.buf[:0], d, md)
	if err != nil {
		return nil, err
	}
	s.buf = out
	return out, nil
}

// SliceSource serves documents held in memory.
type SliceSource struct {
	Docs []bson.Doc
	pos  int
}

func (s *SliceSource) Close() { s.Docs = nil }

func (s *SliceSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	for s.pos < len(s.Docs) {
		if !emit(s.Docs[s.pos]) {
			return false, nil
		}
		s.Docs[s.pos] = nil
		s.pos++
	}
	return true, nil
}

// IDSortDirection is 1 or -1 for a sort on _id alone, else 0.
func IDSortDirection(sortDoc bson.Doc) int {
	if len(sortDoc) == 0 || sortDoc.Len() != 1 {
		return 0
	}
	v, ok := sortDoc.Lookup("_id")
	if !ok {
		return 0
	}
	switch f, _ := v.AsFloat64(); {
	case f == 1:
		return 1
	case f == -1:
		return -1
	}
	return 0
}

// IDRange is the filter's _id bounds as one range of data tree keys, when
// the filter restricts _id to a single interval (and no collation changes
// string order).
func IDRange(spec *FindSpec) (index.KeyRange, bool) {
	if spec.FilterDoc.Len() == 0 || (spec.Opts != nil && spec.Opts.Collation != nil) {
		return index.KeyRange{}, false
	}
	ivs, ok := index.FieldBounds(spec.FilterDoc, "_id", false)
	if !ok || len(ivs) != 1 {
		return index.KeyRange{}, false
	}
	iv := ivs[0]
	return index.KeyRange{
		Start: DocKey(nil, iv.Lo), StartExclusivePrefix: !iv.LoInc,
		End: DocKey(nil, iv.Hi), EndInclusivePrefix: iv.HiInc,
	}, true
}
