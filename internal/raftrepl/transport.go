package raftrepl

// The transport: Raft messages between members travel over the MongoDB
// wire protocol, on each member's ordinary host:port, as the internal
// command
//
//	{_raftMessages: 1, setName, from: <raft id>, msgs: [BinData, ...], $db: "admin"}
//
// sent with the official Go driver (one direct connection pool per peer).
// Each peer has a bounded queue and one sender goroutine that sends what
// has queued up in one command; when the queue is full (the peer is slow,
// paused or gone) messages are dropped, which Raft tolerates (it resends),
// and a failed send reports the peer unreachable so that the leader probes
// it instead of streaming to it. A peer sent nothing for a heartbeat
// period gets an empty command, so that every member knows the health and
// round trip of every other (replSetGetStatus), as mongod's heartbeats
// between all members. The receiving member steps the messages
// into its node (Node.Receive). With access control on, the members
// authenticate as __system with the --keyFile key (memberClientOptions),
// and the command needs the internal action only __system holds; with
// --tlsMode preferTLS or requireTLS they connect with TLS (MemberAuth).

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/protobuf/proto"
)

// CommandName is the internal command that carries Raft messages.
const CommandName = "_raftMessages"

const (
	// peerQueue bounds the messages waiting for one peer.
	peerQueue = 4096
	// maxBatchBytes bounds one command's messages.
	maxBatchBytes = 8 << 20
	// sendTimeout bounds one send (a paused peer).
	sendTimeout = 2 * time.Second
	// heartbeat is how long a peer may go without a command before it is
	// sent an empty one (mongod's heartbeatIntervalMillis is 2 s).
	heartbeat = time.Second
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
	// ctx ends when the transport stops (cancel, with done closed).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type peer struct {
	id   uint64
	host string
	q    chan *pb.Message
	// lastOK is when a send last succeeded (replSetGetStatus'
	// lastHeartbeat); rtt its round trip (pingMs).
	mu     sync.Mutex
	lastOK time.Time
	rtt    time.Duration
	fails  int
	// lastSent is when a send last started: a peer idle for a heartbeat
	// period gets an empty command, so that every member knows every
	// other's health (Raft's own messages go between the leader and the
	// followers only).
	lastSent time.Time
}

func newTransport(set string, from uint64, auth MemberAuth, log *slog.Logger, report func(uint64)) *transport {
	ctx, cancel := context.WithCancel(context.Background())
	return &transport{set: set, from: from, auth: auth, log: log, report: report, peers: map[uint64]*peer{},
		done: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// setPeers makes the peers exactly hosts (raft id → host:port).
func (t *transport) setPeers(hosts map[uint64]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, p := range t.peers {
		if h, ok := hosts[id]; !ok || h != p.host {
			close(p.q)
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
		p := &peer{id: id, host: h, q: make(chan *pb.Message, peerQueue)}
		t.peers[id] = p
		t.wg.Add(1)
		go t.run(p)
	}
}

// send queues msgs for their peers, dropping what a full queue cannot take.
func (t *transport) send(msgs []*pb.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range msgs {
		p := t.peers[m.GetTo()]
		if p == nil {
			continue
		}
		select {
		case p.q <- m:
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
		t.cancel()
	}
	for id, p := range t.peers {
		close(p.q)
		delete(t.peers, id)
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// run sends p's queue until it is closed.
func (t *transport) run(p *peer) {
	defer t.wg.Done()
	opts := memberClientOptions(p.host, t.auth).SetServerSelectionTimeout(time.Second).
		SetHeartbeatInterval(time.Second).SetMaxPoolSize(2)
	client, err := mongo.Connect(opts)
	if err != nil {
		t.log.Error("Cannot create a client for a replica set member", "c", "REPL", "host", p.host, "error", err.Error())
		for range p.q {
		}
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = client.Disconnect(ctx)
	}()
	var batch []*pb.Message
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		var m *pb.Message
		select {
		case msg, ok := <-p.q:
			if !ok {
				return
			}
			m = msg
		case <-beat.C:
			p.mu.Lock()
			idle := time.Since(p.lastSent) >= heartbeat
			p.mu.Unlock()
			if idle {
				t.sendBatch(client, p, nil) // a heartbeat: no messages
			}
			continue
		}
		batch = append(batch[:0], m)
		size := proto.Size(m)
	more:
		for size < maxBatchBytes {
			select {
			case m, ok := <-p.q:
				if !ok {
					break more
				}
				batch = append(batch, m)
				size += proto.Size(m)
			default:
				break more
			}
		}
		t.sendBatch(client, p, batch)
	}
}

func (t *transport) sendBatch(client *mongo.Client, p *peer, batch []*pb.Message) {
	cmd := t.encode(batch)
	// t.ctx ends at stop: a send under way then returns at once.
	ctx, cancel := context.WithTimeout(t.ctx, sendTimeout)
	defer cancel()
	start := time.Now()
	p.mu.Lock()
	p.lastSent = start
	p.mu.Unlock()
	err := client.Database("admin").RunCommand(ctx, []byte(cmd)).Err()
	p.mu.Lock()
	if err != nil {
		p.fails++
		first := p.fails == 1
		p.mu.Unlock()
		if first {
			t.log.Info("A replica set member is unreachable", "c", "REPL", "host", p.host, "error", err.Error())
		}
		t.report(p.id)
		return
	}
	if p.fails > 0 {
		t.log.Info("A replica set member is reachable again", "c", "REPL", "host", p.host)
	}
	p.fails = 0
	p.lastOK = time.Now()
	p.rtt = p.lastOK.Sub(start)
	p.mu.Unlock()
}

// encode builds the _raftMessages command carrying batch, as raw BSON: the
// driver takes it as it is, without reflecting over a document of
// values for every send.
func (t *transport) encode(batch []*pb.Message) bson.Doc {
	size := 64 + len(t.set)
	for _, m := range batch {
		size += proto.Size(m) + 16
	}
	b := bson.NewBuilder(make([]byte, 0, size))
	b.AppendInt32(CommandName, 1)
	b.AppendString("setName", t.set)
	b.AppendInt64("from", int64(t.from))
	b.StartArray("msgs")
	var data []byte
	i := 0
	for _, m := range batch {
		var err error
		if data, err = (proto.MarshalOptions{}).MarshalAppend(data[:0], m); err != nil {
			continue // Raft resends what does not arrive
		}
		b.AppendBinary(strconv.Itoa(i), 0, data)
		i++
	}
	b.End()
	return b.Finish()
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
