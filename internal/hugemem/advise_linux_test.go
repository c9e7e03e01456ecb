package hugemem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviceReachesTheKernel checks that a large block's mapping carries
// the huge-page advice (the "hg" flag of /proc/self/smaps).
func TestAdviceReachesTheKernel(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("kernel without transparent huge pages")
	}
	b := Block[byte](MaxBlock, MaxBlock)
	b = b[:cap(b)]
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) + MaxBlock/2
	flags, ok := vmFlags(t, addr)
	if !ok {
		t.Skip("no smaps entry for the block (no /proc?)")
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("mapping of a %d-byte block lacks the hg flag: VmFlags %q", MaxBlock, flags)
	}
}

// vmFlags returns the VmFlags line of the mapping that holds addr.
func vmFlags(t *testing.T, addr uint64) (string, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if r, _, ok := strings.Cut(line, " "); ok && strings.Contains(r, "-") && !strings.HasSuffix(r, ":") {
			lo, hi, _ := strings.Cut(r, "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && l <= addr && addr < h
			continue
		}
		if in {
			if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
				return strings.TrimSpace(v), true
			}
		}
	}
	return "", false
}
