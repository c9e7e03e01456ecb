package exec

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strconv"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/index/fts"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// ParseFilterText compiles a find or count filter into spec: a $text
// clause (at the top level or in a top-level $and) is taken out and kept
// in spec.text; the rest is the filter the planner and the matcher see.
func ParseFilterText(spec *FindSpec, filter bson.Doc, opts *query.Options) error {
	rest, clause, err := SplitText(filter)
	if err != nil {
		return err
	}
	if clause == nil {
		var or *TextOr
		if rest, clause, or, err = SplitTextOr(filter, opts); err != nil {
			return err
		}
		spec.TextOr = or
	}
	spec.Text = clause
	spec.FilterDoc = rest
	if clause != nil {
		spec.TextFilterDoc = filter
		opts.TextScore = true
	}
	spec.Filter, err = query.ParseFilter(rest, opts)
	return err
}

// SplitTextOr takes a $text out of one branch of a top-level $or (no
// other $text anywhere). The returned rest is the filter without the $or.
func SplitTextOr(filter bson.Doc, opts *query.Options) (bson.Doc, *TextClause, *TextOr, error) {
	orV, ok := filter.Lookup("$or")
	if !ok || orV.Type != bson.TypeArray {
		return filter, nil, nil, nil
	}
	var clause *TextClause
	var branchRest bson.Doc
	var others bson.Builder
	others.StartArray("$or")
	n := 0
	it := orV.Document().Iter()
	for it.Next() {
		b := it.Element().Value
		if b.Type == bson.TypeDocument {
			rest, c, err := SplitText(b.Document())
			if err != nil {
				return nil, nil, nil, err
			}
			if c != nil {
				if clause != nil {
					return nil, nil, nil, mongoerr.New(mongoerr.BadValue, "Too many text expressions")
				}
				clause, branchRest = c, rest
				continue
			}
		}
		others.AppendValue(bson.Index(n), b)
		n++
	}
	others.End()
	if clause == nil {
		return filter, nil, nil, nil
	}
	if n == 0 {
		// {$or: [{$text: ...}]}: the text query alone.
		return withoutKey(filter, "$or"), clause, nil, nil
	}
	rest := withoutKey(filter, "$or")
	to := &TextOr{OthersDoc: others.Finish()}
	var err error
	if to.Branch, err = query.ParseFilter(andOf(rest, branchRest), opts); err != nil {
		return nil, nil, nil, err
	}
	if to.Others, err = query.ParseFilter(andOf(rest, to.OthersDoc), opts); err != nil {
		return nil, nil, nil, err
	}
	return rest, clause, to, nil
}

// withoutKey returns d without its field key.
func withoutKey(d bson.Doc, key string) bson.Doc {
	var b bson.Builder
	it := d.Iter()
	for it.Next() {
		if it.Element().Key != key {
			b.AppendElement(it.Element())
		}
	}
	return b.Finish()
}

// andOf is {$and: [a, b]}, or the one that is not empty.
func andOf(a, b bson.Doc) bson.Doc {
	switch {
	case a.Len() == 0:
		return b
	case b.Len() == 0:
		return a
	}
	var x bson.Builder
	x.StartArray("$and")
	x.AppendDocument("0", a)
	x.AppendDocument("1", b)
	x.End()
	return x.Finish()
}

// SplitText removes the $text clause from filter.
func SplitText(filter bson.Doc) (bson.Doc, *TextClause, error) {
	var clause *TextClause
	found := false
	var walk func(d bson.Doc) (bson.Doc, error)
	walk = func(d bson.Doc) (bson.Doc, error) {
		if _, ok := d.Lookup("$text"); !ok {
			if _, ok := d.Lookup("$and"); !ok {
				return d, nil
			}
		}
		var b bson.Builder
		it := d.Iter()
		for it.Next() {
			e := it.Element()
			switch {
			case e.Key == "$text":
				if found {
					return nil, mongoerr.New(mongoerr.BadValue, "Too many text expressions")
				}
				found = true
				c, err := parseTextClause(e.Value)
				if err != nil {
					return nil, err
				}
				clause = c
			case e.Key == "$and" && e.Value.Type == bson.TypeArray:
				b.StartArray("$and")
				ai := e.Value.Document().Iter()
				for ai.Next() {
					sub := ai.Element()
					if sub.Value.Type == bson.TypeDocument {
						nd, err := walk(sub.Value.Document())
						if err != nil {
							return nil, err
						}
						b.AppendDocument(sub.Key, nd)
					} else {
						b.AppendElement(sub)
					}
				}
				b.End()
			default:
				b.AppendElement(e)
			}
		}
		return b.Finish(), nil
	}
	rest, err := walk(filter)
	if err != nil {
		return nil, nil, err
	}
	return rest, clause, nil
}

