package conformance

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"
)

// opFunc runs one operation. The returned error is the runner's own (bad or
// unsupported arguments, skips); the operation's error is in opResult.err.
type opFunc func(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error)

// Operations by the kind of object they act on.
var (
	collectionOps = map[string]opFunc{
		"aggregate":              collAggregate,
		"bulkWrite":              bulkWrite,
		"count":                  count,
		"countDocuments":         countDocuments,
		"createFindCursor":       createFindCursor,
		"createIndex":            createIndex,
		"deleteMany":             deleteMany,
		"deleteOne":              deleteOne,
		"distinct":               distinct,
		"drop":                   dropColl,
		"estimatedDocumentCount": estimatedDocumentCount,
		"find":                   find,
		"findOne":                findOne,
		"findOneAndDelete":       findOneAndDelete,
		"findOneAndReplace":      findOneAndReplace,
		"findOneAndUpdate":       findOneAndUpdate,
		"insertMany":             insertMany,
		"insertOne":              insertOne,
		"replaceOne":             replaceOne,
		"updateMany":             updateMany,
		"updateOne":              updateOne,
	}
	databaseOps = map[string]opFunc{
		"aggregate":           dbAggregate,
		"createCollection":    createCollection,
		"dropCollection":      dropCollection,
		"listCollections":     listCollections,
		"listCollectionNames": listCollectionNames,
		"modifyCollection":    modifyCollection,
		"runCommand":          runCommand,
	}
	clientOps = map[string]opFunc{
		"clientBulkWrite": clientBulkWrite,
	}
	cursorOps = map[string]opFunc{
		"iterateUntilDocumentOrError": iterateUntilDocumentOrError,
		"iterateOnce":                 iterateUntilDocumentOrError,
		"close":                       closeCursor,
	}
)

// lookupOp finds the function for an operation on the named object. Objects
// the test has not created yet (saved cursors) are looked up by name.
func lookupOp(em *entityMap, op operation) (opFunc, error) {
	if op.Object == "testRunner" {
		switch op.Name {
		case "failPoint", "targetedFailPoint":
			return nil, skipf("needs fail points (%s)", op.Name)
		}
		return nil, skipf("test runner operation %s", op.Name)
	}
	var table map[string]opFunc
	switch em.kind(op.Object) {
	case "collection":
		table = collectionOps
	case "database":
		table = databaseOps
	case "client":
		table = clientOps
	case "cursor":
		table = cursorOps
	case "session":
		return nil, skipf("session operation %s", op.Name)
	default:
		return nil, fmt.Errorf("operation %s on unknown entity %q", op.Name, op.Object)
	}
	f, ok := table[op.Name]
	if !ok {
		return nil, skipf("operation %s on a %s", op.Name, em.kind(op.Object))
	}
	return f, nil
}

// runOperation executes one operation with its arguments.
func runOperation(ctx context.Context, em *entityMap, op operation) (opResult, error) {
	f, err := lookupOp(em, op)
	if err != nil {
		return opResult{}, err
	}
	a := newArgs(op.Arguments)
	if a.has("session") {
		s, err := em.session(a.str("session"))
		if err != nil {
			return opResult{}, err
		}
		ctx = mongo.NewSessionContext(ctx, s)
	}
	for _, k := range []string{"timeoutMS", "maxTimeMS"} {
		if a.has(k) {
			return opResult{}, skipf("argument %s (not in the Go driver v2 public API)", k)
		}
	}
	res, err := f(ctx, em, op.Object, a)
	if err != nil {
		return res, err
	}
	if err := a.done(); err != nil {
		return res, fmt.Errorf("%s: %w", op.Name, err)
	}
	return res, nil
}

// filterArg returns the filter argument, or an empty document.
func filterArg(a *args) bson.Raw {
	if d, ok := a.doc("filter"); ok {
		return d
	}
	return emptyDoc
}

var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

func hintArg(a *args) (any, bool) {
	v := a.raw("hint")
	switch v.Type {
	case bson.TypeString:
		return v.StringValue(), true
	case bson.TypeEmbeddedDocument:
		return v.Document(), true
	}
	return nil, false
}

