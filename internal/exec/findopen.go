package exec

// Opening a find (not a tailable one: tailable.go): which source answers
// its spec, all chosen in the command's snapshot that the caller hands in
// — the same one the first batch then reads, so that a plan cannot be
// chosen in one snapshot and run in another.
//
//   - $text and $near read their indexes (text.go, near.go);
//   - min/max read the hinted index's range (findopts.go), sorted after
//     reading when a sort is asked for;
//   - a sort on _id alone is the data tree's order (within the filter's
//     _id bounds), unless another index would select the documents;
//   - another sort is an index plan that returns the documents in order
//     if the planner picks one, else a blocking sort of the scan's
//     matches (SortedFind: an external sort beyond the memory budget, a
//     top-k with a limit);
//   - the rest scans the plan the planner picks, in _id order or
//     $natural: -1 backwards.

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// CheckHint accepts a hint that names a ready index of coll (nil: no
// collection, any hint of the right type) by name or key pattern, an
// empty document or $natural; a hint naming no index is BadValue, as in
// MongoDB.
func CheckHint(coll *catalog.Collection, hint bson.Value) error {
	switch hint.Type {
	case bson.TypeString:
		if coll == nil {
			return nil
		}
		for _, ix := range coll.Indexes {
			if ix.Ready && ix.Name == hint.StringValue() {
				return nil
			}
		}
	case bson.TypeDocument:
		if hint.Document().Len() == 0 {
			return nil
		}
		if v, ok := hint.Document().Lookup("$natural"); ok && v.IsNumber() {
			return nil
		}
		if coll == nil {
			return nil
		}
		for _, ix := range coll.Indexes {
			if key, ok := ix.Spec.Lookup("key"); ok && ix.Ready && bson.Equal(key, hint) {
				return nil
			}
		}
	default:
		return mongoerr.New(mongoerr.FailedToParse, "hint must be a string or an object")
	}
	return mongoerr.New(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")
}

// OpenFind chooses the source of spec (above) in tx, the command's
// snapshot, where coll is spec's collection (nil: none); allowDisk is
// allowDiskUse (a blocking sort may spill).
func (e *Engine) OpenFind(ctx context.Context, tx *Tx, coll *catalog.Collection, spec *FindSpec, allowDisk bool) (Source, error) {
	if spec.Text != nil {
		return NewTextSource(e, spec, false), nil
	}
	if spec.Near != nil {
		return NewNearSource(e, spec), nil
	}
	scan := &ScanSource{Env: e, Spec: spec, Skip: spec.Skip}
	if spec.HasMinMax() {
		if spec.Sort != nil && spec.Sort.Natural() == 0 {
			return e.SortedFind(ctx, scan, spec, allowDisk)
		}
		return scan, nil
	}
	if dir := IDSortDirection(spec.SortDoc); dir != 0 && spec.Hint.Type == 0 {
		_, bounded := IDRange(spec)
		if (bounded || spec.FilterDoc.Len() == 0) && ScansByID(coll) {
			scan.Reverse = dir < 0
			scan.CollScanOnly = true
			return scan, nil
		}
	}
	if spec.Sort != nil && spec.Sort.Natural() == 0 {
		p, err := e.sortedPlan(ctx, tx, coll, spec)
		if err != nil {
			return nil, err
		}
		if p != nil {
			scan.Plan, scan.Planned = p, true
			return scan, nil
		}
		return e.SortedFind(ctx, scan, spec, allowDisk)
	}
	if NaturalBackward(spec) {
		scan.Reverse = true
	}
	return scan, nil
}

// sortedPlan is the index plan that returns spec's documents in its sort
// order, if the planner picks one (nil: sort after reading).
func (e *Engine) sortedPlan(ctx context.Context, tx *Tx, coll *catalog.Collection, spec *FindSpec) (*Plan, error) {
	if _, byID := spec.Filter.IDEquality(); byID || spec.Hint.Type != 0 {
		return nil, nil
	}
	base, _, err := e.PlanQuery(ctx, tx, coll, spec.FilterDoc, spec.Filter, spec.Opts, spec.Hint)
	if err != nil {
		return nil, err
	}
	if p := ChoosePlanFind(coll, spec, base); p != nil && p.Sorted {
		return CoverPlan(coll, spec, p), nil
	}
	return nil, nil
}

// SortedFind runs scan to the end, sorting the matching documents (an
// external sort beyond the memory budget when allowDisk, a top-k with a
// limit), and serves them with skip, limit and projection applied.
func (e *Engine) SortedFind(ctx context.Context, scan *ScanSource, spec *FindSpec, allowDisk bool) (Source, error) {
	scan.Skip = 0
	// returnKey and showRecordId shape each result in the scan (they need
	// its index key and record); the sort then reads the stored document.
	shaped := spec.ReturnKey || spec.ShowRecordID
	scan.Raw = !shaped
	st := &Sorter{AllowDisk: allowDisk, Parent: e.SpillDir()}
	if spec.Limit > 0 {
		st.Keep = spec.Skip + spec.Limit
	}
	var addErr error
	_, err := scan.Fill(ctx, func(d bson.Doc) bool {
		orig := d
		if shaped {
			orig = scan.Orig
		}
		if addErr = spec.Sort.Check(orig); addErr != nil {
			return false
		}
		addErr = st.Add(spec.Sort.Key(nil, orig), d)
		return addErr == nil
	})
	if err == nil {
		err = addErr
	}
	var stream SortedStream
	if err == nil {
		stream, err = st.Finish()
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	e.NoteSorted(ctx, st.Spilled())
	return &SortedSource{Stream: stream, Spec: spec, Skip: spec.Skip, Projected: shaped}, nil
}
