package command

import (
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// TestGlobalLockQueue: a command waiting for the writer lock shows in
// globalLock.currentQueue.writers while another holds it
// (activeClients.writers), and its wait is counted in
// locks.Global.acquireWaitCount.w once it gets the lock.
func TestGlobalLockQueue(t *testing.T) {
	env := memEnv(t)
	status := func() bson.Doc {
		t.Helper()
		c := ctxWith(t, dbson.D{{Key: "serverStatus", Value: 1}})
		c.Env, c.Reply = env, &bson.Builder{}
		if err := serverStatus(c); err != nil {
			t.Fatal(err)
		}
		return c.Reply.Finish()
	}
	figure := func(d bson.Doc, path ...string) int64 {
		t.Helper()
		v, ok := d.LookupPath(path...)
		if !ok {
			t.Fatalf("serverStatus lacks %v", path)
		}
		n, _ := v.AsInt64()
		return n
	}
	holder := ctxWith(t, dbson.D{{Key: "insert", Value: "c"}})
	holder.Env = env
	release := make(chan struct{})
	held := make(chan struct{})
	go func() {
		_ = holder.WriteTx(kv.NoSync, func(*kv.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	waiter := ctxWith(t, dbson.D{{Key: "insert", Value: "c"}})
	waiter.Env = env
	done := make(chan error)
	go func() { done <- waiter.WriteTx(kv.NoSync, func(*kv.Tx) error { return nil }) }()
	var st bson.Doc
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		st = status()
		if figure(st, "globalLock", "currentQueue", "writers") == 1 || time.Now().After(deadline) {
			break
		}
	}
	if q, a, tot := figure(st, "globalLock", "currentQueue", "writers"), figure(st, "globalLock", "activeClients", "writers"), figure(st, "globalLock", "currentQueue", "total"); q != 1 || a != 1 || tot != 1 {
		t.Fatalf("while one writer waits behind another: queue %d, active %d, queue total %d", q, a, tot)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st = status()
	if q, a := figure(st, "globalLock", "currentQueue", "writers"), figure(st, "globalLock", "activeClients", "writers"); q != 0 || a != 0 {
		t.Fatalf("after both writers: queue %d, active %d", q, a)
	}
	if n, w := figure(st, "locks", "Global", "acquireCount", "w"), figure(st, "locks", "Global", "acquireWaitCount", "w"); n != 2 || w != 1 {
		t.Fatalf("locks.Global: %d acquisitions, %d waited; want 2 and 1", n, w)
	}
	if us := figure(st, "locks", "Global", "timeAcquiringMicros", "w"); us <= 0 {
		t.Fatalf("timeAcquiringMicros.w = %d", us)
	}
}
