package server

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// newLimitedServer runs an in-process server with the given limits; its
// log is returned.
func newLimitedServer(t *testing.T, msgTimeout time.Duration, memory int64) (*Server, *syncLog) {
	t.Helper()
	log := &syncLog{}
	s, err := New(Options{DBPath: "/db", KV: &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20},
		Logger: slog.New(slog.NewTextHandler(log, nil)), MessageTimeout: msgTimeout, MaxRequestMemory: memory})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s, log
}

// syncLog collects log output from any goroutine.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// paddedPing is a ping whose body is about size bytes.
func paddedPing(id int32, size int) []byte {
	body, _ := dbson.Marshal(dbson.D{{Key: "ping", Value: 1}, {Key: "pad", Value: strings.Repeat("x", size)}, {Key: "$db", Value: "admin"}})
	return wire.AppendMsg(nil, id, 0, 0, body)
}

// expectClosed asserts the server closes c within d.
func expectClosed(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	_, err := c.Read(b[:])
	if err == nil {
		t.Fatal("the server sent a byte; want the connection closed")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open after %v", d)
	}
}

func roundTrip(t *testing.T, c net.Conn, msg []byte, d time.Duration) error {
	t.Helper()
	c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write(msg); err != nil {
		return err
	}
	m, err := wire.NewReader(c, 0).ReadMessage()
	if err != nil {
		return err
	}
	if ok, _ := dbson.Raw(m.Msg.Body).Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatalf("reply %v", dbson.Raw(m.Msg.Body))
	}
	return nil
}

func TestSlowSenderIsCut(t *testing.T) {
	s, log := newLimitedServer(t, 200*time.Millisecond, 0)
	// Idle between messages is fine, whatever the timeout.
	idle := pipeConn(s)
	defer idle.Close()
	time.Sleep(400 * time.Millisecond)
	if err := roundTrip(t, idle, pingMsg(1), 5*time.Second); err != nil {
		t.Fatalf("idle connection: %v", err)
	}
	// A message started and not finished within the timeout ends the
	// connection; one byte at a time does not extend it.
	slow := pipeConn(s)
	defer slow.Close()
	msg := paddedPing(2, 1000)
	start := time.Now()
	slow.SetWriteDeadline(time.Now().Add(5 * time.Second))
	for i := 0; i < 40; i++ {
		if _, err := slow.Write(msg[i : i+1]); err != nil {
			break // closed by the server: expected
		}
		time.Sleep(20 * time.Millisecond)
	}
	expectClosed(t, slow, 2*time.Second)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("closed after %v", el)
	}
	if !strings.Contains(log.String(), "message not received in time") {
		t.Errorf("no log line for the slow sender:\n%s", log.String())
	}
	if err := roundTrip(t, idle, pingMsg(3), 5*time.Second); err != nil {
		t.Fatalf("other connection after the slow one: %v", err)
	}
}

