package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
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

// TestRequestMemoryBudget: with a 64 KiB budget, a connection holding a
// 60 KiB message in flight makes a second one's 10 KiB message wait until
// the first is done.
func TestRequestMemoryBudget(t *testing.T) {
	s, _ := newLimitedServer(t, 10*time.Second, 64<<10)
	a, b := pipeConn(s), pipeConn(s)
	defer a.Close()
	defer b.Close()
	big := paddedPing(1, 60<<10)
	a.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := a.Write(big[:100]); err != nil {
		t.Fatal(err)
	}
	// Wait until a's length is read and its bytes are taken from the budget.
	for deadline := time.Now().Add(5 * time.Second); s.mem.sem.TryAcquire(s.mem.limit); {
		s.mem.sem.Release(s.mem.limit)
		if time.Now().After(deadline) {
			t.Fatal("the first message was never admitted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	small := paddedPing(2, 10<<10)
	b.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := b.Write(small); err != nil {
		t.Fatal(err)
	}
	b.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	rb := wire.NewReader(b, 0)
	if _, err := rb.ReadMessage(); err == nil {
		t.Fatal("the second request ran although the budget was spent")
	}
	if _, err := a.Write(big[100:]); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.NewReader(a, 0).ReadMessage(); err != nil {
		t.Fatal(err)
	}
	if err := roundTripRead(b, 5*time.Second); err != nil {
		t.Fatalf("the second request did not run after the first finished: %v", err)
	}
}

func roundTripRead(c net.Conn, d time.Duration) error {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.ReadFull(c, make([]byte, 16))
	return err
}
