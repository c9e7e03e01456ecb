package bsoncolumn

import "errors"

// slot is one Simple-8b slot: a zigzag-encoded delta, or missing.
type slot struct {
	v       uint64
	missing bool
}

// Base selectors: slots per block and bits per slot (selector 0 and 15
// are not plain layouts).
var (
	selSlots = [16]int{0, 60, 30, 20, 15, 12, 10, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	selBits  = [16]uint{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 30, 60, 0}
)

// Extended layouts of selectors 7 and 8 by extension nibble: value bits,
// trailing-zero count bits and the count's multiplier.
type extLayout struct{ value, count, scale uint }

var (
	ext7 = [10]extLayout{1: {2, 4, 1}, {3, 4, 1}, {4, 4, 1}, {5, 4, 1}, {7, 4, 1}, {10, 4, 1}, {14, 4, 1}, {24, 4, 1}, {52, 4, 1}}
	ext8 = [14]extLayout{1: {4, 4, 4}, {5, 4, 4}, {7, 4, 4}, {10, 4, 4}, {14, 4, 4}, {24, 4, 4}, {52, 4, 4},
		{4, 5, 4}, {6, 5, 4}, {9, 5, 4}, {13, 5, 4}, {23, 5, 4}, {51, 5, 4}}
)

const rleSelector = 15

var errSelector = errors.New("bsoncolumn: invalid Simple-8b selector")

// zigzag maps a signed delta to the unsigned slot value, as mongod's
// Simple8bTypeUtil::encodeInt64.
func zigzag(d int64) uint64 { return uint64(d<<1) ^ uint64(d>>63) }

// unzigzag inverts zigzag.
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// fits reports whether slot s can be stored in a slot of w bits (the all
// ones pattern marks a missing value).
func fits(s slot, w uint) bool {
	if s.missing {
		return true
	}
	return w >= 64 || s.v < (uint64(1)<<w)-1
}

// pack appends slots as Simple-8b blocks (base selectors, and run-length
// blocks for at least 120 repeats of a block's last slot), each block as
// full as the slots allow.
func pack(dst []uint64, slots []slot) []uint64 {
	var lastPacked slot
	for len(slots) > 0 {
		if len(dst) > 0 && dst[len(dst)-1]&0xF != rleSelector {
			k := 0
			for k < len(slots) && slots[k] == lastPacked {
				k++
			}
			for k >= 120 {
				c := min(k/120, 16)
				dst = append(dst, rleSelector|uint64(c-1)<<4)
				slots, k = slots[c*120:], k-c*120
			}
			if len(slots) == 0 {
				break
			}
		}
		for sel := 1; sel <= 14; sel++ {
			n, w := selSlots[sel], selBits[sel]
			if n > len(slots) {
				continue
			}
			ok := true
			for _, s := range slots[:n] {
				if !fits(s, w) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			shift := uint(4)
			if sel == 7 || sel == 8 {
				shift = 8 // extension nibble 0
			}
			mask := uint64(1)<<w - 1
			word := uint64(sel)
			for i, s := range slots[:n] {
				v := s.v
				if s.missing {
					v = mask
				}
				word |= v << (shift + uint(i)*w)
			}
			dst = append(dst, word)
			lastPacked = slots[n-1]
			slots = slots[n:]
			break
		}
	}
	return dst
}

// maxSlot is the largest slot value Encode stores (a 60-bit slot less the
// missing pattern).
const maxSlot = uint64(1)<<60 - 2

// unpackBlock calls visit with each slot of block w; last is the previous
// block's last slot (for run-length blocks) and is updated. wide reports
// 128-bit mode, where only base layouts are read.
func unpackBlock(w uint64, last *slot, wide bool, visit func(slot) error) error {
	sel := int(w & 0xF)
	switch {
	case sel == 0:
		return errSelector
	case sel == rleSelector:
		n := (int(w>>4&0xF) + 1) * 120
		for i := 0; i < n; i++ {
			if err := visit(*last); err != nil {
				return err
			}
		}
		return nil
	case (sel == 7 || sel == 8) && w>>4&0xF != 0:
		if wide {
			return errors.New("bsoncolumn: extended Simple-8b selectors of 128-bit deltas are not supported")
		}
		e := int(w >> 4 & 0xF)
		var l extLayout
		if sel == 7 && e < len(ext7) {
			l = ext7[e]
		} else if sel == 8 && e < len(ext8) {
			l = ext8[e]
		}
		if l.value == 0 {
			return errSelector
		}
		b := l.value + l.count
		mask := uint64(1)<<b - 1
		x := w >> 8
		for i := 0; i < int(56/b); i++ {
			s := slot{missing: true}
			if x&mask != mask {
				zeros := (x & (uint64(1)<<l.count - 1)) * uint64(l.scale) % 64
				s = slot{v: (x >> l.count & (uint64(1)<<l.value - 1)) << zeros}
			}
			*last = s
			if err := visit(s); err != nil {
				return err
			}
			x >>= b
		}
		return nil
	}
	n, b := selSlots[sel], selBits[sel]
	x := w >> 4
	if sel == 7 || sel == 8 {
		x = w >> 8
	}
	mask := uint64(1)<<b - 1
	for i := 0; i < n; i++ {
		s := slot{v: x & mask}
		if s.v == mask {
			s = slot{missing: true}
		}
		*last = s
		if err := visit(s); err != nil {
			return err
		}
		x >>= b
	}
	return nil
}
