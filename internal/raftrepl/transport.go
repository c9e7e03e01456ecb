package raftrepl

// The transport: Raft messages between members travel over the MongoDB
// wire protocol, on each member's ordinary host:port, as the internal
// command
//
//	{_raftMessages: 1, setName, from: <raft id>, msgs: [BinData, ...], $db: "admin"}
//
// sent as OP_MSG with the moreToCome flag on one persistent connection per
// peer (peerconn.go): the peer runs the commands of a connection in order
// and answers none of them, so a batch costs one write and no round trip.
// Each peer has a bounded queue of the Readys' messages for it and one
// sender goroutine that writes what has queued up as one command; when the
// queue is full (the peer is slow, paused or gone) messages are dropped,
// which Raft tolerates (it resends), and a failed write or connection
// reports the peer unreachable so that the leader probes it instead of
// streaming to it; the connection is made again after a backoff. Every
// heartbeat period the peer gets the same command without moreToCome and
// without messages: its reply gives every member the health and round
// trip of every other (replSetGetStatus), as mongod's heartbeats between
// all members, and a reply not back within sendTimeout fails the
// connection (a paused peer). While the peer is down (no heartbeat
// answered ok since a failure) the heartbeat comes every downBeat and
// after every batch, so that the peer shows healthy as soon as it is. The receiving member steps the messages
// into its node (Node.Receive). With access control on, the members
// authenticate as __system with the --keyFile key, and the command needs
// the internal action only __system holds (refused otherwise, whether or
// not a reply is wanted); with --tlsMode preferTLS or requireTLS they
// connect with TLS (MemberAuth).

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// CommandName is the internal command that carries Raft messages.
const CommandName = "_raftMessages"

const (
	// peerQueue bounds the Readys' batches waiting for one peer.
	peerQueue = 1024
	// maxBatchBytes bounds one command's messages.
	maxBatchBytes = 8 << 20
	// sendTimeout bounds one write (a paused peer) and the wait for a
	// heartbeat's reply.
	sendTimeout = 2 * time.Second
	// heartbeat is the period of the acknowledged, empty command that
	// gives a peer's health and round trip (mongod's
	// heartbeatIntervalMillis is 2 s).
	heartbeat = time.Second
	// minBackoff and maxBackoff bound the wait before connecting again
	// after a failure; it doubles with each failure in a row.
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
	// downBeat is the heartbeat period while the peer is down, and the
	// sender also sends one after each batch until the peer answers, so
	// that the peer shows healthy again as soon as it answers (as when
	// every batch was a command with a reply).
	downBeat = 100 * time.Millisecond
)

// transport sends messages to the other members.
type transport struct {
	set    string
	from   uint64
	auth   MemberAuth // the members' key (--keyFile) and TLS
	log    *slog.Logger
	report func(id uint64) // the peer is unreachable

	mu    sync.Mutex
	peers map[uint64]*peer
	done  chan struct{}
	wg    sync.WaitGroup
}

type peer struct {
	id   uint64
	host string
	q    chan []*pb.Message // a Ready's messages for the peer, each
	// lastOK is when a heartbeat's reply last came (replSetGetStatus'
	// lastHeartbeat); rtt its round trip (pingMs); fails the failures
	// since.
	mu     sync.Mutex
	lastOK time.Time
	rtt    time.Duration
	fails  int
	// conn is the open connection, closed by shut (the sender may be
	// blocked in a write to a paused peer); closed once shut.
	conn   *peerConn
	closed bool
}

func newTransport(set string, from uint64, auth MemberAuth, log *slog.Logger, report func(uint64)) *transport {
	return &transport{set: set, from: from, auth: auth, log: log, report: report, peers: map[uint64]*peer{},
		done: make(chan struct{})}
}

// setPeers makes the peers exactly hosts (raft id → host:port).
func (t *transport) setPeers(hosts map[uint64]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, p := range t.peers {
		if h, ok := hosts[id]; !ok || h != p.host {
			p.shut()
			delete(t.peers, id)
		}
	}
	for id, h := range hosts {
		if id == t.from {
			continue
		}
		if _, ok := t.peers[id]; ok {
			continue
		}
		p := &peer{id: id, host: h, q: make(chan []*pb.Message, peerQueue)}
		t.peers[id] = p
		t.wg.Add(1)
		go t.run(p)
	}
}

