// Package e2e drives a real cairnd, started on a loopback port, with the
// official Go driver and with raw wire messages: every command of the CRUD
// surface, its errors, and the protocol's limits.
package e2e

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// connect starts a server (shared by the test's subtests) and a client.
func connect(t *testing.T, opts ...*options.ClientOptions) (*cairndtest.Server, *mongo.Client) {
	t.Helper()
	srv := cairndtest.Start(t)
	return srv, dial(t, srv.URI, opts...)
}

func dial(t *testing.T, uri string, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	o := options.Client().ApplyURI(uri).SetTimeout(30 * time.Second)
	all := append([]*options.ClientOptions{o}, opts...)
	client, err := mongo.Connect(options.MergeClientOptions(all...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	return client
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// cmdErr asserts err is a server error with the code.
func cmdErr(t *testing.T, err error, code int32) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected error code %d, got success", code)
	}
	var se mongo.ServerError
	if ok := asServerError(err, &se); !ok {
		t.Fatalf("expected server error code %d, got %T %v", code, err, err)
	}
	if !se.HasErrorCode(int(code)) {
		t.Fatalf("expected error code %d, got %v", code, err)
	}
}

func asServerError(err error, target *mongo.ServerError) bool {
	switch e := err.(type) {
	case mongo.CommandError:
		*target = e
		return true
	case mongo.WriteException:
		*target = e
		return true
	case mongo.BulkWriteException:
		*target = e
		return true
	}
	return false
}
