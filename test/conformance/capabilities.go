package conformance

// Capability probes: what the server under test lacks, decided once per
// runner by trying it, so that tests needing it are reported with the
// server's own answer instead of failing. Transactions and change streams
// are other issues' work (22 and 23): their tests still run, and a failure
// of one while the probe fails is reported as a skip naming the missing
// feature, so the counts show what passes already.

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

const probeDB = "cairn_conformance_probe"

func probeCapabilities(ctx context.Context, c *mongo.Client, s *serverInfo) {
	admin := c.Database("admin")
	if raw, err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: "*"}}).Raw(); err == nil {
		s.Params = cloneRaw(raw)
	}
	off := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}
	if err := admin.RunCommand(ctx, off).Err(); err != nil {
		s.FailPoints = fmt.Sprintf("%s: %v", noFailPoints, err)
	}
	if err := probeTransaction(ctx, c); err != nil {
		s.Transactions = fmt.Sprintf("transactions (issue 22): a one-insert transaction fails: %v", err)
	}
	coll := c.Database(probeDB).Collection("stream")
	if cs, err := coll.Watch(ctx, mongo.Pipeline{}); err != nil {
		s.ChangeStreams = fmt.Sprintf("change streams (issue 23): watch fails: %v", err)
	} else {
		_ = cs.Close(ctx)
	}
	_ = c.Database(probeDB).Drop(ctx)
}

func probeTransaction(ctx context.Context, c *mongo.Client) error {
	coll := c.Database(probeDB).Collection("txn")
	if err := c.Database(probeDB).CreateCollection(ctx, "txn"); err != nil {
		return fmt.Errorf("creating the probe collection: %w", err)
	}
	s, err := c.StartSession()
	if err != nil {
		return err
	}
	defer s.EndSession(ctx)
	if err := s.StartTransaction(); err != nil {
		return err
	}
	if _, err := coll.InsertOne(mongo.NewSessionContext(ctx, s), bson.D{{Key: "x", Value: 1}}); err != nil {
		_ = s.AbortTransaction(ctx)
		return err
	}
	return s.CommitTransaction(ctx)
}

// usesOps reports whether a test runs any of the named operations
// (including inside withTransaction callbacks).
func usesOps(ops []operation, names map[string]bool) bool {
	for _, op := range ops {
		if names[op.Name] {
			return true
		}
		if op.Name == "withTransaction" {
			var cb struct {
				Callback []operation `bson:"callback"`
			}
			if bson.Unmarshal(op.Arguments, &cb) == nil && usesOps(cb.Callback, names) {
				return true
			}
		}
	}
	return false
}

var (
	transactionOpNames  = map[string]bool{"startTransaction": true, "withTransaction": true, "commitTransaction": true, "abortTransaction": true}
	changeStreamOpNames = map[string]bool{"createChangeStream": true}
)

// missingFeature returns the reason a failed test is reported as skipped:
// it needs transactions or change streams and the server has none.
func (s serverInfo) missingFeature(suite string, t *specTest) string {
	txnSuite := suite == "transactions-unified" || suite == "transactions-convenient-api-unified"
	if s.Transactions != "" && (txnSuite || usesOps(t.Operations, transactionOpNames)) {
		return "needs " + s.Transactions
	}
	if s.ChangeStreams != "" && (suite == "change-streams-unified" || usesOps(t.Operations, changeStreamOpNames)) {
		return "needs " + s.ChangeStreams
	}
	return ""
}