func parseTextClause(v bson.Value) (*TextClause, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.BadValue, "$text expects an object")
	}
	c := &TextClause{}
	n := 0
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "$search":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.BadValue, "$search needs a String")
			}
			c.Search = e.Value.StringValue()
		case "$language":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.BadValue, "$language needs a String")
			}
			c.Language = e.Value.StringValue()
		case "$caseSensitive":
			if e.Value.Type != bson.TypeBoolean {
				return nil, mongoerr.New(mongoerr.BadValue, "$caseSensitive needs a Boolean")
			}
			c.CaseSensitive = e.Value.Boolean()
		case "$diacriticSensitive":
			if e.Value.Type != bson.TypeBoolean {
				return nil, mongoerr.New(mongoerr.BadValue, "$diacriticSensitive needs a Boolean")
			}
			c.DiacriticSensitive = e.Value.Boolean()
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "extra fields in $text")
		}
		n++
	}
	if _, ok := v.Document().Lookup("$search"); !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "$search required")
	}
	return c, nil
}

// textPlan is how a $text query reads its collection: the text index,
// the parsed search and the prefix values pinned by the filter.
type textPlan struct {
	index  string
	spec   *index.Spec
	q      *fts.Query
	prefix []bson.Value
}

// PlanText finds the collection's text index and parses the search in the
// query's language.
func PlanText(coll *catalog.Collection, spec *FindSpec) (*textPlan, error) {
	if coll == nil {
		return nil, nil
	}
	for _, ix := range coll.Indexes {
		if !ix.Ready {
			continue
		}
		s, err := index.ParseCached(ix.Spec)
		if err != nil || s.Text == nil {
			continue
		}
		lang := s.Text.DefaultLanguage
		if spec.Text.Language != "" {
			l, ok := fts.LookupLanguage(spec.Text.Language)
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "unsupported language: \"%s\" for text index version 3", spec.Text.Language)
			}
			lang = l
		}
		tp := &textPlan{index: ix.Name, spec: s, q: fts.ParseQuery(spec.Text.Search, lang, spec.Text.CaseSensitive, spec.Text.DiacriticSensitive)}
		for _, f := range s.TextPrefixFields() {
			ivs, ok := index.FieldBounds(spec.FilterDoc, f.Path, false)
			if !ok || len(ivs) != 1 || !ivs[0].Point() {
				return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)")
			}
			tp.prefix = append(tp.prefix, ivs[0].Lo)
		}
		return tp, nil
	}
	return nil, mongoerr.New(mongoerr.IndexNotFound, "text index required for $text query")
}

// textHit is one document a text query returns, with its score.
type textHit struct {
	Key   []byte // the document's key in the data tree
	Doc   bson.Doc
	Score float64
	Md    query.MatchDetails
}

// RunText executes a text plan as MongoDB's TEXT_OR, FETCH and TEXT_MATCH
// stages do: it looks every term up in the index, adding up each
// document's entry scores, fetches each document once, checks phrases,
// negations and sensitivity, then the rest of the filter.
func RunText(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, tp *textPlan, filter *query.Filter, st *WalkState) ([]textHit, error) {
	it, err := tx.Tree(coll.IndexTree(tp.index))
	if err != nil {
		return nil, mongoerr.New(mongoerr.QueryPlanKilled, "query plan killed :: caused by :: index '%s' dropped", tp.index)
	}
	scores := map[string]float64{}
	cur := it.Cursor()
	n := 0
	for _, term := range tp.q.Terms {
		tk := tp.spec.TextTermKey(tp.prefix, term)
		for k, v := cur.Seek(tk); k != nil && bytes.HasPrefix(k, tk); k, v = cur.Next() {
			if n++; n&255 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, mongoerr.FromContext(err)
				}
			}
			st.Keys++
			sc, err := index.TextEntryScore(k, tk)
			if err != nil {
				return nil, err
			}
			scores[string(v)] += sc
		}
		if err := cur.Err(); err != nil {
			return nil, err
		}
	}
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var hits []textHit
	for _, id := range ids {
		if n++; n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, mongoerr.FromContext(err)
			}
		}
		raw, err := data.Get([]byte(id))
		if err != nil {
			return nil, err
		}
		if raw == nil {
			continue
		}
		st.Docs++
		doc := bson.Doc(raw)
		if ok, err := tp.spec.Text.Matches(tp.q, doc); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		h := textHit{Key: []byte(id), Score: scores[id]}
		if ok, err := Matches(filter, doc, &h.Md); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		h.Md.TextScore = h.Score
		h.Doc = slices.Clone(doc)
		hits = append(hits, h)
	}
	return hits, nil
}

// TextSource serves a $text query: the first Fill runs the plan in one
// snapshot and keeps the matching documents (sorted when the query
// sorts, by {$meta: "textScore"} or fields), later Fills serve them.
type TextSource struct {
	HeldHits[textHit]
	spec *FindSpec
	raw  bool
	Walk WalkState
}

