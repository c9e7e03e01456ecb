package exec

import (
	"bytes"
	"context"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// Match is a document selected by a write statement.
type Match struct {
	Key []byte
	Doc bson.Doc
	Md  query.MatchDetails
}

// WriteFilter is a write statement's compiled query: the filter document
// without its $text clause (what the planner and the upsert seed see), its
// matcher, the query options, and the $text clause (nil: none), which is
// read through the collection's text index as find reads it.
type WriteFilter struct {
	doc    bson.Doc
	Filter *query.Filter
	opts   *query.Options
	Text   *TextClause
	// Near is the statement's $near or $nearSphere (nil: none), taken out
	// of the filter as find takes it and read through the geo index: the
	// statement applies to the nearest matching documents first, and an
	// upsert's seed has no geo field, as mongod.
	Near *NearClause
}

// CompileWriteFilter parses the q (or query) of an update, delete or
// findAndModify statement. A $text clause, at the top level or in a
// top-level $and, is taken out and makes {$meta: "textScore"} available
// to the statement's sort and projection.
func CompileWriteFilter(q bson.Doc, opts *query.Options) (WriteFilter, error) {
	rest, clause, err := SplitText(q)
	if err != nil {
		return WriteFilter{}, err
	}
	if clause != nil {
		opts.TextScore = true
	}
	rest, near, err := SplitNear(rest)
	if err != nil {
		return WriteFilter{}, err
	}
	f, err := query.ParseFilter(rest, opts)
	return WriteFilter{doc: rest, Filter: f, opts: opts, Text: clause, Near: near}, err
}

// SelectDocs returns the documents of coll (data tree t) that match wf,
// in _id or index order, or in the order of s if given, at most limit of
// them (0 = all). The documents are copied, so the caller may modify the
// collection while using them. The plan and what it examined are added to
// the statement's slow-operation figures and to serverStatus's
// metrics.queryExecutor.
func (e *Engine) SelectDocs(c context.Context, tx *kv.Tx, coll *catalog.Collection, t *kv.Tree, wf *WriteFilter, hint bson.Value, s *query.Sort, limit int) ([]Match, error) {
	if wf.Text != nil {
		return e.selectText(c, tx, coll, t, wf, s, limit)
	}
	if wf.Near != nil {
		return e.selectNear(c, tx, coll, wf, s, limit)
	}
	filterDoc, filter := wf.doc, wf.Filter
	if id, ok := filter.IDEquality(); ok && (ScansByID(coll) || coll.HasIDIndex()) {
		key, v, err := LookupID(tx, coll, t, nil, id)
		if err != nil {
			return nil, err
		}
		if v == nil {
			e.Examined(c, "IDHACK", 0, 0)
			return nil, nil
		}
		e.Examined(c, "IDHACK", 1, 1)
		m := Match{Key: key, Doc: bson.Doc(append([]byte(nil), v...))}
		if ok, err := Matches(filter, m.Doc, &m.Md); !ok || err != nil {
			return nil, err
		}
		return []Match{m}, nil
	}
	var out []Match
	p, _, err := e.PlanQuery(c, tx, coll, filterDoc, filter, wf.opts, hint)
	if err != nil {
		return nil, err
	}
	if p != nil {
		var st WalkState
		_, err := WalkIndex(c, tx, coll, t, p, &st, func(idKey []byte, d bson.Doc) (bool, error) {
			var md query.MatchDetails
			if ok, err := Matches(filter, d, &md); !ok || err != nil {
				return err == nil, err
			}
			out = append(out, Match{Key: append([]byte(nil), idKey...), Doc: bson.Doc(append([]byte(nil), d...)), Md: md})
			return s != nil || limit <= 0 || len(out) < limit, nil
		})
		e.Examined(c, PlanSummary(p, false), st.Keys, st.Docs)
		if err != nil {
			return nil, err
		}
		return e.orderMatches(c, out, s, limit)
	}
	cur := t.Cursor()
	n := 0
	defer func() { e.Examined(c, "COLLSCAN", 0, int64(n)) }()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if n++; n&255 == 0 {
			if err := c.Err(); err != nil {
				return nil, mongoerr.FromContext(err)
			}
		}
		var md query.MatchDetails
		if ok, err := Matches(filter, bson.Doc(v), &md); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		out = append(out, Match{Key: append([]byte(nil), k...), Doc: bson.Doc(append([]byte(nil), v...)), Md: md})
		if s == nil && limit > 0 && len(out) >= limit {
			break
		}
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	return e.orderMatches(c, out, s, limit)
}

// selectText is selectDocs for a filter with a $text clause: the text
// index gives the candidates and their scores, as for find (TEXT_MATCH),
// and a {$meta: "textScore"} sort orders by the score.
func (e *Engine) selectText(c context.Context, tx *kv.Tx, coll *catalog.Collection, t *kv.Tree, wf *WriteFilter, s *query.Sort, limit int) ([]Match, error) {
	tp, err := PlanText(coll, &FindSpec{Text: wf.Text, FilterDoc: wf.doc})
	if err != nil || tp == nil {
		return nil, err
	}
	var st WalkState
	hits, err := RunText(c, tx, coll, t, tp, wf.Filter, &st)
	e.Examined(c, "TEXT_MATCH", st.Keys, st.Docs)
	if err != nil {
		return nil, err
	}
	out := make([]Match, len(hits))
	for i, h := range hits {
		out[i] = Match{Key: h.Key, Doc: h.Doc, Md: h.Md}
	}
	return e.orderMatches(c, out, s, limit)
}

// selectNear serves a statement with $near or $nearSphere: the matching
// documents nearest first (then ordered by s, if given).
func (e *Engine) selectNear(c context.Context, tx *kv.Tx, coll *catalog.Collection, wf *WriteFilter, s *query.Sort, limit int) ([]Match, error) {
	var st WalkState
	want := int64(0)
	if s == nil && limit > 0 {
		want = int64(limit)
	}
	hits, err := NearSearch(c, tx, coll, wf.Near, wf.Filter, want, &st)
	e.Examined(c, "GEO_NEAR_2DSPHERE", st.Keys, st.Docs)
	if err != nil {
		return nil, err
	}
	out := make([]Match, len(hits))
	for i, h := range hits {
		out[i] = Match{Key: bytes.Clone(h.key), Doc: bson.Doc(bytes.Clone(h.Doc))}
	}
	return e.orderMatches(c, out, s, limit)
}

// orderMatches sorts matches by s (if any) and keeps the first limit.
func (e *Engine) orderMatches(c context.Context, out []Match, s *query.Sort, limit int) ([]Match, error) {
	if s != nil && s.Natural() == 0 {
		e.NoteSorted(c, false)
		for i := range out {
			if err := s.Check(out[i].Doc); err != nil {
				return nil, err
			}
		}
		keys := make([][]byte, len(out))
		for i := range out {
			keys[i] = s.KeyScore(nil, out[i].Doc, out[i].Md.TextScore)
		}
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return string(keys[idx[i]]) < string(keys[idx[j]]) })
		sorted := make([]Match, len(out))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		out = sorted
	} else if s != nil && s.Natural() < 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
