package main

import (
	"math"
	"math/rand/v2"
	"sync"
)

// The key and request generators of YCSB's core package
// (site.ycsb.generator), with the same formulas and constants, so that a
// workload here picks the same distribution of keys as YCSB does. Each
// client goroutine owns its generators and its random source; the only
// shared one is the insert key sequence, as in YCSB.

// fnvHash64 is YCSB's Utils.fnvhash64: FNV-1 over the eight bytes of val,
// low byte first, made non-negative as Java's Math.abs does (Math.abs of
// the most negative long stays negative; that value is kept as is).
func fnvHash64(val int64) int64 {
	const offsetBasis = int64(-3750763034362895579) // 0xCBF29CE484222325
	const prime = int64(1099511628211)
	h := offsetBasis
	for i := 0; i < 8; i++ {
		octet := val & 0xff
		val >>= 8
		h ^= octet
		h *= prime
	}
	if h < 0 && h != math.MinInt64 {
		h = -h
	}
	return h
}

// zipfianConstant is YCSB's default zipfian constant.
const zipfianConstant = 0.99

// zipfian is YCSB's ZipfianGenerator (Gray et al., "Quickly generating
// billion-record synthetic databases"): item 0 is the most popular. When
// the item count grows (the latest distribution), zeta is extended
// incrementally, and eta keeps using the constructor's item count, as
// YCSB's does.
type zipfian struct {
	items, base         int64
	theta, alpha, zeta2 float64
	zetan, eta          float64
	countForZeta        int64
	rng                 *rand.Rand
}

func zetaSum(start, n int64, theta, initial float64) float64 {
	sum := initial
	for i := start; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// newZipfian covers [min, max]; zetan, when non-zero, is the precomputed
// zeta of the item count (YCSB passes one for its 10^10-item scrambled
// generator, whose zeta would take minutes to sum).
func newZipfian(min, max int64, theta, zetan float64, rng *rand.Rand) *zipfian {
	z := &zipfian{items: max - min + 1, base: min, theta: theta, rng: rng}
	z.zeta2 = zetaSum(0, 2, theta, 0)
	z.alpha = 1 / (1 - theta)
	if zetan == 0 {
		zetan = zetaSum(0, z.items, theta, 0)
	}
	z.zetan = zetan
	z.countForZeta = z.items
	z.eta = (1 - math.Pow(2/float64(z.items), 1-theta)) / (1 - z.zeta2/z.zetan)
	return z
}

// next draws from [base, base+itemCount).
func (z *zipfian) next(itemCount int64) int64 {
	if itemCount > z.countForZeta {
		z.zetan = zetaSum(z.countForZeta, itemCount, z.theta, z.zetan)
		z.countForZeta = itemCount
		z.eta = (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2/z.zetan)
	}
	u := z.rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return z.base + 1
	}
	return z.base + int64(float64(itemCount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// Constants of YCSB's ScrambledZipfianGenerator: it draws from a zipfian
// over 10^10 items whose zeta (for the constant 0.99) is precomputed.
const (
	scrambledItemCount = 10000000000
	scrambledZetan     = 26.46902820178302
)

// keyChooser picks the next key number of a read, update or scan.
type keyChooser interface{ next() int64 }

// scrambledZipfian is YCSB's ScrambledZipfianGenerator: popular items are
// spread over the key space by hashing.
type scrambledZipfian struct {
	min, count int64
	gen        *zipfian
}

func newScrambledZipfian(min, max int64, rng *rand.Rand) *scrambledZipfian {
	return &scrambledZipfian{min: min, count: max - min + 1,
		gen: newZipfian(0, scrambledItemCount-1, zipfianConstant, scrambledZetan, rng)}
}

func (s *scrambledZipfian) next() int64 {
	v := s.gen.next(scrambledItemCount)
	return s.min + fnvHash64(v)%s.count
}

// uniform is YCSB's UniformLongGenerator over [lo, hi].
type uniform struct {
	lo, hi int64
	rng    *rand.Rand
}

func (u *uniform) next() int64 { return u.lo + u.rng.Int64N(u.hi-u.lo+1) }

// skewedLatest is YCSB's SkewedLatestGenerator: recently inserted keys are
// the most popular.
type skewedLatest struct {
	basis *ackCounter
	zipf  *zipfian
}

func newSkewedLatest(basis *ackCounter, rng *rand.Rand) *skewedLatest {
	return &skewedLatest{basis: basis, zipf: newZipfian(0, basis.last()-1, zipfianConstant, 0, rng)}
}

func (s *skewedLatest) next() int64 {
	max := s.basis.last()
	return max - s.zipf.next(max)
}

// hotspot is YCSB's HotspotIntegerGenerator: hotOpn of the operations go
// to the first hotSet fraction of [lo, hi].
type hotspot struct {
	lo, hot, cold int64
	hotOpn        float64
	rng           *rand.Rand
}

func newHotspot(lo, hi int64, hotSet, hotOpn float64, rng *rand.Rand) *hotspot {
	n := hi - lo + 1
	hot := int64(float64(n) * hotSet)
	return &hotspot{lo: lo, hot: hot, cold: n - hot, hotOpn: hotOpn, rng: rng}
}

func (h *hotspot) next() int64 {
	if h.rng.Float64() < h.hotOpn {
		return h.lo + h.rng.Int64N(h.hot)
	}
	return h.lo + h.hot + h.rng.Int64N(h.cold)
}

// ackCounter is YCSB's AcknowledgedCounterGenerator: inserts take the next
// number, and last() is the highest number below which every insert has
// been acknowledged, so that reads never ask for a key still being
// inserted.
type ackCounter struct {
	mu      sync.Mutex
	counter int64
	limit   int64
	acked   map[int64]bool
}

// newAckCounter starts at start: keys [0, start) exist.
func newAckCounter(start int64) *ackCounter {
	return &ackCounter{counter: start, limit: start - 1, acked: map[int64]bool{}}
}

func (a *ackCounter) nextInsert() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.counter
	a.counter++
	return v
}

func (a *ackCounter) acknowledge(v int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acked[v] = true
	for a.acked[a.limit+1] {
		delete(a.acked, a.limit+1)
		a.limit++
	}
}

func (a *ackCounter) last() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit
}