func NewTextSource(env *Engine, spec *FindSpec, raw bool) *TextSource {
	s := &TextSource{spec: spec, raw: raw}
	s.Env, s.DB, s.Coll, s.Load = env, spec.DB, spec.Coll, s.run
	return s
}

func (s *TextSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	return s.fill(ctx, s.spec, s.raw, func(h *textHit) (bson.Doc, *query.MatchDetails) { return h.Doc, &h.Md }, emit)
}

func (s *TextSource) run(ctx context.Context, tx *kv.Tx, coll *catalog.Collection) ([]textHit, error) {
	tp, err := PlanText(coll, s.spec)
	if err != nil || tp == nil {
		return nil, err
	}
	data, err := DataTree(tx, coll)
	if err != nil {
		return nil, err
	}
	filter := s.spec.Filter
	if s.spec.TextOr != nil {
		filter = s.spec.TextOr.Branch
	}
	hits, err := RunText(ctx, tx, coll, data, tp, filter, &s.Walk)
	if err != nil {
		return nil, err
	}
	if to := s.spec.TextOr; to != nil {
		if hits, err = s.addOrBranches(ctx, tx, coll, data, to, hits); err != nil {
			return nil, err
		}
	}
	if srt := s.spec.Sort; srt != nil && srt.Natural() == 0 {
		keys := make([][]byte, len(hits))
		for i := range hits {
			if err := srt.Check(hits[i].Doc); err != nil {
				return nil, err
			}
			keys[i] = srt.KeyScore(nil, hits[i].Doc, hits[i].Score)
		}
		idx := make([]int, len(hits))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return bytes.Compare(keys[idx[a]], keys[idx[b]]) < 0 })
		sorted := make([]textHit, len(hits))
		for i, j := range idx {
			sorted[i] = hits[j]
		}
		hits = sorted
	}
	skip := min(s.spec.Skip, int64(len(hits)))
	return hits[skip:], nil
}

// addOrBranches adds to hits the documents the $or's other branches match
// (with no text score), read through their indexes.
func (s *TextSource) addOrBranches(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, to *TextOr, hits []textHit) ([]textHit, error) {
	p := OrPlan(coll, to.OthersDoc, s.spec.Opts)
	if p == nil {
		if one := ChooseIndex(coll, orBranchesFilter(to.OthersDoc), s.spec.Opts); one != nil {
			p = one
		}
	}
	if p == nil {
		return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well.")
	}
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		seen[string(h.Key)] = true
	}
	_, err := WalkIndex(ctx, tx, coll, data, p, &s.Walk, func(idKey []byte, d bson.Doc) (bool, error) {
		if seen[string(idKey)] {
			return true, nil
		}
		seen[string(idKey)] = true
		h := textHit{Key: slices.Clone(idKey)}
		if ok, err := Matches(to.Others, d, &h.Md); err != nil || !ok {
			return err == nil, err
		}
		h.Doc = slices.Clone(d)
		hits = append(hits, h)
		return true, nil
	})
	return hits, err
}

// orBranchesFilter is the one branch of {$or: [branch]}.
func orBranchesFilter(or bson.Doc) bson.Doc {
	v, _ := or.Lookup("$or")
	if it := v.Document().Iter(); it.Next() && it.Element().Value.Type == bson.TypeDocument {
		return it.Element().Value.Document()
	}
	return bson.EmptyDoc
}

// AppendTextStages writes a text plan's stages as MongoDB explains them:
// TEXT_MATCH over FETCH over TEXT_OR over one IXSCAN per term.
func AppendTextStages(r *bson.Builder, spec *FindSpec, coll *catalog.Collection) {
	tp, err := PlanText(coll, spec)
	if err != nil || tp == nil {
		r.AppendString("stage", "EOF")
		return
	}
	r.AppendString("stage", "TEXT_MATCH")
	r.StartDocument("indexPrefix")
	for i, f := range tp.spec.TextPrefixFields() {
		r.AppendValue(f.Path, tp.prefix[i])
	}
	r.End()
	r.AppendString("indexName", tp.index)
	r.StartDocument("parsedTextQuery")
	tp.q.AppendParsed(r)
	r.End()
	r.AppendInt32("textIndexVersion", 3)
	r.StartDocument("inputStage")
	r.AppendString("stage", "FETCH")
	if spec.FilterDoc.Len() > 0 {
		r.AppendDocument("filter", spec.FilterDoc)
	}
	r.StartDocument("inputStage")
	r.AppendString("stage", "TEXT_OR")
	r.StartArray("inputStages")
	for i, term := range tp.q.Terms {
		r.StartDocument(strconv.Itoa(i))
		r.AppendString("stage", "IXSCAN")
		r.AppendDocument("keyPattern", tp.spec.Key)
		r.AppendString("indexName", tp.index)
		r.AppendBool("isMultiKey", true)
		r.AppendString("direction", "backward")
		r.AppendString("term", term)
		r.End()
	}
	r.End()
	r.End()
	r.End()
}
