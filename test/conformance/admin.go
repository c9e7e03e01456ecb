package conformance

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
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

// failPoint configures a server fail point through a client entity; it is
// turned off when the test ends. A server without configureFailPoint makes
// the test skip.
func failPoint(ctx context.Context, em *entityMap, _ string, a *args) (opResult, error) {
	c, err := em.client(a.str("client"))
	if err != nil {
		return opResult{}, err
	}
	fp, ok := a.doc("failPoint")
	if !ok {
		return opResult{}, fmt.Errorf("failPoint without a failPoint document")
	}
	name, _ := fp.Lookup("configureFailPoint").StringValueOK()
	err = c.client.Database("admin").RunCommand(ctx, fp).Err()
	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code == 59 { // CommandNotFound
		return opResult{}, needsf("fail points (the server has no configureFailPoint)")
	}
	if err != nil {
		return opResult{}, fmt.Errorf("configureFailPoint %s: %w", name, err)
	}
	em.failPoints = append(em.failPoints, failPointRef{client: c, name: name})
	return opResult{}, nil
}
