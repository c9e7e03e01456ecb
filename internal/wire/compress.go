package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Compressor identifies the algorithm of an OP_COMPRESSED message.
type Compressor uint8

// Compressor IDs as assigned by the wire protocol.
const (
	CompressorNoop   Compressor = 0
	CompressorSnappy Compressor = 1
	CompressorZlib   Compressor = 2
	CompressorZstd   Compressor = 3
)

// CompressorByName returns the compressor negotiated under name in the
// "compression" field of the handshake: "snappy", "zlib" or "zstd".
func CompressorByName(name string) (Compressor, bool) {
	switch name {
	case "snappy":
		return CompressorSnappy, true
	case "zlib":
		return CompressorZlib, true
	case "zstd":
		return CompressorZstd, true
	}
	return 0, false
}

// String returns the negotiation name of the compressor ("noop" for
// CompressorNoop).
func (c Compressor) String() string {
	switch c {
	case CompressorNoop:
		return "noop"
	case CompressorSnappy:
		return "snappy"
	case CompressorZlib:
		return "zlib"
	case CompressorZstd:
		return "zstd"
	}
	return "compressor(" + strconv.Itoa(int(c)) + ")"
}

// compressedPrefixSize is the size of an OP_COMPRESSED message before its
// payload: header, originalOpcode, uncompressedSize and compressorId.
const compressedPrefixSize = HeaderSize + 4 + 4 + 1

// defaultZlibLevel is MongoDB's default zlibCompressionLevel.
const defaultZlibLevel = 6

// Compress wraps msg, a complete message, in an OP_COMPRESSED message
// appended to dst and returns the extended slice. The new header copies the
// requestID and responseTo of msg. level selects the compression level in
// the algorithm's own scale (zlib 1-9, zstd 1-22); 0 selects the default (6
// for zlib, as MongoDB, and zstd's default), and snappy and noop ignore it.
// dst and msg must not overlap.
func Compress(dst []byte, msg []byte, c Compressor, level int) ([]byte, error) {
	if len(msg) < HeaderSize {
		return dst, fmt.Errorf("wire: compress: message of %d bytes is shorter than a header", len(msg))
	}
	h := parseHeader(msg)
	if int(h.MessageLength) != len(msg) {
		return dst, fmt.Errorf("wire: compress: header length %d does not match message length %d", h.MessageLength, len(msg))
	}
	if h.OpCode == OpCompressed {
		return dst, errors.New("wire: compress: message is already OP_COMPRESSED")
	}
	payload := msg[HeaderSize:]
	orig := dst
	dst = slices.Grow(dst, compressedPrefixSize)
	dst, start := appendHeader(dst, h.RequestID, h.ResponseTo, OpCompressed)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.OpCode))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = append(dst, byte(c))

	var err error
	switch c {
	case CompressorNoop:
		dst = append(dst, payload...)
	case CompressorSnappy:
		dst = slices.Grow(dst, s2.MaxEncodedLen(len(payload)))
		dst = append(dst, s2.EncodeSnappy(dst[len(dst):cap(dst)], payload)...)
	case CompressorZlib:
		dst, err = zlibCompress(dst, payload, level)
	case CompressorZstd:
		dst = zstdEncoder(level).EncodeAll(payload, dst)
	default:
		return orig, fmt.Errorf("wire: compress: unknown %v", c)
	}
	if err != nil {
		return orig, fmt.Errorf("wire: compress with %v: %w", c, err)
	}
	if len(dst)-start > int(^uint32(0)>>1) {
		return orig, fmt.Errorf("wire: compress: compressed message of %d bytes is too large", len(dst)-start)
	}
	return finishMessage(dst, start), nil
}

