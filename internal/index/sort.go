package index

import "slices"

// Sorting a run: an in-place most-significant-digit radix sort (American
// flag sort) on the entries' 8-byte key prefixes, one byte at a time,
// which moves each entry a few times instead of comparing it log n times
// through a function value; buckets of a few entries, and entries whose
// prefixes are equal, are finished by comparison (run.compare). Input
// already in order (an ascending key over the scan order) or in reverse
// order (a descending one) is recognised in one pass.

// smallBucket is the size below which a bucket is sorted by insertion.
const smallBucket = 48

// sort orders the run's entries as run.compare does.
func (r *run) sort() {
	es := r.es
	asc, desc := true, true
	for i := 1; i < len(es) && (asc || desc); i++ {
		c := r.compare(es[i-1], es[i])
		asc = asc && c <= 0
		desc = desc && c > 0
	}
	switch {
	case asc:
		return
	case desc:
		slices.Reverse(es)
		return
	}
	r.radixSort(es, 56)
}

// radixSort sorts es, whose prefixes agree above bit shift+8, on the
// prefix byte at shift and below.
func (r *run) radixSort(es []entry, shift uint) {
	for {
		if len(es) <= smallBucket {
			r.insertionSort(es)
			return
		}
		var count [256]int
		for _, e := range es {
			count[byte(e.pfx>>shift)]++
		}
		if count[byte(es[0].pfx>>shift)] == len(es) {
			// One bucket: go on with the next byte.
			if shift == 0 {
				slices.SortFunc(es, r.compare) // equal prefixes
				return
			}
			shift -= 8
			continue
		}
		var next, end [256]int
		sum := 0
		for b, n := range count {
			next[b] = sum
			sum += n
			end[b] = sum
		}
		for b := range 256 {
			for next[b] < end[b] {
				e := es[next[b]]
				d := int(byte(e.pfx >> shift))
				for d != b {
					// Put e in its bucket, carry on with the entry it
					// displaces.
					es[next[d]], e = e, es[next[d]]
					next[d]++
					d = int(byte(e.pfx >> shift))
				}
				es[next[b]] = e
				next[b]++
			}
		}
		start := 0
		for _, n := range count {
			if n > 1 {
				if b := es[start : start+n]; shift == 0 {
					slices.SortFunc(b, r.compare) // equal prefixes
				} else {
					r.radixSort(b, shift-8)
				}
			}
			start += n
		}
		return
	}
}

// insertionSort sorts a few entries.
func (r *run) insertionSort(es []entry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && r.compare(es[j-1], es[j]) > 0; j-- {
			es[j-1], es[j] = es[j], es[j-1]
		}
	}
}
