package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// testRunnerOps are the operations on the "testRunner" object.
var testRunnerOps map[string]opFunc

func init() {
	testRunnerOps = map[string]opFunc{
		"failPoint":                            failPoint,
		"targetedFailPoint":                    targetedFailPoint,
		"createEntities":                       createEntitiesOp,
		"assertSessionPinned":                  assertSessionPinned(true),
		"assertSessionUnpinned":                assertSessionPinned(false),
		"assertSessionTransactionState":        assertSessionTransactionState,
		"assertSessionDirty":                   assertSessionDirty(true),
		"assertSessionNotDirty":                assertSessionDirty(false),
		"assertSameLsidOnLastTwoCommands":      assertLsidOnLastTwoCommands(true),
		"assertDifferentLsidOnLastTwoCommands": assertLsidOnLastTwoCommands(false),
		"assertCollectionExists":               assertCollectionExists(true),
		"assertCollectionNotExists":            assertCollectionExists(false),
		"assertIndexExists":                    assertIndexExists(true),
		"assertIndexNotExists":                 assertIndexExists(false),
		"assertNumberConnectionsCheckedOut":    assertNumberConnectionsCheckedOut,
	}
}

// noFailPoints is the skip reason of tests that need fail points on a server
// without them.
const noFailPoints = "fail points: the server has no configureFailPoint"

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
	return opResult{}, em.configureFailPoint(ctx, c, fp)
}

// targetedFailPoint configures a fail point on the server a session is
// pinned to: with one server, that server, through the session's client.
func targetedFailPoint(ctx context.Context, em *entityMap, _ string, a *args) (opResult, error) {
	se, err := em.session(a.str("session"))
	if err != nil {
		return opResult{}, err
	}
	fp, ok := a.doc("failPoint")
	if !ok {
		return opResult{}, fmt.Errorf("targetedFailPoint without a failPoint document")
	}
	if driverSession(se.s).PinnedServerAddr == nil {
		return opResult{}, fmt.Errorf("targetedFailPoint: session %s is not pinned to a server", a.str("session"))
	}
	return opResult{}, em.configureFailPoint(ctx, se.client, fp)
}

func (em *entityMap) configureFailPoint(ctx context.Context, c *clientEntity, fp bson.Raw) error {
	if em.server.FailPoints != "" {
		return needsf("%s", em.server.FailPoints)
	}
	name, _ := fp.Lookup("configureFailPoint").StringValueOK()
	err := c.client.Database("admin").RunCommand(ctx, fp).Err()
	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code == 59 { // CommandNotFound
		return needsf("%s", noFailPoints)
	}
	if err != nil {
		return fmt.Errorf("configureFailPoint %s: %w", name, err)
	}
	em.failPoints = append(em.failPoints, failPointRef{client: c, name: name})
	return nil
}

func createEntitiesOp(ctx context.Context, em *entityMap, _ string, a *args) (opResult, error) {
	for _, e := range a.docs("entities") {
		if err := em.createEntity(ctx, em.baseURI, e); err != nil {
			return opResult{}, fmt.Errorf("createEntities: %w", err)
		}
	}
	return opResult{}, nil
}

func assertCollectionExists(want bool) opFunc {
	return func(ctx context.Context, em *entityMap, _ string, a *args) (opResult, error) {
		db, coll := a.str("databaseName"), a.str("collectionName")
		names, err := em.internal.Database(db).ListCollectionNames(ctx, bson.D{{Key: "name", Value: coll}})
		if err != nil {
			return opResult{}, fmt.Errorf("listing collections of %s: %w", db, err)
		}
		if got := slices.Contains(names, coll); got != want {
			return opResult{}, fmt.Errorf("collection %s.%s exists: %v, want %v", db, coll, got, want)
		}
		return opResult{}, nil
	}
}

func assertIndexExists(want bool) opFunc {
	return func(ctx context.Context, em *entityMap, _ string, a *args) (opResult, error) {
		db, coll, index := a.str("databaseName"), a.str("collectionName"), a.str("indexName")
		cur, err := em.internal.Database(db).Collection(coll).Indexes().List(ctx)
		got := false
		if err == nil {
			var specs []struct {
				Name string `bson:"name"`
			}
			err = cur.All(ctx, &specs)
			for _, s := range specs {
				got = got || s.Name == index
			}
		}
		var ce mongo.CommandError
		if errors.As(err, &ce) && ce.Code == 26 { // NamespaceNotFound: no collection, no index
			err = nil
		}
		if err != nil {
			return opResult{}, fmt.Errorf("listing indexes of %s.%s: %w", db, coll, err)
		}
		if got != want {
			return opResult{}, fmt.Errorf("index %s on %s.%s exists: %v, want %v", index, db, coll, got, want)
		}
		return opResult{}, nil
	}
}

func assertNumberConnectionsCheckedOut(_ context.Context, em *entityMap, _ string, a *args) (opResult, error) {
	c, err := em.client(a.str("client"))
	if err != nil {
		return opResult{}, err
	}
	want := int(a.int("connections"))
	c.mu.Lock()
	got := c.checkedOut
	c.mu.Unlock()
	if got != want {
		return opResult{}, fmt.Errorf("client %s has %d connections checked out, want %d", c.id, got, want)
	}
	return opResult{}, nil
}
