// Package bsoncolumn encodes and decodes BSONColumn, the compressed column
// format (BinData subtype 7) in which mongod 7.0 stores the data.<field>
// columns of compressed (control.version 2) time-series buckets.
//
// # Format
//
// A column is a sequence of control bytes, each followed by its payload,
// ended by a 0x00 byte:
//
//   - a literal: a control byte whose top three bits are 0 is the type of a
//     BSON element with an empty field name (type, 0x00, value). It is the
//     next value, and the base of the deltas that follow it;
//   - a Simple-8b run: a control byte 0x80-0xDF whose low four bits are
//     the number of 64-bit little-endian Simple-8b blocks that follow,
//     minus one, and whose high four bits give the scale of doubles (0x9:
//     ×1, 0xA: ×10, 0xB: ×100, 0xC: ×10^4, 0xD: ×10^8, 0x8: the double's
//     bits as an integer; 0x8 for every other type). Each slot of a block
//     is a zigzag-encoded delta from the previous value, or, when all its
//     bits are set, a missing value (a skip);
//   - 0xF0-0xF2 start interleaved mode (objects split into one stream per
//     scalar field), which this package does not write and reports as
//     unsupported when reading.
//
// How a delta applies depends on the type of the last literal: int32,
// int64, bool and doubles (scaled to integers by the run's scale) are
// delta-encoded; dates, timestamps and ObjectIds (their timestamp and
// counter bytes interleaved into an integer; the 5 process bytes must not
// change) are delta-of-delta-encoded; strings, binaries, decimals and code
// use 128-bit Simple-8b deltas, of which this package writes and reads only
// the zero delta (a repeat); for the other types only the zero delta (a
// repeat) is valid.
//
// A Simple-8b block keeps its selector in its low four bits and its slots
// from the least significant bit up: selectors 1-14 hold 60, 30, 20, 15,
// 12, 10, 8, 7, 6, 5, 4, 3, 2 and 1 slots of 1, 2, 3, 4, 5, 6, 7, 8, 10,
// 12, 15, 20, 30 and 60 bits; selectors 7 and 8 keep an extension nibble in
// bits 4-7 (0: the plain layout from bit 8; otherwise slots that carry a
// count of trailing zeros); selector 15 repeats the previous block's last
// slot 120 × (bits 4-7 + 1) times.
//
// Encode writes literals, base-selector blocks (never extended selectors or
// run-length blocks, which Decode reads) and picks, for each run of
// doubles, the smallest scale that represents every value of the run
// exactly (bit for bit: -0 and NaN use the integer scale). Decode never
// panics on malformed input; it returns an error.
package bsoncolumn