func collationArg(a *args) (*options.Collation, bool) {
	d, ok := a.doc("collation")
	if !ok {
		return nil, false
	}
	c := newArgs(d)
	col := &options.Collation{
		Locale:          c.str("locale"),
		CaseLevel:       c.bool("caseLevel"),
		CaseFirst:       c.str("caseFirst"),
		Strength:        int(c.int("strength")),
		NumericOrdering: c.bool("numericOrdering"),
		Alternate:       c.str("alternate"),
		MaxVariable:     c.str("maxVariable"),
		Normalization:   c.bool("normalization"),
		Backwards:       c.bool("backwards"),
	}
	if err := c.done(); err != nil && a.err == nil {
		a.err = fmt.Errorf("collation: %w", err)
	}
	return col, true
}

func commentArg(a *args) (bson.RawValue, bool) {
	v := a.raw("comment")
	return v, !isMissing(v)
}

func pipelineArg(a *args) []bson.Raw {
	p := a.docs("pipeline")
	if p == nil {
		p = []bson.Raw{}
	}
	return p
}

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
	if a.has("bypassDocumentValidation") {
		opts.SetBypassDocumentValidation(a.bool("bypassDocumentValidation"))
	}
	if c, ok := collationArg(a); ok {
		opts.SetCollation(c)
	}
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if h, ok := hintArg(a); ok {
		opts.SetHint(h)
	}
	if l, ok := a.doc("let"); ok {
		opts.SetLet(l)
	}
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
	if c, ok := collationArg(a); ok {
		opts.SetCollation(c)
	}
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if h, ok := hintArg(a); ok {
		opts.SetHint(h)
	}
	if l, ok := a.doc("let"); ok {
		opts.SetLet(l)
	}
	if a.has("limit") {
		opts.SetLimit(a.int("limit"))
	}
	if p, ok := a.doc("projection"); ok {
		opts.SetProjection(p)
	}
	if a.has("skip") {
		opts.SetSkip(a.int("skip"))
	}
	if s, ok := a.doc("sort"); ok {
		opts.SetSort(s)
	}
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
	if c, ok := collationArg(a); ok {
		opts.SetCollation(c)
	}
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if h, ok := hintArg(a); ok {
		opts.SetHint(h)
	}
	if p, ok := a.doc("projection"); ok {
		opts.SetProjection(p)
	}
	if a.has("skip") {
		opts.SetSkip(a.int("skip"))
	}
	if s, ok := a.doc("sort"); ok {
		opts.SetSort(s)
	}
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
	if c, ok := collationArg(a); ok {
		opts.SetCollation(c)
	}
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if h, ok := hintArg(a); ok {
		opts.SetHint(h)
	}
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
	if c, ok := collationArg(a); ok {
		opts.SetCollation(c)
	}
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if h, ok := hintArg(a); ok {
		opts.SetHint(h)
	}
	rawData(a, opts, xoptions.SetInternalDistinctOptions)
	arr, err := coll.Distinct(ctx, field, filter, opts).Raw()
	if err != nil {
		return opResult{err: err}, nil
	}
	return opResult{value: bson.RawValue{Type: bson.TypeArray, Value: arr}}, nil
}

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
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys, Options: io})
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
	if v, ok := a.doc("validator"); ok {
		opts.SetValidator(v)
	}
	return opResult{err: db.CreateCollection(ctx, name, opts)}, nil
}

func modifyCollection(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	db, err := em.database(obj)
	if err != nil {
		return opResult{}, err
	}
	cmd := bson.D{{Key: "collMod", Value: a.str("collection")}}
	for _, k := range []string{"validator", "validationLevel", "validationAction", "index", "expireAfterSeconds"} {
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
	if rp, ok := a.doc("readPreference"); ok {
		if _, err := parseReadPref(rp); err != nil {
			return opResult{}, err
		}
	}
	raw, err := db.RunCommand(ctx, cmd).Raw()
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

func closeCursor(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	cur, err := cursorEntity(em, obj)
	if err != nil {
		return opResult{}, err
	}
	_ = cur.Close(ctx) // errors from killCursors are suppressed by the format
	return opResult{}, nil
}

// returnDocumentArg parses returnDocument ("Before" or "After").
func returnDocumentArg(a *args) (options.ReturnDocument, bool, error) {
	if !a.has("returnDocument") {
		return 0, false, nil
	}
	switch strings.ToLower(a.str("returnDocument")) {
	case "before":
		return options.Before, true, nil
	case "after":
		return options.After, true, nil
	}
	return 0, false, fmt.Errorf("bad returnDocument %s", a.raw("returnDocument"))
}
