package exec

// Views: a view is a catalog entry {viewOn, pipeline} with no storage.
// Reading a view runs an aggregation on the collection it is defined on
// (following views of views, ResolveView) with the view's pipeline first:
// find, count and distinct are rewritten into an aggregate on the view
// (FindOnViewStages, CountOnViewStages), which the aggregate command
// expands. Writes and index builds on a view answer
// CommandNotSupportedOnView (166).

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// ViewDef is a view as create defines it.
type ViewDef struct {
	DB, Name, ViewOn string
	Pipeline         bson.Doc
	// Collation is the view's default collation in full (nil: simple).
	Collation bson.Doc
}

// ParseViewDef checks create's viewOn, pipeline (present: given) and
// collation (a zero Value: none) for the view db.name.
func ParseViewDef(db, name, viewOn string, pipeline bson.Doc, present bool, collation bson.Value) (*ViewDef, error) {
	v := &ViewDef{DB: db, Name: name, ViewOn: viewOn, Pipeline: pipeline}
	if viewOn == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "'viewOn' must be a non-empty string")
	}
	if collation.Type != 0 {
		if collation.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.collation' is the wrong type '%s', expected type 'object'", collation.Type)
		}
		coll, err := query.ParseCollation(collation.Document())
		if err != nil {
			return nil, err
		}
		if coll != nil {
			var b bson.Builder
			coll.AppendSpec(&b, "c")
			spec, _ := b.Finish().Lookup("c")
			v.Collation = spec.Document()
		}
	}
	if !present {
		v.Pipeline = bson.EmptyDoc
	}
	it := v.Pipeline.Iter()
	for it.Next() {
		s := it.Element().Value
		if s.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "'pipeline' must be an array of objects")
		}
		if st := s.Document().Iter(); st.Next() {
			switch st.Element().Key {
			case "$out", "$merge":
				return nil, mongoerr.New(mongoerr.OptionNotSupportedOnView, "%s cannot be used in a view definition", st.Element().Key)
			}
		}
	}
	if err := catalog.ValidateCollectionName(db, viewOn); err != nil {
		return nil, err
	}
	return v, nil
}

// CreateView creates the view in tx, after checking its collation against
// the view it rests on and the view graph, and logs it.
func (e *Engine) CreateView(tx *Tx, v *ViewDef) error {
	// A view on a view shares its collation, as in mongod.
	if base, err := catalog.Get(tx, v.DB, v.ViewOn); err != nil {
		return err
	} else if base != nil {
		if _, _, isView := base.View(); isView {
			have, _ := base.Options.Lookup("collation")
			if !bson.Equal(docValue(have.Document()), docValue(v.Collation)) {
				return mongoerr.New(mongoerr.OptionNotSupportedOnView, "View %s.%s has a different collation than the view it is defined on, %s.%s", v.DB, v.Name, v.DB, v.ViewOn)
			}
		}
	}
	if err := CheckViewGraph(tx, v.DB, v.Name, v.ViewOn, v.Pipeline); err != nil {
		return err
	}
	view, err := catalog.CreateView(tx, v.DB, v.Name, v.ViewOn, v.Pipeline, v.Collation)
	if err != nil {
		return err
	}
	return e.Oplog.Create(tx, view)
}

// docValue is d as a document value (nil: empty).
func docValue(d bson.Doc) bson.Value {
	if d == nil {
		d = bson.EmptyDoc
	}
	return bson.Value{Type: bson.TypeDocument, Data: d}
}

// Stage builds the pipeline stage {name: v}.
func Stage(name string, v bson.Value) bson.Doc {
	var b bson.Builder
	b.AppendValue(name, v)
	return b.Finish()
}

// FindOnViewStages are the stages a find (body) on a view adds after the
// view's pipeline: $match filter, $sort, $skip, $limit, $project.
func FindOnViewStages(body bson.Doc) []bson.Doc {
	var extra []bson.Doc
	if f, ok := body.Lookup("filter"); ok && f.Type == bson.TypeDocument && f.Document().Len() > 0 {
		extra = append(extra, Stage("$match", f))
	}
	if s, ok := body.Lookup("sort"); ok && s.Type == bson.TypeDocument && s.Document().Len() > 0 {
		extra = append(extra, Stage("$sort", s))
	}
	if s, ok := body.Lookup("skip"); ok && s.IsNumber() {
		if n, _ := s.AsInt64(); n > 0 {
			extra = append(extra, Stage("$skip", s))
		}
	}
	if l, ok := body.Lookup("limit"); ok && l.IsNumber() {
		if n, _ := l.AsInt64(); n > 0 {
			extra = append(extra, Stage("$limit", l))
		}
	}
	if p, ok := body.Lookup("projection"); ok && p.Type == bson.TypeDocument && p.Document().Len() > 0 {
		extra = append(extra, Stage("$project", p))
	}
	return extra
}

// CountOnViewStages are the stages a count (body) on a view adds after
// the view's pipeline: $match query, $skip, $limit (its absolute value)
// and {$count: "n"}.
func CountOnViewStages(body bson.Doc) []bson.Doc {
	var extra []bson.Doc
	if q, ok := body.Lookup("query"); ok && q.Type == bson.TypeDocument && q.Document().Len() > 0 {
		extra = append(extra, Stage("$match", q))
	}
	if s, ok := body.Lookup("skip"); ok && s.IsNumber() {
		if n, _ := s.AsInt64(); n > 0 {
			extra = append(extra, Stage("$skip", s))
		}
	}
	if l, ok := body.Lookup("limit"); ok && l.IsNumber() {
		if n, _ := l.AsInt64(); n != 0 {
			if n < 0 {
				n = -n
			}
			var b bson.Builder
			b.AppendInt64("$limit", n)
			extra = append(extra, b.Finish())
		}
	}
	var b bson.Builder
	b.AppendString("$count", "n")
	return append(extra, b.Finish())
}

// ViewAggregate is the aggregate command on view name that runs extra
// after the view's pipeline, with batchSize (a zero Value: none) and the
// fields of the original command body that carry over.
func ViewAggregate(name string, extra []bson.Doc, batch bson.Value, body bson.Doc) bson.Doc {
	var b bson.Builder
	b.AppendString("aggregate", name)
	b.StartArray("pipeline")
	for i, s := range extra {
		b.AppendDocument(bson.Index(i), s)
	}
	b.End()
	b.StartDocument("cursor")
	if batch.Type != 0 {
		b.AppendValue("batchSize", batch)
	}
	b.End()
	for _, k := range []string{"collation", "let", "maxTimeMS", "comment", "lsid", "$db"} {
		if v, ok := body.Lookup(k); ok {
			b.AppendValue(k, v)
		}
	}
	return b.Finish()
}