// decompress decodes the OP_COMPRESSED message b into buf, reusing its
// storage, and returns the reconstructed inner message (header included),
// its header and the compressor. The inner message may be at most maxSize
// bytes long and must decompress to exactly its declared size.
func decompress(buf, b []byte, maxSize int) (out []byte, h Header, c Compressor, perr *ProtocolError) {
	outer := parseHeader(b)
	fail := func(e *ProtocolError) ([]byte, Header, Compressor, *ProtocolError) {
		e.Header, e.Compressor = outer, c
		return buf, outer, c, e
	}
	data := b[HeaderSize:]
	if len(data) < compressedPrefixSize-HeaderSize {
		return fail(newError(CodeBadValue, "Invalid compressed message header"))
	}
	origOp := OpCode(binary.LittleEndian.Uint32(data))
	size := int64(int32(binary.LittleEndian.Uint32(data[4:])))
	c = Compressor(data[8])
	payload := data[9:]
	if c > CompressorZstd {
		return fail(newError(CodeInternalError, "Compression algorithm specified in message is not available: compressor id %d", uint8(c)))
	}
	if origOp == OpCompressed {
		return fail(newError(CodeBadValue, "OP_COMPRESSED message wraps another OP_COMPRESSED message"))
	}
	if size < 0 {
		return fail(newError(CodeBadValue, "OP_COMPRESSED uncompressedSize %d is negative", size))
	}
	if size+HeaderSize > int64(maxSize) {
		e := newError(CodeBadValue, "Decompressed message would be larger than maximum message size: uncompressedSize %d plus the %d-byte header exceeds %d", size, HeaderSize, maxSize)
		e.TooLarge = true
		return fail(e)
	}
	if err := checkDeclaredSize(c, payload, int(size)); err != nil {
		e := newError(CodeBadValue, "failed to decompress OP_COMPRESSED message with %v: %v", c, err)
		e.Err = err
		return fail(e)
	}
	n := int(size) + HeaderSize
	if cap(buf) < n {
		buf = make([]byte, n, max(n, minBufferSize))
	}
	buf = buf[:n]
	h = Header{MessageLength: int32(n), RequestID: outer.RequestID, ResponseTo: outer.ResponseTo, OpCode: origOp}
	binary.LittleEndian.PutUint32(buf[0:], uint32(h.MessageLength))
	binary.LittleEndian.PutUint32(buf[4:], uint32(h.RequestID))
	binary.LittleEndian.PutUint32(buf[8:], uint32(h.ResponseTo))
	binary.LittleEndian.PutUint32(buf[12:], uint32(h.OpCode))
	dst := buf[HeaderSize:n:n]

	var err error
	switch c {
	case CompressorNoop:
		if len(payload) != len(dst) {
			err = sizeMismatch(len(payload), len(dst))
			break
		}
		copy(dst, payload)
	case CompressorSnappy:
		err = snappyDecompress(dst, payload)
	case CompressorZlib:
		err = zlibDecompress(dst, payload)
	case CompressorZstd:
		err = zstdDecompress(dst, payload)
	}
	if err != nil {
		code := int32(CodeBadValue)
		if c == CompressorZlib && !errors.Is(err, errSizeMismatch) {
			code = CodeZLibError
		}
		e := newError(code, "failed to decompress OP_COMPRESSED message with %v: %v", c, err)
		e.Err = err
		return fail(e)
	}
	return buf, h, c, nil
}

// errSizeMismatch is wrapped by the errors reporting decompressed data
// whose size differs from the declared uncompressedSize.
var errSizeMismatch = errors.New("decompressed size does not match uncompressedSize")

func sizeMismatch(got, want int) error {
	if got < 0 {
		return fmt.Errorf("%w: got more than the declared %d bytes", errSizeMismatch, want)
	}
	return fmt.Errorf("%w: got %d bytes, declared %d", errSizeMismatch, got, want)
}

// maxDeflateRatio bounds how much deflate can expand its input: a
// 258-byte match costs at least 2 bits, so 1 byte yields at most 1032.
const maxDeflateRatio = 1032

// maxZstdBlockSize is the largest output of one zstd block.
const maxZstdBlockSize = 128 << 10

// checkDeclaredSize rejects, before the output buffer is allocated, a
// declared size that the payload cannot possibly decode to. It keeps a few
// bytes of input from making the Reader allocate a buffer of up to the
// maximum message size. Sizes that pass are still verified exactly while
// decoding.
func checkDeclaredSize(c Compressor, payload []byte, size int) error {
	switch c {
	case CompressorSnappy:
		n, err := s2.DecodedLen(payload)
		if err != nil {
			return err
		}
		if n != size {
			return sizeMismatch(n, size)
		}
	case CompressorZlib:
		if int64(size) > int64(len(payload))*maxDeflateRatio {
			return fmt.Errorf("%w: %d payload bytes cannot inflate to the declared %d", errSizeMismatch, len(payload), size)
		}
	case CompressorZstd:
		var h zstd.Header
		if h.Decode(payload) == nil && h.HasFCS && !h.Skippable && h.FrameContentSize > uint64(size) {
			return fmt.Errorf("%w: the zstd frame holds %d bytes, declared %d", errSizeMismatch, h.FrameContentSize, size)
		}
		// Every zstd block has a 3-byte header and decodes to at most
		// 128 KiB.
		if int64(size) > (int64(len(payload))/3+1)*maxZstdBlockSize {
			return fmt.Errorf("%w: %d payload bytes cannot decode to the declared %d", errSizeMismatch, len(payload), size)
		}
	}
	return nil
}