func TestOversizedMessage(t *testing.T) {
	s, log := newLimitedServer(t, 0, 0)
	for _, length := range []uint32{wire.MaxMessageSize + 1, 1<<31 - 1, 1 << 31, 3} {
		c := pipeConn(s)
		var hdr [16]byte
		binary.LittleEndian.PutUint32(hdr[:], length)
		binary.LittleEndian.PutUint32(hdr[12:], uint32(wire.OpMsg))
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		c.Write(hdr[:])
		expectClosed(t, c, 2*time.Second)
		c.Close()
	}
	if !strings.Contains(log.String(), "is invalid") {
		t.Errorf("no log line for the bad lengths:\n%s", log.String())
	}
	c := pipeConn(s)
	defer c.Close()
	if err := roundTrip(t, c, pingMsg(1), 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// waitBudget polls the budget until ok accepts its state.
func waitBudget(t *testing.T, s *Server, what string, ok func(budgetState) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(s.mem.state()); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: budget %+v", what, s.mem.state())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRequestMemoryBudget: with a 48 KiB budget, a connection 60 KiB into
// a message holds about 45 KiB of it, so a second one's 30 KiB message
// waits for the first to finish; the budget holds what was received,
// beyond the first 16 KiB of each message.
func TestRequestMemoryBudget(t *testing.T) {
	s, _ := newLimitedServer(t, 10*time.Second, 48<<10)
	a, b := pipeConn(s), pipeConn(s)
	defer a.Close()
	defer b.Close()
	big := paddedPing(1, 60<<10)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := a.Write(big[:len(big)-100]); err != nil {
		t.Fatal(err)
	}
	want := int64(len(big)) - freeRequestBytes
	waitBudget(t, s, "the first message's bytes", func(st budgetState) bool { return st.Used == want && st.Holders == 1 })
	small := paddedPing(2, 30<<10)
	b.SetDeadline(time.Now().Add(10 * time.Second))
	go b.Write(small)
	waitBudget(t, s, "the second message waiting", func(st budgetState) bool { return st.Waiting == 1 })
	if _, err := a.Write(big[len(big)-100:]); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.NewReader(a, 0).ReadMessage(); err != nil {
		t.Fatal(err)
	}
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := wire.NewReader(b, 0).ReadMessage(); err != nil {
		t.Fatalf("the second request did not run after the first finished: %v", err)
	}
	waitBudget(t, s, "all returned", func(st budgetState) bool { return st.Used == 0 && st.Holders == 0 && st.Waiting == 0 })
}

// TestSilentConnectionsHoldNoBudget: connections that announce 47,000,000
// bytes and send nothing more hold none of the budget, so however many
// there are a ping (and a request larger than the free part) still runs
// at once. Before, each reserved its announced size up to the whole
// budget, and every other request waited behind them.
func TestSilentConnectionsHoldNoBudget(t *testing.T) {
	s, _ := newLimitedServer(t, time.Minute, 64<<10)
	var hdr [16]byte
	binary.LittleEndian.PutUint32(hdr[:], 47000000)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(wire.OpMsg))
	for i := 0; i < 1000; i++ {
		c := pipeConn(s)
		defer c.Close()
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(hdr[:]); err != nil { // returns once the server read it
			t.Fatalf("silent connection %d: %v", i, err)
		}
	}
	if st := s.mem.state(); st.Used != 0 || st.Waiting != 0 {
		t.Fatalf("budget %+v with only silent connections, want nothing held", st)
	}
	c := pipeConn(s)
	defer c.Close()
	if err := roundTrip(t, c, pingMsg(1), 5*time.Second); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if err := roundTrip(t, c, paddedPing(2, 40<<10), 5*time.Second); err != nil {
		t.Fatalf("40 KiB ping: %v", err)
	}
}

// TestBudgetBreaksWaitCycle: three connections, each part-way into a
// 60 KiB message with a 64 KiB budget, all wait for more budget while
// holding some; nothing would ever be released, so the oldest goes over
// the limit, and all three finish.
func TestBudgetBreaksWaitCycle(t *testing.T) {
	s, _ := newLimitedServer(t, 10*time.Second, 64<<10)
	var conns []net.Conn
	var msgs [][]byte
	for i := 0; i < 3; i++ {
		c := pipeConn(s)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		msg := paddedPing(int32(i+1), 60<<10)
		if _, err := c.Write(msg[:20<<10]); err != nil {
			t.Fatal(err)
		}
		conns, msgs = append(conns, c), append(msgs, msg)
	}
	// Each holds the 16 KiB of its second step (32 KiB received).
	waitBudget(t, s, "three holders", func(st budgetState) bool { return st.Holders == 3 && st.Used == 48<<10 })
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			go c.Write(msgs[i][20<<10:])
			_, err := wire.NewReader(c, 0).ReadMessage()
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a request did not finish: %v (budget %+v)", err, s.mem.state())
		}
	}
	waitBudget(t, s, "a grant over the limit, then nothing held", func(st budgetState) bool {
		return st.OverLimitGrants > 0 && st.Used == 0 && st.Holders == 0
	})
}

func TestBudgetWaitEndsWithContext(t *testing.T) {
	m := newMemBudget(100)
	if _, _, err := m.acquire(context.Background(), "a", 80, false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, _, err := m.acquire(ctx, "b", 50, false)
		done <- err
	}()
	for m.state().Waiting != 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if st := m.state(); st.Used != 80 || st.Waiting != 0 || st.Holders != 1 {
		t.Fatalf("budget %+v after the cancelled wait", st)
	}
	// The queue is free again: a request that fits is served at once.
	if _, waited, err := m.acquire(context.Background(), "c", 20, false); err != nil || waited {
		t.Fatalf("acquire after the cancelled wait: waited %v, %v", waited, err)
	}
}

// TestBudgetOverLimitByOneMessage: requests that hold part of the budget
// and keep asking for more (doubling, as the reader does) stall together
// again and again; only one of them at a time may go over the limit, so
// the budget is never exceeded by more than one message. (Letting a
// different holder over at each stall let the total climb to 47 times
// the limit with ten holders.)
func TestBudgetOverLimitByOneMessage(t *testing.T) {
	const limit, message, holders = 100, 480, 10
	m := newMemBudget(limit)
	var mu sync.Mutex
	peak := int64(0)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for h := range holders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			held, step := int64(0), int64(5)
			for held < message {
				got, _, err := m.acquire(context.Background(), h, min(step, message-held), held > 0)
				if err != nil {
					t.Error(err)
					return
				}
				held += got
				step *= 2
				mu.Lock()
				peak = max(peak, m.state().Used)
				mu.Unlock()
			}
			m.release(h, held, true)
		}()
	}
	close(start)
	wg.Wait()
	if st := m.state(); st.Used != 0 || st.Holders != 0 {
		t.Fatalf("after every request: %+v", st)
	}
	if peak > limit+message {
		t.Fatalf("the budget held %d at its peak, over limit+one message (%d)", peak, limit+message)
	}
}
