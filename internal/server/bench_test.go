package server

import (
	"math/rand/v2"
	"strconv"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
)

// roundTrips sends msgs[i%len] and reads each reply over an in-memory
// connection, b.N times.
func roundTrips(b *testing.B, s *Server, msgs [][]byte) {
	c := pipeConn(s)
	defer c.Close()
	r := wire.NewReader(c, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(msgs[i%len(msgs)]); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
}

// sendOnce sends msg and reads its reply, outside the timed loop.
func sendOnce(b *testing.B, s *Server, msg []byte) {
	c := pipeConn(s)
	defer c.Close()
	if _, err := c.Write(msg); err != nil {
		b.Fatal(err)
	}
	if _, err := wire.NewReader(c, 0).ReadMessage(); err != nil {
		b.Fatal(err)
	}
}

func cmdMsg(d dbson.D) []byte {
	body, _ := dbson.Marshal(d)
	return wire.AppendMsg(nil, 1, 0, 0, body)
}

func BenchmarkPing(b *testing.B) {
	roundTrips(b, newTestServer(b), [][]byte{pingMsg(1)})
}

func BenchmarkInsertOne(b *testing.B) {
	s := newTestServer(b)
	msgs := make([][]byte, 0, 1024)
	for i := 0; i < cap(msgs); i++ {
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "field0", Value: "0123456789012345678901234567890123456789"}}}}, {Key: "$db", Value: "bench"}}))
	}
	roundTrips(b, s, msgs)
}

func BenchmarkFindByID(b *testing.B) {
	s := newTestServer(b)
	var docs dbson.A
	for i := 0; i < 1000; i++ {
		docs = append(docs, dbson.D{{Key: "_id", Value: i}, {Key: "field0", Value: "0123456789012345678901234567890123456789"}})
	}
	sendOnce(b, s, cmdMsg(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "bench"}}))
	msgs := make([][]byte, 0, 1000)
	for i := 0; i < 1000; i++ {
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: i}}}, {Key: "limit", Value: 1}, {Key: "singleBatch", Value: true}, {Key: "$db", Value: "bench"}}))
	}
	roundTrips(b, s, msgs)
}

// BenchmarkPing1MiB: a 1 MiB request, read in steps and charged to the
// in-flight budget as it arrives.
func BenchmarkPing1MiB(b *testing.B) {
	msg := paddedPing(1, 1<<20)
	b.SetBytes(int64(len(msg)))
	roundTrips(b, newTestServer(b), [][]byte{msg})
}

// BenchmarkInsertOneRetryable: BenchmarkInsertOne as a driver sends it to
// a replica set (retryWrites: lsid and a new txnNumber on every insert),
// whose session-table record goes in the insert's transaction.
func BenchmarkInsertOneRetryable(b *testing.B) {
	s := newTestServerWith(b, func(o *Options) { o.ReplSet = "rs0" })
	lsid := dbson.D{{Key: "id", Value: dbson.Binary{Subtype: 4, Data: make([]byte, 16)}}}
	msgs := make([][]byte, 0, b.N+1)
	for i := 0; i <= b.N; i++ {
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "field0", Value: "0123456789012345678901234567890123456789"}}}},
			{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(i + 1)}, {Key: "$db", Value: "bench"}}))
	}
	roundTrips(b, s, msgs)
}

// BenchmarkFindByIDProjected: a read as go-ycsb's mongodb binding sends
// it: a record of YCSB's shape (ten 100-byte fields), found by _id with
// the projection {_id: false, field0: true, …, field9: true}, whose field
// order differs from request to request (the binding builds it from a Go
// map).
func BenchmarkFindByIDProjected(b *testing.B) {
	s := newTestServer(b)
	val := string(make([]byte, 100))
	var docs dbson.A
	for i := 0; i < 1000; i++ {
		d := dbson.D{{Key: "_id", Value: "user" + strconv.Itoa(i)}}
		for f := 0; f < 10; f++ {
			d = append(d, dbson.E{Key: "field" + strconv.Itoa(f), Value: val})
		}
		docs = append(docs, d)
	}
	sendOnce(b, s, cmdMsg(dbson.D{{Key: "insert", Value: "usertable"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "ycsb"}}))
	rng := rand.New(rand.NewPCG(1, 2))
	msgs := make([][]byte, 0, 1000)
	for i := 0; i < 1000; i++ {
		proj := dbson.D{{Key: "_id", Value: false}}
		for _, f := range rng.Perm(10) {
			proj = append(proj, dbson.E{Key: "field" + strconv.Itoa(f), Value: true})
		}
		rng.Shuffle(len(proj), func(i, j int) { proj[i], proj[j] = proj[j], proj[i] })
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "find", Value: "usertable"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user" + strconv.Itoa(i)}}},
			{Key: "limit", Value: int64(1)}, {Key: "singleBatch", Value: true}, {Key: "projection", Value: proj}, {Key: "$db", Value: "ycsb"}}))
	}
	roundTrips(b, s, msgs)
}

// BenchmarkScanByID: a scan as go-ycsb's workload E sends it: {_id:
// {$gte: key}} sorted by _id, a limit of 1-100 (here 50) and the binding's
// projection, over records of YCSB's shape.
func BenchmarkScanByID(b *testing.B) {
	s := newTestServer(b)
	val := string(make([]byte, 100))
	var docs dbson.A
	for i := 0; i < 1000; i++ {
		d := dbson.D{{Key: "_id", Value: "user" + strconv.Itoa(i)}}
		for f := 0; f < 10; f++ {
			d = append(d, dbson.E{Key: "field" + strconv.Itoa(f), Value: val})
		}
		docs = append(docs, d)
	}
	sendOnce(b, s, cmdMsg(dbson.D{{Key: "insert", Value: "usertable"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "ycsb"}}))
	rng := rand.New(rand.NewPCG(1, 2))
	msgs := make([][]byte, 0, 1000)
	for i := 0; i < 1000; i++ {
		proj := dbson.D{{Key: "_id", Value: false}}
		for _, f := range rng.Perm(10) {
			proj = append(proj, dbson.E{Key: "field" + strconv.Itoa(f), Value: true})
		}
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "find", Value: "usertable"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: dbson.D{{Key: "$gte", Value: "user" + strconv.Itoa(i)}}}}},
			{Key: "sort", Value: dbson.D{{Key: "_id", Value: 1}}}, {Key: "projection", Value: proj}, {Key: "limit", Value: int64(50)}, {Key: "$db", Value: "ycsb"}}))
	}
	roundTrips(b, s, msgs)
}