// snappyDecompress decodes the snappy block src into dst, which must be
// exactly as long as the decoded data.
func snappyDecompress(dst, src []byte) error {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return sizeMismatch(n, len(dst))
	}
	out, err := s2.Decode(dst, src)
	if err != nil {
		return err
	}
	if len(out) != len(dst) {
		return sizeMismatch(len(out), len(dst))
	}
	return nil
}

// zlibDecoder is a reusable zlib decompressor.
type zlibDecoder struct {
	src bytes.Reader
	zr  io.ReadCloser
	one [1]byte // probe for data beyond the declared size
}

var zlibDecoders sync.Pool // of *zlibDecoder

// zlibDecompress decodes the zlib stream src into dst, which must be exactly
// as long as the decoded data. It never decodes more than len(dst)+1 bytes.
func zlibDecompress(dst, src []byte) (err error) {
	d, _ := zlibDecoders.Get().(*zlibDecoder)
	if d == nil {
		d = new(zlibDecoder)
	}
	d.src.Reset(src)
	defer func() {
		d.src.Reset(nil)
		zlibDecoders.Put(d)
	}()
	if d.zr == nil {
		zr, err := zlib.NewReader(&d.src)
		if err != nil {
			return err
		}
		d.zr = zr
	} else if err := d.zr.(zlib.Resetter).Reset(&d.src, nil); err != nil {
		return err
	}
	// Unlike io.ReadFull, tell a stream that ends early (io.EOF: wrong
	// declared size) from a truncated stream (io.ErrUnexpectedEOF: corrupt).
	for n := 0; n < len(dst); {
		m, err := d.zr.Read(dst[n:])
		n += m
		if err == io.EOF && n < len(dst) {
			return sizeMismatch(n, len(dst))
		}
		if err != nil && err != io.EOF {
			return err
		}
	}
	// The stream must end here; reading to EOF also verifies the checksum.
	for {
		m, err := d.zr.Read(d.one[:])
		if m > 0 {
			return sizeMismatch(-1, len(dst))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// zlibEncoder is a reusable zlib compressor writing into out.
type zlibEncoder struct {
	w   *zlib.Writer
	out appendWriter
}

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

var zlibEncoders [zlib.BestCompression + 1]sync.Pool // of *zlibEncoder, by level

// zlibCompress appends the zlib compression of src to dst.
func zlibCompress(dst, src []byte, level int) ([]byte, error) {
	if level <= 0 {
		level = defaultZlibLevel
	}
	level = min(level, zlib.BestCompression)
	e, _ := zlibEncoders[level].Get().(*zlibEncoder)
	if e == nil {
		w, err := zlib.NewWriterLevel(nil, level)
		if err != nil {
			return dst, err
		}
		e = &zlibEncoder{w: w}
	}
	// Reserve deflate's worst case (stored blocks) up front.
	e.out.b = slices.Grow(dst, len(src)+len(src)/1024+64)
	e.w.Reset(&e.out)
	_, err := e.w.Write(src)
	if err == nil {
		err = e.w.Close()
	}
	dst, e.out.b = e.out.b, nil
	zlibEncoders[level].Put(e)
	return dst, err
}

// zstd encoders by zstd.EncoderLevel and the shared decoder. Both are safe
// for concurrent use and pool their internal state.
var (
	zstdEncoders     [zstd.SpeedBestCompression + 1]*zstd.Encoder
	zstdEncodersOnce [zstd.SpeedBestCompression + 1]sync.Once

	zstdDecoder     *zstd.Decoder
	zstdDecoderOnce sync.Once
)

// zstdEncoder returns the shared encoder for a zstd level (0 = default).
func zstdEncoder(level int) *zstd.Encoder {
	l := zstd.SpeedDefault
	if level > 0 {
		l = zstd.EncoderLevelFromZstd(level)
	}
	zstdEncodersOnce[l].Do(func() {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(l),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithZeroFrames(true))
		if err != nil {
			panic("wire: creating zstd encoder: " + err.Error()) // options are constant
		}
		zstdEncoders[l] = enc
	})
	return zstdEncoders[l]
}

// zstdDecompress decodes the zstd frames in src into dst, which must be
// exactly as long as the decoded data. It never decodes more than len(dst)
// bytes.
func zstdDecompress(dst, src []byte) error {
	zstdDecoderOnce.Do(func() {
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(MaxMessageSize),
			zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			panic("wire: creating zstd decoder: " + err.Error()) // options are constant
		}
		zstdDecoder = dec
	})
	out, err := zstdDecoder.DecodeAll(src, dst[:0:len(dst)])
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return sizeMismatch(-1, len(dst))
	}
	if err != nil {
		return err
	}
	if len(out) != len(dst) {
		return sizeMismatch(len(out), len(dst))
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return nil
}
