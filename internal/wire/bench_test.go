package wire

import (
	"strconv"
	"strings"
	"testing"
)

// benchRead measures reading msg over and over; size is the number of
// (uncompressed) bytes a message stands for.
func benchRead(b *testing.B, msg []byte, size int) {
	r := NewReader(&loopReader{data: msg}, 0)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadMessage(b *testing.B) {
	body := doc(b, "find", "coll", "filter", doc(b, "a", int32(1)), "limit", int32(10), "$db", "test")
	docs := make([][]byte, 100)
	for i := range docs {
		docs[i] = doc(b, "_id", int32(i), "name", "document", "value", float64(i))
	}
	large := doc(b, "insert", "coll", "pad", strings.Repeat("abcdefgh", 8<<10), "$db", "test")
	batch := AppendMsgSections(nil, 1, 0, 0, body, Sequence{"documents", manyDocs(b, 1000)})

	b.Run("small", func(b *testing.B) {
		msg := AppendMsg(nil, 1, 0, 0, body)
		benchRead(b, msg, len(msg))
	})
	b.Run("small-checksum", func(b *testing.B) {
		msg := AppendMsg(nil, 1, 0, FlagChecksumPresent, body)
		benchRead(b, msg, len(msg))
	})
	b.Run("sequence-100-docs", func(b *testing.B) {
		msg := AppendMsgSections(nil, 1, 0, 0, body, Sequence{"documents", docs})
		benchRead(b, msg, len(msg))
	})
	b.Run("64KiB", func(b *testing.B) {
		msg := AppendMsg(nil, 1, 0, 0, large)
		benchRead(b, msg, len(msg))
	})
	b.Run("query", func(b *testing.B) {
		msg := AppendQuery(nil, 1, 0, &Query{FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: body})
		benchRead(b, msg, len(msg))
	})
	for _, c := range []Compressor{CompressorSnappy, CompressorZlib, CompressorZstd} {
		b.Run("1000-docs-"+c.String(), func(b *testing.B) {
			msg, err := Compress(nil, batch, c, 0)
			if err != nil {
				b.Fatal(err)
			}
			benchRead(b, msg, len(batch))
		})
	}
}

func BenchmarkAppendMsg(b *testing.B) {
	body := doc(b, "cursor", doc(b, "firstBatch", []any{}, "id", int64(0), "ns", "test.coll"), "ok", 1.0)
	buf := make([]byte, 0, 1024)
	for _, flags := range []uint32{0, FlagChecksumPresent} {
		name := "plain"
		if flags != 0 {
			name = "checksum"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendMsg(buf[:0], 1, 2, flags, body)
			}
		})
	}
}

func BenchmarkCompress(b *testing.B) {
	msg := AppendMsgSections(nil, 1, 0, 0, doc(b, "insert", "coll"), Sequence{"documents", manyDocs(b, 1000)})
	buf := make([]byte, 0, 2*len(msg))
	for _, c := range []Compressor{CompressorSnappy, CompressorZlib, CompressorZstd} {
		b.Run("1000-docs-"+c.String(), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = Compress(buf[:0], msg, c, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// manyDocs returns n small, realistic documents.
func manyDocs(b *testing.B, n int) [][]byte {
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = doc(b, "_id", int32(i), "name", "user"+strconv.Itoa(i), "email", "user"+strconv.Itoa(i)+"@example.com",
			"age", int32(20+i%50), "tags", []any{"a", "b"}, "score", float64(i)*1.5)
	}
	return docs
}
