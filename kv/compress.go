package kv

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Compression selects how journal records are compressed. Records are
// compressed by the goroutine that commits them, outside the writer lock,
// so concurrent committers compress in parallel (journal.go); a record that
// does not shrink by at least 1/8 is stored as is.
type Compression int

const (
	// DefaultCompression is Snappy (the zero value).
	DefaultCompression Compression = iota
	// NoCompression stores records as they are.
	NoCompression
	// Snappy compresses with the Snappy block format.
	Snappy
	// Zstd compresses with Zstandard at its fastest level.
	Zstd
)

// Record codecs as stored in the top two bits of a record's length field.
const (
	codecNone   = 0
	codecSnappy = 1
	codecZstd   = 2
)

// String returns the name ParseCompression accepts ("none", "snappy",
// "zstd").
func (c Compression) String() string {
	switch c {
	case DefaultCompression, Snappy:
		return "snappy"
	case NoCompression:
		return "none"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// ParseCompression maps "none", "snappy" and "zstd" (mongod's
// --journalCompressor values) to a Compression.
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "none":
		return NoCompression, nil
	case "snappy":
		return Snappy, nil
	case "zstd":
		return Zstd, nil
	}
	return 0, fmt.Errorf("kv: unknown journal compressor %q: want none, snappy or zstd", s)
}

func (c Compression) codec() int {
	switch c {
	case DefaultCompression, Snappy:
		return codecSnappy
	case Zstd:
		return codecZstd
	}
	return codecNone
}

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

func zstdCodecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		// Both are safe for concurrent EncodeAll/DecodeAll calls.
		zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecompressed))
	})
	return zstdEnc, zstdDec
}

// compressParts compresses the concatenation of parts with codec into dst
// (reused if large enough). It returns ok=false when compression is off or
// does not save at least 1/8 of the size, in which case the caller stores
// the parts as they are.
func compressParts(codec int, parts [][]byte, dst []byte) ([]byte, bool) {
	if codec == codecNone {
		return nil, false
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n < 64 {
		return nil, false
	}
	src := parts[0]
	if len(parts) > 1 {
		src = make([]byte, 0, n)
		for _, p := range parts {
			src = append(src, p...)
		}
	}
	var out []byte
	switch codec {
	case codecSnappy:
		out = s2.EncodeSnappy(dst[:cap(dst)], src)
	case codecZstd:
		enc, _ := zstdCodecs()
		out = enc.EncodeAll(src, dst[:0])
	}
	if len(out) > n-n/8 {
		return nil, false
	}
	return out, true
}

// maxDecompressed bounds what a (checksummed, hence trusted, but possibly
// crafted) compressed payload may claim to expand to.
const maxDecompressed = 1 << 30

// decompressPayload returns the uncompressed payload of a record stored
// with codec.
func decompressPayload(codec int, p []byte) ([]byte, error) {
	switch codec {
	case codecNone:
		return p, nil
	case codecSnappy:
		if n, err := s2.DecodedLen(p); err != nil || n > maxDecompressed {
			return nil, fmt.Errorf("kv: snappy payload of %d bytes (%v)", n, err)
		}
		out, err := s2.Decode(nil, p)
		if err != nil {
			return nil, fmt.Errorf("kv: snappy journal record: %w", err)
		}
		return out, nil
	case codecZstd:
		_, dec := zstdCodecs()
		out, err := dec.DecodeAll(p, nil)
		if err != nil {
			return nil, fmt.Errorf("kv: zstd journal record: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("kv: journal record with unknown codec %d", codec)
}
