package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestLogRotateAndLevel: logRotate moves the log file aside and starts a
// new one; setParameter logLevel changes what getParameter reports.
func TestLogRotateAndLevel(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "cairnd.log")
	srv := cairndtest.Start(t, "--logpath", logPath)
	client := dial(t, srv.URI)
	admin := client.Database("admin")
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "logRotate", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	rotated := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "cairnd.log.") {
			rotated++
		}
	}
	if rotated != 1 {
		t.Fatalf("%d rotated files in %v", rotated, entries)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if strings.Contains(string(b), "Log rotation initiated") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("new log file lacks the rotation line: %q", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var was struct{ Was int32 }
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: 1}}).Decode(&was); err != nil || was.Was != 0 {
		t.Fatalf("setParameter = %+v, %v", was, err)
	}
	var got struct{ LogLevel int32 }
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: "logLevel", Value: 1}}).Decode(&got); err != nil || got.LogLevel != 1 {
		t.Fatalf("getParameter logLevel = %+v, %v", got, err)
	}
	cmdErr(t, admin.RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "noSuch", Value: 1}}).Err(), 72)
}
