package conformance

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"
)

func createIndex(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	keys, _ := a.doc("keys")
	io := options.Index()
	if a.has("unique") {
		io.SetUnique(a.bool("unique"))
	}
	if a.has("name") {
		io.SetName(a.str("name"))
	}
	if a.has("sparse") {
		io.SetSparse(a.bool("sparse"))
	}
	cio := options.CreateIndexes()
	rawData(a, cio, xoptions.SetInternalCreateIndexesOptions)
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys, Options: io}, cio)
	if err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(name, nil), nil
}

func dropColl(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: coll.Drop(ctx)}, nil
}

func dropCollection(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: db.Collection(a.str("collection")).Drop(ctx)}, nil
}

func createCollection(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	name := a.str("collection")
	if a.has("viewOn") {
		viewOn, pipeline := a.str("viewOn"), pipelineArg(a)
		return opResult{err: db.CreateView(ctx, name, viewOn, pipeline)}, nil
	}
	opts := options.CreateCollection()
	if a.has("capped") {
		opts.SetCapped(a.bool("capped"))
	}
	if a.has("size") {
		opts.SetSizeInBytes(a.int("size"))
	}
	if a.has("max") {
		opts.SetMaxDocuments(a.int("max"))
	}
	if v, ok := a.doc("validator"); ok {
		opts.SetValidator(v)
	}
	if v, ok := a.doc("changeStreamPreAndPostImages"); ok {
		opts.SetChangeStreamPreAndPostImages(v)
	}
	if v, ok := a.doc("clusteredIndex"); ok {
		opts.SetClusteredIndex(v)
	}
	if a.has("expireAfterSeconds") {
		opts.SetExpireAfterSeconds(a.int("expireAfterSeconds"))
	}
	if v, ok := a.doc("timeseries"); ok {
		ts := newArgs(v)
		to := options.TimeSeries().SetTimeField(ts.str("timeField"))
		if ts.has("metaField") {
			to.SetMetaField(ts.str("metaField"))
		}
		if ts.has("granularity") {
			to.SetGranularity(ts.str("granularity"))
		}
		if ts.has("bucketMaxSpanSeconds") {
			to.SetBucketMaxSpan(time.Duration(ts.int("bucketMaxSpanSeconds")) * time.Second)
		}
		if ts.has("bucketRoundingSeconds") {
			to.SetBucketRounding(time.Duration(ts.int("bucketRoundingSeconds")) * time.Second)
		}
		if err := ts.done(); err != nil {
			return opResult{}, skipf("timeseries option: %v", err)
		}
		opts.SetTimeSeriesOptions(to)
	}
	if err := db.CreateCollection(ctx, name, opts); err != nil {
		return opResult{err: err}, nil
	}
	// Saved with saveResultAsEntity, the result is the new collection.
	return opResult{coll: db.Collection(name)}, nil
}

func modifyCollection(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	cmd := bson.D{{Key: "collMod", Value: a.str("collection")}}
	for _, k := range []string{"validator", "validationLevel", "validationAction", "index", "expireAfterSeconds",
		"changeStreamPreAndPostImages"} {
		if v := a.raw(k); !isMissing(v) {
			cmd = append(cmd, bson.E{Key: k, Value: v})
		}
	}
	return opResult{err: db.RunCommand(ctx, cmd).Err()}, nil
}

func runCommand(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	cmd, ok := a.doc("command")
	if !ok {
		return opResult{}, fmt.Errorf("runCommand without a command")
	}
	a.str("commandName")
	opts := options.RunCmd()
	if d, ok := a.doc("readPreference"); ok {
		rp, err := parseReadPref(d)
		if err != nil {
			return opResult{}, err
		}
		opts.SetReadPreference(rp)
	}
	raw, err := db.RunCommand(ctx, cmd, opts).Raw()
	if err != nil {
		return opResult{err: err}, nil
	}
	return opResult{value: docValue(raw)}, nil
}

func listCollections(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	opts := options.ListCollections()
	if a.has("nameOnly") {
		opts.SetNameOnly(a.bool("nameOnly"))
	}
	if a.has("batchSize") {
		opts.SetBatchSize(int32(a.int("batchSize")))
	}
	rawData(a, opts, xoptions.SetInternalListCollectionsOptions)
	cur, err := db.ListCollections(ctx, filterArg(a), opts)
	return iterate(ctx, cur, err), nil
}

func listCollectionNames(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	names, err := db.ListCollectionNames(ctx, filterArg(a))
	if err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(names, nil), nil
}

func cursorEntity(em *entityMap, obj string) (*mongo.Cursor, error) {
	if c, ok := em.cursors[obj]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("no cursor entity %q", obj)
}

func iterateUntilDocumentOrError(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	cur, err := cursorEntity(em, obj)
	if err != nil {
		return opResult{}, err
	}
	if cur.Next(ctx) {
		return opResult{value: docValue(cloneRaw(cur.Current))}, nil
	}
	if err := cur.Err(); err != nil {
		return opResult{err: err}, nil
	}
	return opResult{err: fmt.Errorf("cursor exhausted")}, nil
}

