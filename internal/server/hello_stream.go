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
// client closes the connection. A standalone's topology never changes, so
// Cairn answers at once only when the client's topologyVersion is not this
// process's, and otherwise on the timer.

// maxHelloAwait bounds maxAwaitTimeMS, as mongod does not accept huge waits.
const maxHelloAwait = 10 * time.Minute

// awaitableHello reports whether body is an awaitable hello and how long to
// wait before answering (0: answer at once, the client's view is stale).
func awaitableHello(body []byte) (time.Duration, bool) {
	d := bson.Doc(body)
	it := d.Iter()
	if !it.Next() {
		return 0, false
	}
	switch it.Element().Key {
	case "hello", "isMaster", "ismaster":
	default:
		return 0, false
	}
	tv, ok := d.Lookup("topologyVersion")
	if !ok || tv.Type != bson.TypeDocument {
		return 0, false
	}
	mv, ok := d.Lookup("maxAwaitTimeMS")
	if !ok {
		return 0, false
	}
	ms, ok := mv.AsInt64()
	if !ok || ms < 0 {
		return 0, false // let the command answer the bad value
	}
	pid, ok := tv.Document().Lookup("processId")
	if !ok || pid.Type != bson.TypeObjectID || pid.ObjectID() != command.ProcessID() {
		return 0, true
	}
	return min(time.Duration(ms)*time.Millisecond, maxHelloAwait), true
}

// streamHello answers an awaitable hello, and keeps answering while the
// client allows exhaust replies.
func (c *conn) streamHello(msg *wire.Message, wait time.Duration) bool {
	m := msg.Msg
	body := append([]byte(nil), m.Body...)
	exhaust := m.Flags&wire.FlagExhaustAllowed != 0
	responseTo := msg.Header.RequestID
	comp := msg.Compressor
	for {
		if wait > 0 {
			c.busy.Store(false)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.s.closed:
				t.Stop()
				return false
			}
			c.busy.Store(true)
		}
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
