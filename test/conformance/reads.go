package conformance

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"
)

// iterate drains a cursor into a result.
func iterate(ctx context.Context, cur *mongo.Cursor, err error) opResult {
	if err != nil {
		return opResult{iter: true, err: err}
	}
	defer cur.Close(ctx)
	var docs []bson.Raw
	for cur.Next(ctx) {
		docs = append(docs, cloneRaw(cur.Current))
	}
	return opResult{iter: true, docs: docs, err: cur.Err()}
}

func collAggregate(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	pipeline, opts := pipelineArg(a), aggregateOptions(a)
	cur, err := coll.Aggregate(ctx, pipeline, opts)
	return iterate(ctx, cur, err), nil
}

func dbAggregate(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	pipeline, opts := pipelineArg(a), aggregateOptions(a)
	cur, err := db.Aggregate(ctx, pipeline, opts)
	return iterate(ctx, cur, err), nil
}

func aggregateOptions(a *args) *options.AggregateOptionsBuilder {
	opts := options.Aggregate()
	if a.has("allowDiskUse") {
		opts.SetAllowDiskUse(a.bool("allowDiskUse"))
	}
	if a.has("batchSize") {
		opts.SetBatchSize(int32(a.int("batchSize")))
	}
	setBypass(opts, a)
	setSelectionOptions(opts, a)
	setLet(opts, a)
	rawData(a, opts, xoptions.SetInternalAggregateOptions)
	return opts
}

func findOptions(a *args) *options.FindOptionsBuilder {
	opts := options.Find()
	if a.has("allowDiskUse") {
		opts.SetAllowDiskUse(a.bool("allowDiskUse"))
	}
	if a.has("batchSize") {
		opts.SetBatchSize(int32(a.int("batchSize")))
	}
	setSelectionOptions(opts, a)
	setLet(opts, a)
	if a.has("limit") {
		opts.SetLimit(a.int("limit"))
	}
	if p, ok := a.doc("projection"); ok {
		opts.SetProjection(p)
	}
	if a.has("skip") {
		opts.SetSkip(a.int("skip"))
	}
	setSort(opts, a)
	if m, ok := a.doc("min"); ok {
		opts.SetMin(m)
	}
	if m, ok := a.doc("max"); ok {
		opts.SetMax(m)
	}
	if a.has("returnKey") {
		opts.SetReturnKey(a.bool("returnKey"))
	}
	if a.has("showRecordId") {
		opts.SetShowRecordID(a.bool("showRecordId"))
	}
	if a.has("noCursorTimeout") {
		opts.SetNoCursorTimeout(a.bool("noCursorTimeout"))
	}
	if a.has("allowPartialResults") {
		opts.SetAllowPartialResults(a.bool("allowPartialResults"))
	}
	rawData(a, opts, xoptions.SetInternalFindOptions)
	return opts
}

func find(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter, opts := filterArg(a), findOptions(a)
	cur, err := coll.Find(ctx, filter, opts)
	return iterate(ctx, cur, err), nil
}

func createFindCursor(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter, opts := filterArg(a), findOptions(a)
	cur, err := coll.Find(ctx, filter, opts)
	return opResult{cursor: cur, err: err}, nil
}

func findOne(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	opts := options.FindOne()
	setSelectionOptions(opts, a)
	if p, ok := a.doc("projection"); ok {
		opts.SetProjection(p)
	}
	if a.has("skip") {
		opts.SetSkip(a.int("skip"))
	}
	setSort(opts, a)
	rawData(a, opts, xoptions.SetInternalFindOneOptions)
	return singleDocResult(coll.FindOne(ctx, filter, opts)), nil
}

func countDocuments(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	opts := options.Count()
	setSelectionOptions(opts, a)
	if a.has("limit") {
		opts.SetLimit(a.int("limit"))
	}
	if a.has("skip") {
		opts.SetSkip(a.int("skip"))
	}
	rawData(a, opts, xoptions.SetInternalCountOptions)
	n, err := coll.CountDocuments(ctx, filter, opts)
	if err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(n, nil), nil
}

func estimatedDocumentCount(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	opts := options.EstimatedDocumentCount()
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	rawData(a, opts, xoptions.SetInternalEstimatedDocumentCountOptions)
	n, err := coll.EstimatedDocumentCount(ctx, opts)
	if err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(n, nil), nil
}

// count is the CRUD spec's deprecated Collection.count, which the Go driver
// v2 no longer has: it sends the count command as such a driver would.
func count(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	cmd := bson.D{{Key: "count", Value: coll.Name()}, {Key: "query", Value: filterArg(a)}}
	if a.has("skip") {
		cmd = append(cmd, bson.E{Key: "skip", Value: a.int("skip")})
	}
	if a.has("limit") {
		cmd = append(cmd, bson.E{Key: "limit", Value: a.int("limit")})
	}
	if c, ok := a.doc("collation"); ok {
		cmd = append(cmd, bson.E{Key: "collation", Value: c})
	}
	if h, ok := hintArg(a); ok {
		cmd = append(cmd, bson.E{Key: "hint", Value: h})
	}
	if c, ok := commentArg(a); ok {
		cmd = append(cmd, bson.E{Key: "comment", Value: c})
	}
	// Like the drivers, send rawData only to servers that know it (8.2+).
	if raw := a.bool("rawData"); raw && compareVersions(em.server.Version, [3]int{8, 2, 0}) >= 0 {
		cmd = append(cmd, bson.E{Key: "rawData", Value: raw})
	}
	var reply struct {
		N int64 `bson:"n"`
	}
	if err := coll.Database().RunCommand(ctx, cmd).Decode(&reply); err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(reply.N, nil), nil
}

func distinct(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	field, filter := a.str("fieldName"), filterArg(a)
	opts := options.Distinct()
	setSelectionOptions(opts, a)
	rawData(a, opts, xoptions.SetInternalDistinctOptions)
	arr, err := coll.Distinct(ctx, field, filter, opts).Raw()
	if err != nil {
		return opResult{err: err}, nil
	}
	return opResult{value: bson.RawValue{Type: bson.TypeArray, Value: arr}}, nil
}
