package server

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/command"
	"github.com/cairndb/cairn/internal/wire"
)

// Awaitable hello (MongoDB's streaming monitoring protocol). A driver's
// monitor sends hello with the topologyVersion it last saw and
// maxAwaitTimeMS; the server answers when the topology changes or when
// maxAwaitTimeMS passes. With exhaustAllowed the server keeps answering on
// its own, every maxAwaitTimeMS, each reply flagged moreToCome, until the
// client closes the connection. Cairn answers at once when the client's
// topologyVersion is not this process's or its counter is behind, and
// otherwise at the next topology change of a replica-set member
// (initiation, reconfig, step down, election: Env.TopologyVersion) or on
// the timer. A standalone's topology never changes.

// maxHelloAwait bounds maxAwaitTimeMS, as mongod does not accept huge waits.
const maxHelloAwait = 10 * time.Minute

// awaitableHello reports whether body is an awaitable hello and how long to
// wait before answering (0: answer at once, the client's view is stale).
func awaitableHello(body []byte) (time.Duration, bool) {
	wait, _, ok := awaitableHelloCounter(body)
	return wait, ok
}

// awaitableHelloCounter is awaitableHello with the counter of the client's
// topologyVersion (-1 when it is another process's).
func awaitableHelloCounter(body []byte) (time.Duration, int64, bool) {
	d := bson.Doc(body)
	it := d.Iter()
	if !it.Next() {
		return 0, 0, false
	}
	switch it.Element().Key {
	case "hello", "isMaster", "ismaster":
	default:
		return 0, 0, false
	}
	tv, ok := d.Lookup("topologyVersion")
	if !ok || tv.Type != bson.TypeDocument {
		return 0, 0, false
	}
	mv, ok := d.Lookup("maxAwaitTimeMS")
	if !ok {
		return 0, 0, false
	}
	ms, ok := mv.AsInt64()
	if !ok || ms < 0 {
		return 0, 0, false // let the command answer the bad value
	}
	pid, ok := tv.Document().Lookup("processId")
	if !ok || pid.Type != bson.TypeObjectID || pid.ObjectID() != command.ProcessID() {
		return 0, -1, true
	}
	counter := int64(-1)
	if cv, ok := tv.Document().Lookup("counter"); ok {
		if n, ok := cv.AsInt64(); ok {
			counter = n
		}
	}
	return min(time.Duration(ms)*time.Millisecond, maxHelloAwait), counter, true
}

// streamHello answers an awaitable hello, and keeps answering while the
// client allows exhaust replies.
func (c *conn) streamHello(msg *wire.Message, wait time.Duration) bool {
	m := msg.Msg
	body := append([]byte(nil), m.Body...)
	exhaust := m.Flags&wire.FlagExhaustAllowed != 0
	responseTo := msg.Header.RequestID
	comp := msg.Compressor
	_, seen, _ := awaitableHelloCounter(body) // the counter the client has
	for {
		counter, changed := c.s.env.TopologyVersion()
		if wait > 0 && counter == seen {
			c.busy.Store(false)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-changed:
				t.Stop()
			case <-c.s.closed:
				t.Stop()
				return false
			}
			c.busy.Store(true)
		}
		seen, _ = c.s.env.TopologyVersion()
		reply, _ := c.run(body, nil)
		if c.drop {
			return false
		}
		var flags uint32
		if exhaust {
			flags = wire.FlagMoreToCome
		}
		if !c.writeReplyFlags(responseTo, comp, reply, false, flags) {
			return false
		}
		if !exhaust {
			return true
		}
		// The next reply answers our own previous one.
		responseTo = c.nextID
		if wait <= 0 {
			wait, _ = awaitableHelloWait(body)
		}
	}
}

// awaitableHelloWait is the timer of an exhaust stream once the client's
// topologyVersion is current.
func awaitableHelloWait(body []byte) (time.Duration, bool) {
	mv, ok := bson.Doc(body).Lookup("maxAwaitTimeMS")
	if !ok {
		return 0, false
	}
	ms, _ := mv.AsInt64()
	if ms <= 0 {
		ms = 10000
	}
	return min(time.Duration(ms)*time.Millisecond, maxHelloAwait), true
}
