// Package netproxy is a TCP proxy in front of one cairnd member that a
// test controls, to cut, slow and disturb the links between the members
// of a replica set on one machine (the nemesis of the Jepsen-style tests).
//
// Each member of the set is started with --replHost set to its proxy's
// address, so that the other members and the clients reach it only
// through the proxy. The proxy reads the MongoDB wire protocol in the
// client-to-member direction, one message at a time: a message carrying
// the internal command _raftMessages names its sender (from: the sender's
// Raft id, its member _id plus one), so the proxy knows which member a
// connection comes from, and a link (sender → this member) can be cut
// alone, which makes one-way partitions possible although every member
// has a single address. What the proxy does with a member's message:
//
//   - Cut: the connection is closed (the sender sees a network error and
//     Raft resends later).
//   - Flaky: the connection is closed with probability Drop.
//   - Slow: the message is held Delay (plus up to Jitter) before it is
//     forwarded (messages on one connection keep their order).
//
// Replies (member to client) are copied as they come. Clients (messages
// without _raftMessages) pass, unless the proxy refuses clients
// (SetClients(false)), and take the Slow delay as well.
package netproxy

import (
	"encoding/binary"
	"io"
	"math/rand"
	"net"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
)

// opMsg is the wire protocol's OP_MSG opcode.
const opMsg = 2013

// maxMessage bounds one wire message (mongod's 48 MB).
const maxMessage = 48 << 20

// Link is how the proxy treats messages from one sender.
type Link struct {
	Cut bool
	// Drop is the probability (0..1) that a message closes its
	// connection instead of being forwarded (flaky).
	Drop float64
	// Delay and Jitter hold each message Delay + rand(Jitter) (slow).
	Delay, Jitter time.Duration
}

// Proxy forwards connections from its address to one member.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	links   map[uint64]Link // by the sender's Raft id; 0: clients
	noCli   bool
	conns   map[net.Conn]struct{}
	rnd     *rand.Rand
	closed  bool
	wg      sync.WaitGroup
	dropped int64
}

// Listen starts a proxy on a free loopback port forwarding to target
// (host:port). seed seeds its flaky links.
func Listen(target string, seed int64) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, links: map[uint64]Link{}, conns: map[net.Conn]struct{}{}, rnd: rand.New(rand.NewSource(seed))}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port (the member's --replHost).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLink sets how messages from the member with Raft id from (0: the
// clients) are treated; a cut link's connections close at their next
// message.
func (p *Proxy) SetLink(from uint64, l Link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l == (Link{}) {
		delete(p.links, from)
	} else {
		p.links[from] = l
	}
}

// SetClients lets clients (connections that carry no Raft messages)
// through or refuses them (their connections are closed).
func (p *Proxy) SetClients(on bool) {
	p.mu.Lock()
	p.noCli = !on
	p.mu.Unlock()
}

// Heal lets everything through again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.links = map[uint64]Link{}
	p.noCli = false
	p.mu.Unlock()
}

// Dropped is how many messages the proxy refused (cut or flaky).
func (p *Proxy) Dropped() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		if p.closed {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

// serve forwards one connection: replies are copied, requests read and
// judged one message at a time.
func (p *Proxy) serve(in net.Conn) {
	defer p.wg.Done()
	defer in.Close()
	out, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		return
	}
	defer out.Close()
	if !p.track(in, true) {
		return
	}
	defer p.track(in, false)
	p.track(out, true)
	defer p.track(out, false)
	go func() {
		_, _ = io.Copy(in, out)
		in.Close()
	}()
	var sender uint64 // known once the connection carried Raft messages
	hdr := make([]byte, 16)
	for {
		if _, err := io.ReadFull(in, hdr); err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint32(hdr))
		if n < 16 || n > maxMessage {
			return
		}
		msg := make([]byte, n)
		copy(msg, hdr)
		if _, err := io.ReadFull(in, msg[16:]); err != nil {
			return
		}
		if from, ok := raftSender(msg); ok {
			sender = from
		}
		l, refuse := p.judge(sender)
		if refuse {
			return
		}
		if l.Delay > 0 || l.Jitter > 0 {
			d := l.Delay
			if l.Jitter > 0 {
				p.mu.Lock()
				d += time.Duration(p.rnd.Int63n(int64(l.Jitter)))
				p.mu.Unlock()
			}
			time.Sleep(d)
		}
		if _, err := out.Write(msg); err != nil {
			return
		}
	}
}

// judge returns the link of sender (0: a client) and whether its message
// must close the connection.
func (p *Proxy) judge(sender uint64) (Link, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.links[sender]
	refuse := l.Cut || sender == 0 && p.noCli
	if !refuse && l.Drop > 0 && p.rnd.Float64() < l.Drop {
		refuse = true
	}
	if refuse {
		p.dropped++
	}
	return l, refuse
}

// raftSender returns the sender of an OP_MSG carrying _raftMessages.
func raftSender(msg []byte) (uint64, bool) {
	if binary.LittleEndian.Uint32(msg[12:]) != opMsg || len(msg) < 16+4+1+5 {
		return 0, false
	}
	body := msg[20:]
	if body[0] != 0 { // section kind 0: the command's body
		return 0, false
	}
	body = body[1:]
	size := int(binary.LittleEndian.Uint32(body))
	if size < 5 || size > len(body) {
		return 0, false
	}
	doc := bson.Doc(body[:size])
	if _, ok := doc.Lookup("_raftMessages"); !ok {
		return 0, false
	}
	v, ok := doc.Lookup("from")
	if !ok {
		return 0, false
	}
	from, ok := v.AsInt64()
	if !ok || from <= 0 {
		return 0, false
	}
	return uint64(from), true
}
