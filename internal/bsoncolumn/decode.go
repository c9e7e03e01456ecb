package bsoncolumn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cairndb/cairn/bson"
)

// ErrUnsupported marks valid BSONColumn encodings this package does not
// read (interleaved objects, non-zero 128-bit deltas).
var ErrUnsupported = errors.New("bsoncolumn: unsupported BSONColumn encoding")

// scaleForControl maps a run's control nibble to its double scale (-1:
// not a run).
var scaleForControl = [16]int{-1, -1, -1, -1, -1, -1, -1, -1, 5, 0, 1, 2, 3, 4, -1, -1}

// Decoder decodes columns, reusing its memory from one column to the next:
// the values a call returns stay valid until the next call. The zero
// Decoder is ready to use.
type Decoder struct {
	last  bson.Value // the last literal (Type 0: none)
	lastF float64    // the last double
	enc   int64      // the last value as an integer (scaled for doubles)
	dod   int64      // delta-of-delta types: the last value
	scale int
	prev  slot // the last Simple-8b slot, for run-length blocks
	// fromArena is the span of the last value when it was decoded
	// (-1: the last literal).
	fromArena int
	arena     []byte
	spans     []span // decoded values, as offsets into arena
	out       []bson.Value
}

// span is a value decoded into the arena (its index in out).
type span struct {
	at, off, n int
}

// Decode appends the values of BSONColumn binary col to dst (Type 0 for
// a missing value). Literal values point into col.
func Decode(dst []bson.Value, col []byte) ([]bson.Value, error) {
	var d Decoder
	return d.Decode(dst, col)
}

// Decode is the package's Decode with d's memory.
func (d *Decoder) Decode(dst []bson.Value, col []byte) ([]bson.Value, error) {
	*d = Decoder{out: dst, fromArena: -1, arena: d.arena[:0], spans: d.spans[:0]}
	i := 0
	for {
		if i >= len(col) {
			return dst, errors.New("bsoncolumn: binary without its end byte")
		}
		c := col[i]
		switch {
		case c == 0:
			d.finish()
			return d.out, nil
		case c&0xE0 == 0:
			t := bson.Type(c)
			if i+1 >= len(col) || col[i+1] != 0 {
				return dst, errors.New("bsoncolumn: literal with a field name")
			}
			n := bson.ValueSize(t, col[i+2:])
			if n < 0 || t == bson.TypeCodeWithScope {
				return dst, fmt.Errorf("bsoncolumn: invalid literal of type 0x%02x", c)
			}
			v := bson.Value{Type: t, Data: col[i+2 : i+2+n : i+2+n]}
			if t == bson.TypeBoolean && v.Data[0] > 1 {
				return dst, errors.New("bsoncolumn: invalid boolean literal")
			}
			d.literal(v)
			d.out = append(d.out, v)
			i += 2 + n
		case c >= 0xF0 && c <= 0xF2:
			return dst, fmt.Errorf("%w: interleaved mode (control 0x%02x)", ErrUnsupported, c)
		default:
			s := scaleForControl[c>>4]
			if s < 0 {
				return dst, fmt.Errorf("bsoncolumn: invalid control byte 0x%02x", c)
			}
			blocks := int(c&0xF) + 1
			if i+1+8*blocks > len(col) {
				return dst, errors.New("bsoncolumn: truncated Simple-8b blocks")
			}
			if err := d.run(s, col[i+1:i+1+8*blocks]); err != nil {
				return dst, err
			}
			i += 1 + 8*blocks
		}
	}
}

func (d *Decoder) literal(v bson.Value) {
	d.last, d.enc, d.dod, d.prev, d.fromArena = v, 0, 0, slot{}, -1
	switch v.Type {
	case bson.TypeDouble:
		d.lastF = v.Double()
	case bson.TypeInt32:
		d.enc = int64(v.Int32())
	case bson.TypeInt64:
		d.enc = v.Int64()
	case bson.TypeBoolean:
		d.enc = int64(v.Data[0])
	case bson.TypeDateTime, bson.TypeTimestamp:
		d.dod = v.Int64()
	case bson.TypeObjectID:
		d.dod = objectIDInt(v.Data)
	}
}

func (d *Decoder) run(s int, blocks []byte) error {
	d.scale = s
	t := d.last.Type
	if t == bson.TypeDouble {
		n, ok := scaleDouble(d.lastF, s)
		if !ok {
			return errors.New("bsoncolumn: invalid double scale")
		}
		d.enc = n
	}
	wide := uses128(t)
	for len(blocks) > 0 {
		w := binary.LittleEndian.Uint64(blocks)
		blocks = blocks[8:]
		if err := unpackBlock(w, &d.prev, wide, d.slot); err != nil {
			return err
		}
	}
	return nil
}

// maxValues bounds what one column decodes to (run-length blocks expand;
// a bucket holds at most 1,000 measurements).
const maxValues = 1 << 16

func (d *Decoder) slot(s slot) error {
	if len(d.out) >= maxValues {
		return errors.New("bsoncolumn: too many values")
	}
	t := d.last.Type
	if s.missing || (t == 0 && s.v == 0) {
		d.out = append(d.out, bson.Value{})
		return nil
	}
	if !usesDeltaOfDelta(t) && s.v == 0 {
		if d.fromArena < 0 {
			d.out = append(d.out, d.last)
		} else { // repeat the decoded value
			sp := d.spans[d.fromArena]
			d.fromArena = len(d.spans)
			d.spans = append(d.spans, span{at: len(d.out), off: sp.off, n: sp.n})
			d.out = append(d.out, bson.Value{Type: t})
		}
		return nil
	}
	delta := unzigzag(s.v)
	off := len(d.arena)
	switch t {
	case bson.TypeDouble:
		d.enc += delta
		d.lastF = unscaleDouble(d.enc, d.scale)
		d.arena = binary.LittleEndian.AppendUint64(d.arena, math.Float64bits(d.lastF))
	case bson.TypeInt32:
		d.enc += delta
		d.arena = binary.LittleEndian.AppendUint32(d.arena, uint32(d.enc))
	case bson.TypeInt64:
		d.enc += delta
		d.arena = binary.LittleEndian.AppendUint64(d.arena, uint64(d.enc))
	case bson.TypeBoolean:
		d.enc += delta
		if d.enc != 0 && d.enc != 1 {
			return errors.New("bsoncolumn: boolean delta out of range")
		}
		d.arena = append(d.arena, byte(d.enc))
	case bson.TypeDateTime, bson.TypeTimestamp:
		d.enc += delta
		d.dod += d.enc
		d.arena = binary.LittleEndian.AppendUint64(d.arena, uint64(d.dod))
	case bson.TypeObjectID:
		d.enc += delta
		d.dod += d.enc
		d.arena = objectIDFrom(d.arena, d.dod, d.last.Data) // the literal's process bytes
	default:
		if uses128(t) {
			return fmt.Errorf("%w: non-zero delta of a %s", ErrUnsupported, t)
		}
		return fmt.Errorf("bsoncolumn: invalid delta after a %s", t)
	}
	d.fromArena = len(d.spans)
	d.spans = append(d.spans, span{at: len(d.out), off: off, n: len(d.arena) - off})
	d.out = append(d.out, bson.Value{Type: t})
	return nil
}

// finish points the decoded values into the arena, now that it no longer
// grows.
func (d *Decoder) finish() {
	for _, sp := range d.spans {
		d.out[sp.at].Data = d.arena[sp.off : sp.off+sp.n : sp.off+sp.n]
	}
}
