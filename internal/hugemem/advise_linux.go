package hugemem

import (
	"syscall"
	"unsafe"
)

// madvHugepage is MADV_HUGEPAGE.
const madvHugepage = 14

// adviseHuge advises the 2 MiB-aligned part of the n bytes at p.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	const huge = 2 << 20
	a := uintptr(p)
	start := (a+huge-1)&^(huge-1) - a
	end := (a+n)&^(huge-1) - a
	if end <= start || end > n {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start)), end-start), madvHugepage)
}
