package e2e

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// mountTmpfs mounts a tmpfs of the given size (bytes) on a new directory,
// or skips the test when this process may not mount.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+itoa(size)); err != nil {
		t.Skipf("cannot mount a %d-byte tmpfs (needs root or CAP_SYS_ADMIN): %v", size, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

func itoa(n int64) string { return formatInt(n) }

func formatInt(n int64) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// fillDisk inserts journaled 64 KiB random documents until the server
// refuses one with OutOfDiskSpace, and returns how many were acknowledged.
func fillDisk(t *testing.T, coll *mongo.Collection, next *int) int {
	t.Helper()
	acked := 0
	for i := 0; i < 2000; i++ {
		payload := make([]byte, 64<<10)
		rand.Read(payload)
		_, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: *next}, {Key: "p", Value: payload}})
		if err != nil {
			cmdErr(t, err, mongoerr.OutOfDiskSpace)
			return acked
		}
		*next++
		acked++
	}
	t.Fatal("2000 inserts of 64 KiB and the disk never filled")
	return 0
}

func countDocs(t *testing.T, coll *mongo.Collection) int {
	t.Helper()
	n, err := coll.CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestDiskFullTmpfs runs cairnd on a 192 MiB tmpfs (its two 64 MiB journal
// files leave 64 MiB, 48 of them taken by ballast files): journaled inserts are refused with OutOfDiskSpace
// before the data file can no longer take them, resume once space is
// freed, and a restart on the full file system starts and keeps every
// acknowledged insert.
func TestDiskFullTmpfs(t *testing.T) {
	dir := mountTmpfs(t, 192<<20)
	ballast := func(name string, size int) {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dbpath := filepath.Join(dir, "db")
	srv, err := cairndtest.StartDir(dbpath)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	ballast("ballast1", 8<<20)
	ballast("ballast2", 40<<20)
	client := dial(t, srv.URI)
	coll := client.Database("full").Collection("c", options.Collection().SetWriteConcern(writeconcern.Journaled()))
	next := 0
	acked := fillDisk(t, coll, &next)
	if acked < 10 {
		t.Fatalf("only %d inserts before the disk was full", acked)
	}
	if n := countDocs(t, coll); n != acked {
		t.Fatalf("%d documents, %d acknowledged", n, acked)
	}
	// Freeing space lets writes go on without a restart.
	os.Remove(filepath.Join(dir, "ballast1"))
	acked += fillDisk(t, coll, &next)
	if n := countDocs(t, coll); n != acked {
		t.Fatalf("%d documents after resuming, %d acknowledged", n, acked)
	}
	// A restart on the full file system.
	srv.Stop()
	srv, err = cairndtest.StartDir(dbpath)
	if err != nil {
		t.Fatalf("restart on a full file system: %v", err)
	}
	defer srv.Kill()
	client = dial(t, srv.URI)
	coll = client.Database("full").Collection("c", options.Collection().SetWriteConcern(writeconcern.Journaled()))
	if n := countDocs(t, coll); n != acked {
		t.Fatalf("%d documents after restart, %d acknowledged", n, acked)
	}
	_, err = coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: next}})
	cmdErr(t, err, mongoerr.OutOfDiskSpace)
	os.Remove(filepath.Join(dir, "ballast2"))
	if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: next}}); err != nil {
		t.Fatalf("insert after freeing space: %v", err)
	}
	var v struct{ Valid bool }
	if err := client.Database("full").RunCommand(context.Background(), bson.D{{Key: "validate", Value: "c"}}).Decode(&v); err != nil || !v.Valid {
		t.Fatalf("validate: %+v, %v", v, err)
	}
}

// TestDiskTooSmallTmpfs: on a 64 MiB file system the two 64 MiB journal
// files cannot be preallocated; cairnd exits saying how much space it
// needs and leaves no file behind.
func TestDiskTooSmallTmpfs(t *testing.T) {
	dir := mountTmpfs(t, 64<<20)
	dbpath := filepath.Join(dir, "db")
	srv, err := cairndtest.StartDir(dbpath)
	if err == nil {
		srv.Kill()
		t.Fatal("cairnd started on a 64 MiB file system")
	}
	if !strings.Contains(err.Error(), "needs 128.0 MiB") {
		t.Fatalf("the error does not say how much space is needed: %v", err)
	}
	entries, _ := os.ReadDir(dbpath)
	var left []string
	for _, e := range entries {
		if i, _ := e.Info(); i != nil && i.Size() > 0 {
			left = append(left, e.Name())
		}
	}
	if len(left) > 0 {
		t.Fatalf("files left behind: %v", left)
	}
}
