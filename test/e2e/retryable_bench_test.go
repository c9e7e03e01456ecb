package e2e

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// BenchmarkRetryableInsert measures the cost of a retryable write's
// record (config.transactions, the statement history) per one-document
// insert: the same insert with the same lsid, with and without a
// txnNumber (a new one per insert, as drivers send).
func BenchmarkRetryableInsert(b *testing.B) {
	srv := cairndtest.Start(b, cairndtest.DefaultMode)
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI))
	if err != nil {
		b.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	db := client.Database("bench")
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}
	ctx := context.Background()
	txn := int64(0)
	for _, mode := range []string{"plain", "retryable", "plain", "retryable"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "x", Value: i}}}}, {Key: "lsid", Value: lsid}}
				if mode == "retryable" {
					txn++
					cmd = append(cmd, bson.E{Key: "txnNumber", Value: txn})
				}
				if err := db.RunCommand(ctx, cmd).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
