package server

import (
	"fmt"
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
)

// distinctWords returns n words that stay distinct after stemming and are
// no stop words: "q" followed by the base-20 digits of i spelt with
// consonants (no vowel, so no suffix the stemmer removes).
func distinctWords(n int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	var sb strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteByte('q')
		for v := i; ; v /= len(letters) {
			sb.WriteByte(letters[v%len(letters)])
			if v < len(letters) {
				break
			}
		}
	}
	return sb.String()
}

// textCmd sends body and returns the reply, failing on a transport
// error, a command error or a write error.
func textCmd(tb testing.TB, s *Server, body dbson.D) dbson.Raw {
	tb.Helper()
	c := pipeConn(s)
	defer c.Close()
	raw, err := dbson.Marshal(body)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := c.Write(wire.AppendMsg(nil, 1, 0, 0, raw)); err != nil {
		tb.Fatal(err)
	}
	m, err := wire.NewReader(c, 0).ReadMessage()
	if err != nil {
		tb.Fatal(err)
	}
	r := dbson.Raw(append([]byte(nil), m.Msg.Body...))
	if ok, _ := r.Lookup("ok").AsFloat64OK(); ok != 1 {
		tb.Fatalf("%v: %v", body[0].Key, r)
	}
	if _, err := r.LookupErr("writeErrors"); err == nil {
		tb.Fatalf("%v: %v", body[0].Key, r)
	}
	return r
}

// textServer returns a server whose collection bench.t has a text index on
// field t, holding one document of 1,000 words (so that the benchmarks
// write into a tree with entries, not kv's bulk path for an empty one).
func textServer(tb testing.TB) *Server {
	s := newTestServer(tb)
	textCmd(tb, s, dbson.D{{Key: "createIndexes", Value: "t"}, {Key: "indexes", Value: dbson.A{
		dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}}}, {Key: "name", Value: "t_text"}}}}, {Key: "$db", Value: "bench"}})
	textCmd(tb, s, dbson.D{{Key: "insert", Value: "t"}, {Key: "documents", Value: dbson.A{
		dbson.D{{Key: "_id", Value: 0}, {Key: "t", Value: distinctWords(1000)}}}}, {Key: "$db", Value: "bench"}})
	return s
}

var textBenchSizes = []int{10_000, 40_000, 80_000}

// BenchmarkTextIndexInsert inserts one document with n distinct words into
// a text-indexed collection (the delete that follows each insert is not
// timed). Maintenance must grow linearly with n.
func BenchmarkTextIndexInsert(b *testing.B) { benchTextIndex(b, true) }

// BenchmarkTextIndexDelete deletes one document with n distinct words
// from a text-indexed collection (the insert before each delete is not
// timed).
func BenchmarkTextIndexDelete(b *testing.B) { benchTextIndex(b, false) }

func benchTextIndex(b *testing.B, timeInsert bool) {
	for _, n := range textBenchSizes {
		b.Run(fmt.Sprintf("words=%d", n), func(b *testing.B) {
			s := textServer(b)
			ins := dbson.D{{Key: "insert", Value: "t"}, {Key: "documents", Value: dbson.A{
				dbson.D{{Key: "_id", Value: 1}, {Key: "t", Value: distinctWords(n)}}}}, {Key: "$db", Value: "bench"}}
			del := dbson.D{{Key: "delete", Value: "t"}, {Key: "deletes", Value: dbson.A{
				dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 1}}}, {Key: "limit", Value: 1}}}}, {Key: "$db", Value: "bench"}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !timeInsert {
					b.StopTimer()
				}
				textCmd(b, s, ins)
				if timeInsert {
					b.StopTimer()
				} else {
					b.StartTimer()
				}
				textCmd(b, s, del)
				if timeInsert {
					b.StartTimer()
				} else {
					b.StopTimer()
				}
			}
			b.StopTimer()
		})
	}
}
