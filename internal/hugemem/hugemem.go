// Package hugemem allocates the large, randomly probed memory of hash
// aggregation (hash tables, blocks of group state) so that the kernel can
// back it with transparent huge pages.
//
// Where transparent huge pages are in "madvise" mode (the default of many
// distributions), the Go heap gets none: a hash table or a block of group
// state tens of megabytes large is then probed at random over 4 KiB pages,
// and nearly every probe misses the TLB as well as the cache. Make and
// Block advise the kernel (madvise MADV_HUGEPAGE) for allocations of at
// least Min bytes, so that the pages faulted in afterwards are 2 MiB ones.
// Memory the allocator hands out already faulted in keeps its small pages;
// advice that fails or is not supported changes nothing but speed.
package hugemem

import "unsafe"

// Min is the size in bytes from which an allocation is advised.
const Min = 4 << 20

// MaxBlock is the largest block, in bytes, that Block returns.
const MaxBlock = 8 << 20

// Make returns make([]T, n), advised for huge pages if it is large.
func Make[T any](n int) []T {
	s := make([]T, n)
	advise(s)
	return s
}

// Block returns a new empty block for one of a growing sequence of blocks
// of T, the last of which had capacity last: twice that, at least lo
// elements, and at most MaxBlock bytes (or lo elements, if more), advised
// for huge pages if it is large.
func Block[T any](last, lo int) []T {
	var zero T
	size := max(int(unsafe.Sizeof(zero)), 1)
	n := max(min(2*last, MaxBlock/size), lo)
	s := make([]T, 0, n)
	advise(s[:n])
	return s
}

func advise[T any](s []T) {
	var zero T
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < Min {
		return
	}
	adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), n)
}