// iterateCursorOnce is the format's iterateOnce: the next document of the
// batch, or one getMore when the batch is used up (a tailable cursor's
// empty batch leaves it open and yields nothing, not an error).
func iterateCursorOnce(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	cur, err := cursorEntity(em, obj)
	if err != nil {
		return opResult{}, err
	}
	if cur.TryNext(ctx) {
		return opResult{value: docValue(cloneRaw(cur.Current))}, nil
	}
	return opResult{err: cur.Err()}, nil
}

func closeCursor(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	cur, err := cursorEntity(em, obj)
	if err != nil {
		return opResult{}, err
	}
	_ = cur.Close(ctx) // errors from killCursors are suppressed by the format
	return opResult{}, nil
}

// createCommandCursor runs a cursor-returning command and keeps the cursor;
// runCursorCommand iterates it to the end.
func createCommandCursor(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	cur, err := commandCursor(ctx, em, obj, a)
	return opResult{cursor: cur, err: err}, nil
}

func runCursorCommand(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	cur, err := commandCursor(ctx, em, obj, a)
	return iterate(ctx, cur, err), nil
}

func commandCursor(ctx context.Context, em *entityMap, obj string, a *args) (*mongo.Cursor, error) {
	db, err := em.database(obj)
	if err != nil {
		return nil, err
	}
	cmd, ok := a.doc("command")
	if !ok {
		return nil, fmt.Errorf("a cursor command without a command")
	}
	a.str("commandName")
	// The command itself asks for a tailable cursor; the type only tells
	// the driver how to run its getMores, and a tailable cursor's are
	// ordinary ones (iterateOnce leaves it open on an empty batch). A
	// tailableAwait cursor's would carry maxAwaitTimeMS: no corpus test
	// has one, and the runner does not claim it.
	switch ct := a.str("cursorType"); ct {
	case "", "nonTailable", "tailable":
	default:
		return nil, skipf("cursorType %s (the Go driver's RunCommandCursor has no cursor type)", ct)
	}
	opts := options.RunCmd()
	if d, ok := a.doc("readPreference"); ok {
		rp, err := parseReadPref(d)
		if err != nil {
			return nil, err
		}
		opts.SetReadPreference(rp)
	}
	cur, err := db.RunCommandCursor(ctx, cmd, opts)
	if err != nil {
		return nil, err
	}
	if a.has("batchSize") {
		cur.SetBatchSize(int32(a.int("batchSize")))
	}
	if c, ok := commentArg(a); ok {
		cur.SetComment(c)
	}
	return cur, nil
}

func dropIndex(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	opts := options.DropIndexes()
	rawData(a, opts, xoptions.SetInternalDropIndexesOptions)
	return opResult{err: coll.Indexes().DropOne(ctx, a.str("name"), opts)}, nil
}

func dropIndexes(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: coll.Indexes().DropAll(ctx)}, nil
}

func listIndexes(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	opts := options.ListIndexes()
	if a.has("batchSize") {
		opts.SetBatchSize(int32(a.int("batchSize")))
	}
	rawData(a, opts, xoptions.SetInternalListIndexesOptions)
	cur, err := coll.Indexes().List(ctx, opts)
	return iterate(ctx, cur, err), nil
}

func listIndexNames(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		return opResult{err: err}, nil
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return valueResult(names, nil), nil
}

// renameColl is Collection.rename: renameCollection on admin.
func renameColl(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	db := coll.Database()
	cmd := bson.D{{Key: "renameCollection", Value: db.Name() + "." + coll.Name()},
		{Key: "to", Value: db.Name() + "." + a.str("to")}}
	if a.has("dropTarget") {
		cmd = append(cmd, bson.E{Key: "dropTarget", Value: a.bool("dropTarget")})
	}
	return opResult{err: db.Client().Database("admin").RunCommand(ctx, cmd).Err()}, nil
}

func listDatabases(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	c, err := em.client(obj)
	if err != nil {
		return opResult{}, err
	}
	res, err := c.client.ListDatabases(ctx, filterArg(a))
	if err != nil {
		return opResult{iter: true, err: err}, nil
	}
	docs := make([]bson.Raw, 0, len(res.Databases))
	for _, d := range res.Databases {
		docs = append(docs, mustDoc(bson.D{{Key: "name", Value: d.Name}, {Key: "sizeOnDisk", Value: d.SizeOnDisk},
			{Key: "empty", Value: d.Empty}}))
	}
	return opResult{iter: true, docs: docs}, nil
}

func listDatabaseNames(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	c, err := em.client(obj)
	if err != nil {
		return opResult{}, err
	}
	names, err := c.client.ListDatabaseNames(ctx, filterArg(a))
	if err != nil {
		return opResult{err: err}, nil
	}
	return valueResult(names, nil), nil
}

func dropDatabase(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	c, err := em.client(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: c.client.Database(a.str("database")).Drop(ctx)}, nil
}

func mustDoc(d bson.D) bson.Raw {
	raw, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return raw
}
