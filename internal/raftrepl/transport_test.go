package raftrepl

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/wire"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// fakePeer is a member's port as the transport sees it: it records the
// _raftMessages it is sent and answers only those without moreToCome.
type fakePeer struct {
	t  *testing.T
	ln net.Listener

	mu      sync.Mutex
	conns   []net.Conn
	batches [][]uint64 // each moreToCome command's messages' indexes
	beats   int        // acknowledged commands (heartbeats)
	accepts int
	refuse  bool // answer heartbeats with an error
}

func newFakePeer(t *testing.T) *fakePeer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePeer{t: t, ln: ln}
	t.Cleanup(func() {
		ln.Close()
		f.dropAll()
	})
	go f.accept()
	return f
}

func (f *fakePeer) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.accepts++
		f.mu.Unlock()
		go f.serve(c)
	}
}

// dropAll closes every connection (the peer restarted).
func (f *fakePeer) dropAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

func (f *fakePeer) serve(c net.Conn) {
	r := wire.NewReader(c, 0)
	for {
		m, err := r.ReadMessage()
		if err != nil {
			return
		}
		body := bson.Doc(bytes.Clone(m.Msg.Body))
		if v, ok := body.Lookup("$db"); !ok || v.StringValue() != "admin" {
			f.t.Errorf("a command on %v, want admin", v)
		}
		msgs, from, err := DecodeMessages(body)
		if err != nil || from != 1 {
			f.t.Errorf("decoding: from %d, %v", from, err)
			return
		}
		if m.Msg.Flags&wire.FlagMoreToCome == 0 {
			if len(msgs) != 0 {
				f.t.Errorf("an acknowledged command with %d messages", len(msgs))
			}
			f.mu.Lock()
			f.beats++
			refuse := f.refuse
			f.mu.Unlock()
			var b bson.Builder
			if refuse {
				b.AppendDouble("ok", 0)
				b.AppendString("errmsg", "no replset config has been received")
				b.AppendInt32("code", 94)
			} else {
				b.AppendDouble("ok", 1)
			}
			if _, err := c.Write(wire.AppendMsg(nil, 1, m.Header.RequestID, 0, b.Finish())); err != nil {
				return
			}
			continue
		}
		var idx []uint64
		for _, m := range msgs {
			idx = append(idx, m.GetIndex())
		}
		f.mu.Lock()
		f.batches = append(f.batches, idx)
		f.mu.Unlock()
	}
}

func (f *fakePeer) snapshot() (batches [][]uint64, beats, accepts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]uint64(nil), f.batches...), f.beats, f.accepts
}

