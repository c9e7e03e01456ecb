package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/kv"
)

// BenchmarkInsertJournaled inserts ~98 KB documents with {j: true} into a
// server on the real file system (SERVER-9754's largest row), one at a
// time: the cost of the write path for big documents, fdatasync included.
func BenchmarkInsertJournaled(b *testing.B) {
	for _, c := range []kv.Compression{kv.NoCompression, kv.Snappy} {
		b.Run(c.String(), func(b *testing.B) {
			s, err := New(Options{DBPath: b.TempDir(), KV: &kv.Options{JournalCompression: c},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Shutdown(context.Background())
			text := strings.Repeat("the journal group commit makes every acknowledged write durable ", 1550)[:98888]
			msgs := make([][]byte, 0, 64)
			for i := 0; i < cap(msgs); i++ {
				msgs = append(msgs, cmdMsg(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "x", Value: text}}}},
					{Key: "writeConcern", Value: dbson.D{{Key: "j", Value: true}}}, {Key: "$db", Value: "bench"}}))
			}
			b.SetBytes(int64(len(text)))
			roundTrips(b, s, msgs)
		})
	}
}
