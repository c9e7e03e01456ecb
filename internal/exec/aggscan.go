package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// AggSnapshot is the snapshot an aggregation's collection scans read. The
// aggregate command's source sets a new one for each batch it fills (a
// getMore reads a new snapshot) and increments Gen; a scan that sees a new
// Gen reopens its collection and resumes after the last key it returned.
type AggSnapshot struct {
	Eng  *Engine
	Actx *agg.Context
	Tx   *kv.Tx
	Ctx  context.Context
	Gen  int // incremented for every snapshot
}

// ScanIter reads a collection in _id order across snapshots: when the
// snapshot changes it reopens the collection and resumes after the last
// key it returned.
type ScanIter struct {
	cat      *AggSnapshot
	db, coll string
	filter   *query.Filter
	gen      int
	cur      *kv.Cursor
	lastKey  []byte
	started  bool
	done     bool
	n        int

	// With a filter that an index serves (the leading $match), the scan
	// walks the index instead, buffering copies of the fetched documents.
	FilterDoc bson.Doc
	Hint      bson.Value
	Planned   bool
	Plan      *Plan
	walk      WalkState
	walked    bool // the index walk is finished
	buf       []bson.Doc
	bufPos    int
}

// indexBatch is how many documents an index walk fetches per step.
const indexBatch = 256

// nextIndexed serves the next document of an index plan.
func (s *ScanIter) nextIndexed(coll *catalog.Collection) (bson.Doc, error) {
	for {
		if s.bufPos < len(s.buf) {
			d := s.buf[s.bufPos]
			s.buf[s.bufPos] = nil
			s.bufPos++
			return d, nil
		}
		if s.walked {
			s.done = true
			return nil, nil
		}
		if coll == nil {
			var err error
			if coll, err = catalog.Get(s.cat.Tx, s.db, s.coll); err != nil {
				return nil, err
			}
			if coll == nil {
				s.done = true
				return nil, nil
			}
		}
		data, err := DataTree(s.cat.Tx, coll)
		if err != nil {
			return nil, err
		}
		s.buf, s.bufPos = s.buf[:0], 0
		ctx := s.cat.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		done, err := WalkIndex(ctx, s.cat.Tx, coll, data, s.Plan, &s.walk, func(_ []byte, d bson.Doc) (bool, error) {
			if len(s.buf) >= indexBatch {
				return false, nil
			}
			if s.filter == nil || s.filter.Match(d) {
				s.buf = append(s.buf, append(bson.Doc(nil), d...))
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
		s.walked = done
		coll = nil
	}
}

// ScanCollection reads db.coll (a collection, not a view) in _id order, keeping
// the documents filter matches (nil: all).
func (k *AggSnapshot) ScanCollection(db, coll string, filter *query.Filter) *ScanIter {
	return &ScanIter{cat: k, db: db, coll: coll, filter: filter}
}

func (s *ScanIter) Next() (bson.Doc, error) {
	if s.done {
		return nil, nil
	}
	if s.Plan != nil && s.gen == s.cat.Gen {
		return s.nextIndexed(nil)
	}
	var key, val []byte
	if s.cur == nil || s.gen != s.cat.Gen {
		if s.cat.Tx == nil {
			return nil, mongoerr.New(mongoerr.InternalError, "aggregate: collection read outside a snapshot")
		}
		s.gen = s.cat.Gen
		coll, err := catalog.Get(s.cat.Tx, s.db, s.coll)
		if err != nil {
			return nil, err
		}
		if coll == nil {
			s.done = true
			return nil, nil
		}
		if !s.Planned {
			s.Planned = true
			if (len(s.FilterDoc) > 5 || Hinted(s.Hint)) && s.cat.Actx != nil {
				if s.Plan, _, err = s.cat.Eng.PlanQuery(s.cat.Ctx, s.cat.Tx, coll, s.FilterDoc, s.filter, s.cat.Actx.Query, s.Hint); err != nil {
					return nil, err
				}
			}
		}
		if s.Plan != nil {
			return s.nextIndexed(coll)
		}
		t, err := DataTree(s.cat.Tx, coll)
		if err != nil {
			return nil, err
		}
		s.cur = t.Cursor()
		if !s.started {
			key, val = s.cur.First()
			s.started = true
		} else {
			key, val = s.cur.Seek(s.lastKey)
			if key != nil && string(key) == string(s.lastKey) {
				key, val = s.cur.Next()
			}
		}
	} else {
		key, val = s.cur.Next()
	}
	for ; key != nil; key, val = s.cur.Next() {
		if s.n++; s.n&255 == 0 && s.cat.Ctx != nil {
			if err := s.cat.Ctx.Err(); err != nil {
				return nil, mongoerr.FromContext(err)
			}
		}
		s.lastKey = append(s.lastKey[:0], key...)
		if s.filter == nil || s.filter.Match(bson.Doc(val)) {
			return bson.Doc(val), nil
		}
	}
	if err := s.cur.Err(); err != nil {
		return nil, err
	}
	s.done = true
	return nil, nil
}