// send queues a Ready's msgs for their peers, one batch per peer,
// dropping what a full queue cannot take.
func (t *transport) send(msgs []*pb.Message) {
	if len(msgs) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var seen [8]uint64
	done := seen[:0]
	for i, m := range msgs {
		to := m.GetTo()
		if slices.Contains(done, to) {
			continue
		}
		done = append(done, to)
		p := t.peers[to]
		if p == nil {
			continue
		}
		var batch []*pb.Message
		for _, m := range msgs[i:] {
			if m.GetTo() == to {
				batch = append(batch, m)
			}
		}
		select {
		case p.q <- batch:
		default:
		}
	}
}

// peerInfo is what replSetGetStatus shows of a peer.
type peerInfo struct {
	lastOK time.Time
	rtt    time.Duration
	up     bool
}

func (t *transport) info(id uint64) (peerInfo, bool) {
	t.mu.Lock()
	p := t.peers[id]
	t.mu.Unlock()
	if p == nil {
		return peerInfo{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return peerInfo{lastOK: p.lastOK, rtt: p.rtt, up: p.fails == 0 && !p.lastOK.IsZero()}, true
}

func (t *transport) stop() {
	t.mu.Lock()
	select {
	case <-t.done:
	default:
		close(t.done)
	}
	for id, p := range t.peers {
		p.shut()
		delete(t.peers, id)
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// shut ends p's sender: its queue closes, and its connection, so that a
// write under way returns at once. Under t.mu.
func (p *peer) shut() {
	close(p.q)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.conn != nil {
		p.conn.close()
	}
}

// adopt makes c p's connection, unless p is shut.
func (p *peer) adopt(c *peerConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conn = c
	return true
}

// drop closes c, p's connection.
func (p *peer) drop(c *peerConn) {
	p.mu.Lock()
	if p.conn == c {
		p.conn = nil
	}
	p.mu.Unlock()
	c.close()
}

// sender is the state of one peer's sender goroutine (run).
type sender struct {
	t       *transport
	p       *peer
	c       *peerConn // nil: not connected
	hbSent  time.Time // when the heartbeat waiting for its reply was sent
	retryAt time.Time // no connection before
	backoff time.Duration
	enc     encoder
	// down: no heartbeat answered ok since the last failure; beat ticks
	// every heartbeat, every downBeat while down.
	down bool
	beat *time.Ticker
}

// setDown sets s.down and the heartbeat period that goes with it.
func (s *sender) setDown(down bool) {
	if down == s.down {
		return
	}
	s.down = down
	if down {
		s.beat.Reset(downBeat)
	} else {
		s.beat.Reset(heartbeat)
	}
}

// run sends p's queue until it is closed.
func (t *transport) run(p *peer) {
	defer t.wg.Done()
	// Down until the first heartbeat's reply.
	s := &sender{t: t, p: p, backoff: minBackoff, down: true, beat: time.NewTicker(downBeat)}
	defer s.beat.Stop()
	defer func() {
		if s.c != nil {
			p.drop(s.c)
		}
	}()
	var batch []*pb.Message
	for {
		var replies <-chan error
		if s.c != nil {
			replies = s.c.replies
		}
		select {
		case msgs, ok := <-p.q:
			if !ok {
				return
			}
			batch = append(batch[:0], msgs...)
			size := 0
			for _, m := range msgs {
				size += proto.Size(m)
			}
		more:
			for size < maxBatchBytes {
				select {
				case msgs, ok := <-p.q:
					if !ok {
						return
					}
					batch = append(batch, msgs...)
					for _, m := range msgs {
						size += proto.Size(m)
					}
				default:
					break more
				}
			}
			if !s.connect() {
				continue // dropped: Raft resends
			}
			if err := s.c.write(s.enc.encode(t, batch), false, sendTimeout); err != nil {
				s.fail(fmt.Errorf("sending Raft messages: %w", err))
			} else if s.down && s.hbSent.IsZero() {
				s.sendBeat()
			}
			clear(batch) // the messages are garbage once written
		case err, ok := <-replies:
			if !ok && err == nil {
				err = errors.New("connection closed")
			}
			var ce *commandError
			if errors.As(err, &ce) {
				// The peer answered with an error (say, it has no
				// configuration yet): down, but the connection is sound.
				s.hbSent = time.Time{}
				s.setDown(true)
				s.failed(err)
				continue
			}
			if err != nil {
				s.fail(err)
				continue
			}
			t.reachable(p, time.Since(s.hbSent))
			s.hbSent = time.Time{}
			s.backoff = minBackoff
			s.setDown(false)
		case <-s.beat.C:
			switch {
			case !s.hbSent.IsZero():
				if time.Since(s.hbSent) > sendTimeout {
					s.fail(fmt.Errorf("no heartbeat reply in %v", sendTimeout))
				}
			case s.c == nil:
				s.connect() // and its first heartbeat
			default:
				s.sendBeat()
			}
		}
	}
}

// connect makes the connection if there is none and the backoff allows,
// and sends its first heartbeat; it reports whether there is one.
func (s *sender) connect() bool {
	if s.c != nil {
		return true
	}
	if time.Now().Before(s.retryAt) {
		return false
	}
	c, err := dialPeer(s.p.host, s.t.auth)
	if err != nil {
		s.fail(err)
		return false
	}
	if !s.p.adopt(c) {
		c.close()
		return false
	}
	s.c = c
	s.sendBeat()
	return s.c != nil
}

// sendBeat sends a heartbeat: the command without messages, acknowledged.
func (s *sender) sendBeat() {
	s.hbSent = time.Now()
	if err := s.c.write(s.enc.encode(s.t, nil), true, sendTimeout); err != nil {
		s.fail(fmt.Errorf("sending a heartbeat: %w", err))
	}
}

// fail closes the connection, sets the backoff and reports the peer
// unreachable.
func (s *sender) fail(err error) {
	if s.c != nil {
		s.p.drop(s.c)
		s.c = nil
	}
	s.hbSent = time.Time{}
	s.setDown(true)
	s.retryAt = time.Now().Add(s.backoff)
	s.backoff = min(2*s.backoff, maxBackoff)
	s.failed(err)
}

// failed counts a failure, logs the first of a series and reports the
// peer unreachable.
func (s *sender) failed(err error) {
	p := s.p
	p.mu.Lock()
	p.fails++
	first := p.fails == 1
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return
	}
	if first {
		s.t.log.Info("A replica set member is unreachable", "c", "REPL", "host", p.host, "error", err.Error())
	}
	s.t.report(p.id)
}

// reachable records a heartbeat's reply after rtt.
func (t *transport) reachable(p *peer, rtt time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fails > 0 {
		t.log.Info("A replica set member is reachable again", "c", "REPL", "host", p.host)
	}
	p.fails = 0
	p.lastOK = time.Now()
	p.rtt = rtt
}

// encoder builds _raftMessages commands into buffers it reuses.
type encoder struct {
	body, data []byte
}

// encode builds the _raftMessages command carrying batch, as raw BSON,
// valid until the next call.
func (e *encoder) encode(t *transport, batch []*pb.Message) bson.Doc {
	b := bson.NewBuilder(e.body)
	b.AppendInt32(CommandName, 1)
	b.AppendString("setName", t.set)
	b.AppendInt64("from", int64(t.from))
	b.StartArray("msgs")
	i := 0
	for _, m := range batch {
		var err error
		if e.data, err = (proto.MarshalOptions{}).MarshalAppend(e.data[:0], m); err != nil {
			continue // Raft resends what does not arrive
		}
		b.AppendBinary(bson.Index(i), 0, e.data)
		i++
	}
	b.End()
	b.AppendString("$db", "admin")
	doc := b.Finish()
	e.body = doc[:0]
	if cap(e.body) > 1<<20 {
		e.body, e.data = nil, nil // do not keep a large batch's buffers
	}
	return doc
}

// DecodeMessages parses a _raftMessages command's msgs.
func DecodeMessages(body bson.Doc) ([]*pb.Message, uint64, error) {
	var out []*pb.Message
	var from uint64
	if v, ok := body.Lookup("from"); ok {
		n, _ := v.AsInt64()
		from = uint64(n)
	}
	v, ok := body.Lookup("msgs")
	if !ok || v.Type != bson.TypeArray {
		return nil, 0, errBadMessages
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Value.Type != bson.TypeBinary {
			return nil, 0, errBadMessages
		}
		_, data := e.Value.Binary()
		m := &pb.Message{}
		if err := proto.Unmarshal(data, m); err != nil {
			return nil, 0, errBadMessages
		}
		out = append(out, m)
	}
	return out, from, nil
}
