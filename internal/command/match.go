package command

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// match is a document selected by a write statement.
type match struct {
	key []byte
	doc bson.Doc
	md  query.MatchDetails
}

// writeFilter is a write statement's compiled query: the filter document
// without its $text clause (what the planner and the upsert seed see), its
// matcher, the query options, and the $text clause (nil: none), which is
// read through the collection's text index as find reads it.
type writeFilter struct {
	doc    bson.Doc
	filter *query.Filter
	opts   *query.Options
	text   *exec.TextClause
}

// compileWriteFilter parses the q (or query) of an update, delete or
// findAndModify statement. A $text clause, at the top level or in a
// top-level $and, is taken out and makes {$meta: "textScore"} available
// to the statement's sort and projection.
func compileWriteFilter(q bson.Doc, opts *query.Options) (writeFilter, error) {
	rest, clause, err := exec.SplitText(q)
	if err != nil {
		return writeFilter{}, err
	}
	if clause != nil {
		opts.TextScore = true
	}
	f, err := query.ParseFilter(rest, opts)
	return writeFilter{doc: rest, filter: f, opts: opts, text: clause}, err
}

// selectDocs returns the documents of coll (data tree t) that match wf,
// in _id or index order, or in the order of s if given, at most limit of
// them (0 = all). The documents are copied, so the caller may modify the
// collection while using them. The plan and what it examined are added to
// the statement's slow-operation figures and to serverStatus's
// metrics.queryExecutor.
func selectDocs(c *Ctx, tx *kv.Tx, coll *catalog.Collection, t *kv.Tree, wf *writeFilter, hint bson.Value, s *query.Sort, limit int) ([]match, error) {
	if wf.text != nil {
		return selectText(c, tx, coll, t, wf, s, limit)
	}
	filterDoc, filter := wf.doc, wf.filter
	if id, ok := filter.IDEquality(); ok {
		key := exec.DocKey(nil, id)
		v, err := t.Get(key)
		if err != nil {
			return nil, err
		}
		if v == nil {
			c.examined("IDHACK", 0, 0)
			return nil, nil
		}
		c.examined("IDHACK", 1, 1)
		m := match{key: key, doc: bson.Doc(append([]byte(nil), v...))}
		if ok, err := exec.Matches(filter, m.doc, &m.md); !ok || err != nil {
			return nil, err
		}
		return []match{m}, nil
	}
	var out []match
	p, _, err := c.Env.PlanQuery(c, tx, coll, filterDoc, filter, wf.opts, hint)
	if err != nil {
		return nil, err
	}
	if p != nil {
		var st exec.WalkState
		_, err := exec.WalkIndex(c, tx, coll, t, p, &st, func(idKey []byte, d bson.Doc) (bool, error) {
			var md query.MatchDetails
			if ok, err := exec.Matches(filter, d, &md); !ok || err != nil {
				return err == nil, err
			}
			out = append(out, match{key: append([]byte(nil), idKey...), doc: bson.Doc(append([]byte(nil), d...)), md: md})
			return s != nil || limit <= 0 || len(out) < limit, nil
		})
		c.examined(exec.PlanSummary(p, false), st.Keys, st.Docs)
		if err != nil {
			return nil, err
		}
		return orderMatches(c, out, s, limit)
	}
	cur := t.Cursor()
	n := 0
	defer func() { c.examined("COLLSCAN", 0, int64(n)) }()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if n++; n&255 == 0 {
			if err := c.Err(); err != nil {
				return nil, ctxErr(err)
			}
		}
		var md query.MatchDetails
		if ok, err := exec.Matches(filter, bson.Doc(v), &md); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		out = append(out, match{key: append([]byte(nil), k...), doc: bson.Doc(append([]byte(nil), v...)), md: md})
		if s == nil && limit > 0 && len(out) >= limit {
			break
		}
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	return orderMatches(c, out, s, limit)
}

// selectText is selectDocs for a filter with a $text clause: the text
// index gives the candidates and their scores, as for find (TEXT_MATCH),
// and a {$meta: "textScore"} sort orders by the score.
func selectText(c *Ctx, tx *kv.Tx, coll *catalog.Collection, t *kv.Tree, wf *writeFilter, s *query.Sort, limit int) ([]match, error) {
	tp, err := exec.PlanText(coll, &exec.FindSpec{Text: wf.text, FilterDoc: wf.doc})
	if err != nil || tp == nil {
		return nil, err
	}
	var st exec.WalkState
	hits, err := exec.RunText(c, tx, coll, t, tp, wf.filter, &st)
	c.examined("TEXT_MATCH", st.Keys, st.Docs)
	if err != nil {
		return nil, err
	}
	out := make([]match, len(hits))
	for i, h := range hits {
		out[i] = match{key: h.Key, doc: h.Doc, md: h.Md}
	}
	return orderMatches(c, out, s, limit)
}

// examined adds what a write's query stage examined to the statement's
// slow-operation figures and to metrics.queryExecutor.
func (c *Ctx) examined(plan string, keys, docs int64) {
	noteExamined(c, plan, keys, docs)
	c.Env.Counters.KeysExamined.Add(keys)
	c.Env.Counters.DocsExamined.Add(docs)
}

// orderMatches sorts matches by s (if any) and keeps the first limit.
func orderMatches(c *Ctx, out []match, s *query.Sort, limit int) ([]match, error) {
	if s != nil && s.Natural() == 0 {
		noteSorted(c, false)
		for i := range out {
			if err := s.Check(out[i].doc); err != nil {
				return nil, err
			}
		}
		keys := make([][]byte, len(out))
		for i := range out {
			keys[i] = s.KeyScore(nil, out[i].doc, out[i].md.TextScore)
		}
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return string(keys[idx[i]]) < string(keys[idx[j]]) })
		sorted := make([]match, len(out))
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