func msgTo(to, index uint64) *pb.Message {
	return &pb.Message{Type: pb.MessageType_MsgApp.Enum(), To: proto.Uint64(to), From: proto.Uint64(1), Index: proto.Uint64(index)}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTransportMoreToCome: a Ready's messages for a peer travel as one
// moreToCome command, in order, on one connection; the peer's health and
// round trip come from acknowledged heartbeats; after the peer drops the
// connection the transport reports it unreachable, connects again and
// delivers what is sent next.
func TestTransportMoreToCome(t *testing.T) {
	f2, f3 := newFakePeer(t), newFakePeer(t)
	var mu sync.Mutex
	reported := map[uint64]int{}
	tr := newTransport("rs0", 1, MemberAuth{}, slog.New(slog.NewTextHandler(io.Discard, nil)), func(id uint64) {
		mu.Lock()
		reported[id]++
		mu.Unlock()
	})
	defer tr.stop()
	tr.setPeers(map[uint64]string{1: "self", 2: f2.ln.Addr().String(), 3: f3.ln.Addr().String()})

	// The first heartbeat goes out when the connection is made.
	tr.send([]*pb.Message{msgTo(2, 1)})
	waitFor(t, "the first heartbeat's reply", func() bool {
		pi, _ := tr.info(2)
		return pi.up
	})
	pi, ok := tr.info(2)
	if !ok || pi.rtt <= 0 || pi.lastOK.IsZero() {
		t.Fatalf("peer 2: %+v", pi)
	}
	if _, ok := tr.info(1); ok {
		t.Fatal("the member itself is a peer")
	}
	// One Ready: messages for both peers, interleaved.
	tr.send([]*pb.Message{msgTo(2, 2), msgTo(3, 2), msgTo(2, 3), msgTo(3, 3), msgTo(2, 4), msgTo(9, 1)})
	waitFor(t, "peer 3's messages", func() bool { b, _, _ := f3.snapshot(); return len(b) > 0 })
	waitFor(t, "peer 2's messages", func() bool {
		b, _, _ := f2.snapshot()
		n := 0
		for _, x := range b {
			n += len(x)
		}
		return n == 4
	})
	b2, _, acc := f2.snapshot()
	var got []uint64
	for _, b := range b2 {
		got = append(got, b...)
	}
	if want := []uint64{1, 2, 3, 4}; !slices.Equal(got, want) || acc != 1 {
		t.Fatalf("peer 2 got %v in %d connections, want %v in one", got, acc, want)
	}
	if last := b2[len(b2)-1]; !slices.Equal(last, []uint64{2, 3, 4}) {
		t.Fatalf("the Ready's messages for peer 2 came as %v, want one command [2 3 4]", b2)
	}
	b3, _, _ := f3.snapshot()
	if !slices.Equal(b3[0], []uint64{2, 3}) {
		t.Fatalf("peer 3 got %v, want [[2 3]]", b3)
	}

	// The peer drops its connection: the transport notices (a write or
	// the reader fails), reports the peer and connects again.
	f2.dropAll()
	waitFor(t, "a new connection to peer 2", func() bool {
		tr.send([]*pb.Message{msgTo(2, 100)})
		_, _, acc := f2.snapshot()
		return acc >= 2
	})
	waitFor(t, "messages on the new connection", func() bool {
		tr.send([]*pb.Message{msgTo(2, 200)})
		b, _, _ := f2.snapshot()
		return len(b) > 0 && b[len(b)-1][0] == 200
	})
	mu.Lock()
	n := reported[2]
	mu.Unlock()
	if n == 0 {
		t.Fatal("the dropped connection was not reported")
	}
	waitFor(t, "peer 2 up again", func() bool { pi, _ := tr.info(2); return pi.up })
}

// TestTransportPausedPeer: a peer that takes messages but answers no
// heartbeat (paused) is reported unreachable and shown down.
func TestTransportPausedPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var cmu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			cmu.Lock()
			conns = append(conns, c)
			cmu.Unlock()
			go io.Copy(io.Discard, c) // reads, never answers
		}
	}()
	defer func() {
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
	}()
	reported := make(chan uint64, 16)
	tr := newTransport("rs0", 1, MemberAuth{}, slog.New(slog.NewTextHandler(io.Discard, nil)), func(id uint64) {
		select {
		case reported <- id:
		default:
		}
	})
	defer tr.stop()
	tr.setPeers(map[uint64]string{2: ln.Addr().String()})
	tr.send([]*pb.Message{msgTo(2, 1)})
	select {
	case id := <-reported:
		if id != 2 {
			t.Fatalf("reported %d", id)
		}
	case <-time.After(sendTimeout + 3*heartbeat):
		t.Fatal("a peer answering no heartbeat was not reported")
	}
	if pi, _ := tr.info(2); pi.up {
		t.Fatalf("a peer answering no heartbeat is up: %+v", pi)
	}
}

// TestTransportErrorReply: a peer answering heartbeats with an error is
// down and reported, on the same connection (it is sound), and up again
// once it answers ok.
func TestTransportErrorReply(t *testing.T) {
	f := newFakePeer(t)
	f.refuse = true
	reported := make(chan uint64, 64)
	tr := newTransport("rs0", 1, MemberAuth{}, slog.New(slog.NewTextHandler(io.Discard, nil)), func(id uint64) {
		select {
		case reported <- id:
		default:
		}
	})
	defer tr.stop()
	tr.setPeers(map[uint64]string{2: f.ln.Addr().String()})
	tr.send([]*pb.Message{msgTo(2, 1)})
	select {
	case <-reported:
	case <-time.After(5 * time.Second):
		t.Fatal("an error reply was not reported")
	}
	if pi, _ := tr.info(2); pi.up {
		t.Fatalf("up after an error reply: %+v", pi)
	}
	f.mu.Lock()
	f.refuse = false
	f.mu.Unlock()
	waitFor(t, "peer 2 up", func() bool { pi, _ := tr.info(2); return pi.up })
	if _, beats, acc := f.snapshot(); acc != 1 || beats < 2 {
		t.Fatalf("%d connections, %d heartbeats; want 1 connection, at least 2 heartbeats", acc, beats)
	}
}

// TestReplyError: ok: 1 is no error; otherwise the message and code.
func TestReplyError(t *testing.T) {
	var b bson.Builder
	b.AppendInt32("ok", 1)
	if err := replyError(b.Finish()); err != nil {
		t.Fatal(err)
	}
	b.Reset(nil)
	b.AppendDouble("ok", 0)
	b.AppendString("errmsg", "not authorized")
	b.AppendInt32("code", 13)
	err := replyError(b.Finish())
	if err == nil || err.Error() != "not authorized (code 13)" {
		t.Fatalf("%v", err)
	}
}
