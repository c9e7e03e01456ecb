package conformance

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// searchIndexModel reads a {definition, name, type} model.
func searchIndexModel(d bson.Raw) (mongo.SearchIndexModel, error) {
	a := newArgs(d)
	def, _ := a.doc("definition")
	opts := options.SearchIndexes()
	if a.has("name") {
		opts.SetName(a.str("name"))
	}
	if a.has("type") {
		opts.SetType(a.str("type"))
	}
	if err := a.done(); err != nil {
		return mongo.SearchIndexModel{}, fmt.Errorf("search index model: %w", err)
	}
	return mongo.SearchIndexModel{Definition: def, Options: opts}, nil
}

func createSearchIndex(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	d, _ := a.doc("model")
	m, err := searchIndexModel(d)
	if err != nil {
		return opResult{}, err
	}
	name, err := coll.SearchIndexes().CreateOne(ctx, m)
	if err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(name, nil), nil
}

func createSearchIndexes(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	var models []mongo.SearchIndexModel
	for _, d := range a.docs("models") {
		m, err := searchIndexModel(d)
		if err != nil {
			return opResult{}, err
		}
		models = append(models, m)
	}
	names, err := coll.SearchIndexes().CreateMany(ctx, models)
	if err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(names, nil), nil
}

func dropSearchIndex(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: coll.SearchIndexes().DropOne(ctx, a.str("name"))}, nil
}

func updateSearchIndex(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	def, _ := a.doc("definition")
	return opResult{err: coll.SearchIndexes().UpdateOne(ctx, a.str("name"), def)}, nil
}

func listSearchIndexes(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	opts := options.SearchIndexes()
	if a.has("name") {
		opts.SetName(a.str("name"))
	}
	lo := &options.ListSearchIndexesOptionsBuilder{}
	if d, ok := a.doc("aggregationOptions"); ok {
		ao := newArgs(d)
		agg := &options.AggregateOptions{}
		if ao.has("batchSize") {
			bs := int32(ao.int("batchSize"))
			agg.BatchSize = &bs
		}
		if err := ao.done(); err != nil {
			return opResult{}, skipf("listSearchIndexes aggregationOptions: %v", err)
		}
		lo.Opts = append(lo.Opts, func(o *options.ListSearchIndexesOptions) error {
			o.AggregateOptions = agg
			return nil
		})
	}
	cur, err := coll.SearchIndexes().List(ctx, opts, lo)
	return iterate(ctx, cur, err), nil
}
