package conformance

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
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
		"createChangeStream":     createChangeStream,
		"createIndex":            createIndex,
		"createSearchIndex":      createSearchIndex,
		"createSearchIndexes":    createSearchIndexes,
		"dropIndex":              dropIndex,
		"dropIndexes":            dropIndexes,
		"dropSearchIndex":        dropSearchIndex,
		"listIndexes":            listIndexes,
		"listIndexNames":         listIndexNames,
		"listSearchIndexes":      listSearchIndexes,
		"rename":                 renameColl,
		"updateSearchIndex":      updateSearchIndex,
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
		"aggregate":             dbAggregate,
		"createChangeStream":    createChangeStream,
		"createCollection":      createCollection,
		"createCommandCursor":   createCommandCursor,
		"listCollectionObjects": listCollections,
		"runCursorCommand":      runCursorCommand,
		"dropCollection":        dropCollection,
		"listCollections":       listCollections,
		"listCollectionNames":   listCollectionNames,
		"modifyCollection":      modifyCollection,
		"runCommand":            runCommand,
	}
	clientOps = map[string]opFunc{
		"clientBulkWrite":     clientBulkWrite,
		"createChangeStream":  createChangeStream,
		"dropDatabase":        dropDatabase,
		"listDatabases":       listDatabases,
		"listDatabaseNames":   listDatabaseNames,
		"listDatabaseObjects": listDatabases,
	}
	cursorOps = map[string]opFunc{
		"iterateUntilDocumentOrError": iterateUntilDocumentOrError,
		"iterateOnce":                 iterateCursorOnce,
		"close":                       closeCursor,
	}
)

// lookupOp finds the function for an operation on the named object. Objects
// the test has not created yet (saved cursors) are looked up by name.
func lookupOp(em *entityMap, op operation) (opFunc, error) {
	var table map[string]opFunc
	kind := em.kind(op.Object)
	if op.Object == "testRunner" {
		kind = "testRunner"
	}
	switch kind {
	case "testRunner":
		table = testRunnerOps
	case "collection":
		table = collectionOps
	case "database":
		table = databaseOps
	case "client":
		table = clientOps
	case "cursor":
		table = cursorOps
	case "changeStream":
		table = changeStreamOps
	case "session":
		table = sessionOps
	case "bucket":
		table = bucketOps
	default:
		return nil, fmt.Errorf("operation %s on unknown entity %q", op.Name, op.Object)
	}
	f, ok := table[op.Name]
	if !ok {
		if kind == "testRunner" {
			return nil, skipf("test runner operation %s", op.Name)
		}
		return nil, skipf("operation %s on a %s", op.Name, kind)
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
	if a.has("session") && op.Object != "testRunner" {
		s, err := em.session(a.str("session"))
		if err != nil {
			return opResult{}, err
		}
		ctx = mongo.NewSessionContext(ctx, s.s)
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
