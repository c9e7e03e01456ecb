package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// TestRaftTransactionAnomalies runs TestTransactionAnomalies' workload
// and history checks on a three-member set, through the replica-set URI:
// transactions with readConcern "snapshot" and writeConcern "majority",
// plain reads and writes with "majority", while the primary is killed
// (SIGKILL) at random moments and restarted on its data (it rejoins as a
// secondary, taking back what the set did not commit). Every commit the
// driver acknowledged must survive the kills, no aborted or rolled-back
// write may be visible, and no cycle but write skew may appear. Bounded
// to about 20 s of workload; CAIRN_LONG_TXN=1 runs 5 minutes. The seed is
// printed (CAIRN_TXN_SEED reruns one).
func TestRaftTransactionAnomalies(t *testing.T) {
	dur := 20 * time.Second
	if os.Getenv("CAIRN_LONG_TXN") == "1" {
		dur = 5 * time.Minute
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CAIRN_TXN_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (CAIRN_TXN_SEED), %v", seed, dur)
	s := startRaftSet(t, 3, nil)
	c := s.client(options.Client().SetWriteConcern(writeconcern.Majority()).SetReadConcern(readconcern.Majority()).
		SetHeartbeatInterval(heartbeat))
	var mu sync.Mutex
	kills := 0
	crash := func() {
		mu.Lock()
		defer mu.Unlock()
		p := -1
		deadline := time.Now().Add(30 * time.Second)
		for p < 0 && time.Now().Before(deadline) {
			if p = s.primary(); p < 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if p < 0 {
			t.Errorf("no primary to kill\n%s", s.logs())
			return
		}
		t.Logf("nemesis: kill -9 the primary, member %d", p)
		s.members[p].Kill()
		kills++
		s.waitOtherPrimary(p)
		s.start(p)
	}
	runTxnAnomalies(t, seed, dur, anomalyTarget{
		client: func() *mongo.Client { return c },
		crash:  crash,
		kills:  func() int { mu.Lock(); defer mu.Unlock(); return kills },
		// An election takes about a second: a kill every 3-6 s.
		pause: func(r *rand.Rand) time.Duration { return time.Duration(3000+r.IntN(3000)) * time.Millisecond },
		sess: options.Session().SetDefaultTransactionOptions(options.Transaction().
			SetReadConcern(readconcern.Snapshot()).SetWriteConcern(writeconcern.Majority())),
	})
}
