package e2e

import (
	"math/rand/v2"
	"testing"
	"time"
)

// seededRand returns a random source for a crash or nemesis test, seeded
// from the clock, and the seed, which it logs (failure messages can carry
// it too).
func seededRand(t *testing.T) (*rand.Rand, int64) {
	t.Helper()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(uint64(seed), 0)), seed
}
