package raftrepl

// One member's connection to a peer: a raw TCP (or TLS) connection to the
// peer's ordinary port, speaking OP_MSG as a driver would. With a key
// (--keyFile) it first authenticates as __system with SCRAM-SHA-256 on
// the local database, exactly as the driver did for the transport before
// (memberClientOptions): the peer's _raftMessages needs the internal
// action only __system holds, so an unauthenticated connection's messages
// are refused there, with or without a reply.
//
// After the handshake the connection carries the peer's Raft batches as
// _raftMessages with the moreToCome flag: the peer runs them in order on
// the connection and answers nothing, so a batch costs one write. The
// heartbeat is the same command without the flag; its reply, read by the
// connection's reader goroutine, is the only thing the peer sends back and
// gives the peer's health and round trip.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/wire"
	"github.com/xdg-go/scram"
)

// dialTimeout bounds the connection and its handshake (TLS, SCRAM).
const dialTimeout = time.Second

// peerConn is an open, authenticated connection to a peer.
type peerConn struct {
	nc     net.Conn
	r      *wire.Reader
	nextID int32
	// replies carries the outcome of each acknowledged command (the
	// heartbeats) the reader goroutine reads, in order; it is closed when
	// the reader stops (the connection failed or was closed).
	replies chan error
	done    chan struct{} // closed by close
	once    sync.Once
	// msg is the reused buffer of a batch's OP_MSG.
	msg []byte
}

// dialPeer connects to host and authenticates with auth.
func dialPeer(host string, auth MemberAuth) (*peerConn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	nc, err := d.Dial("tcp", host)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", host, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	_ = nc.SetDeadline(time.Now().Add(dialTimeout))
	if auth.TLS != nil {
		cfg := auth.TLS.Clone()
		if cfg.ServerName == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				cfg.ServerName = h
			}
		}
		tc := tls.Client(nc, cfg)
		if err := tc.Handshake(); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", host, err)
		}
		nc = tc
	}
	c := &peerConn{nc: nc, r: wire.NewReader(nc, 0), done: make(chan struct{})}
	if auth.Key != "" {
		if err := c.authenticate(auth.Key); err != nil {
			nc.Close()
			return nil, fmt.Errorf("authenticating to %s as __system: %w", host, err)
		}
	}
	_ = nc.SetDeadline(time.Time{})
	c.replies = make(chan error, 4)
	go c.readReplies()
	return c, nil
}

// close closes the connection; more calls do nothing.
func (c *peerConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.nc.Close()
	})
}

// roundTrip sends body (a command) and reads its reply; only before the
// reader goroutine runs (the handshake).
func (c *peerConn) roundTrip(body bson.Doc) (bson.Doc, error) {
	c.nextID++
	if _, err := c.nc.Write(wire.AppendMsg(nil, c.nextID, 0, 0, body)); err != nil {
		return nil, err
	}
	m, err := c.r.ReadMessage()
	if err != nil {
		return nil, err
	}
	if m.Msg == nil {
		return nil, errors.New("the reply is not an OP_MSG")
	}
	reply := bson.Doc(append([]byte(nil), m.Msg.Body...))
	return reply, replyError(reply)
}

// commandError is a command's error reply (ok: 0): the peer answered,
// the connection is sound.
type commandError struct {
	msg  string
	code int64
}

func (e *commandError) Error() string { return fmt.Sprintf("%s (code %d)", e.msg, e.code) }

// replyError is the error a command's reply reports, nil for ok: 1.
func replyError(reply bson.Doc) error {
	if v, ok := reply.Lookup("ok"); ok {
		if f, _ := v.AsFloat64(); f == 1 {
			return nil
		}
	}
	e := &commandError{msg: "command failed"}
	if v, ok := reply.Lookup("errmsg"); ok && v.Type == bson.TypeString {
		e.msg = v.StringValue()
	}
	if v, ok := reply.Lookup("code"); ok {
		e.code, _ = v.AsInt64()
	}
	return e
}

// authenticate runs SCRAM-SHA-256 as __system on local with key, as the
// driver does (SASLprep of the key, skipEmptyExchange), and checks the
// server's signature.
func (c *peerConn) authenticate(key string) error {
	cl, err := scram.SHA256.NewClient("__system", key, "")
	if err != nil {
		return err
	}
	conv := cl.NewConversation()
	step, err := conv.Step("")
	if err != nil {
		return err
	}
	b := bson.NewBuilder(nil)
	b.AppendInt32("saslStart", 1)
	b.AppendString("mechanism", "SCRAM-SHA-256")
	b.AppendBinary("payload", 0, []byte(step))
	b.StartDocument("options")
	b.AppendBool("skipEmptyExchange", true)
	b.End()
	b.AppendString("$db", "local")
	reply, err := c.roundTrip(b.Finish())
	for err == nil {
		var id int64
		if v, ok := reply.Lookup("conversationId"); ok {
			id, _ = v.AsInt64()
		}
		var payload []byte
		if v, ok := reply.Lookup("payload"); ok && v.Type == bson.TypeBinary {
			_, payload = v.Binary()
		}
		done := false
		if v, ok := reply.Lookup("done"); ok {
			done = v.Truthy()
		}
		if step, err = conv.Step(string(payload)); err != nil {
			return err
		}
		if done {
			if !conv.Valid() {
				return errors.New("the server's SCRAM signature is not valid")
			}
			return nil
		}
		b := bson.NewBuilder(nil)
		b.AppendInt32("saslContinue", 1)
		b.AppendInt32("conversationId", int32(id))
		b.AppendBinary("payload", 0, []byte(step))
		b.AppendString("$db", "local")
		reply, err = c.roundTrip(b.Finish())
	}
	return err
}

// write sends body as one OP_MSG, with moreToCome unless ack, in one
// write bounded by timeout.
func (c *peerConn) write(body bson.Doc, ack bool, timeout time.Duration) error {
	flags := wire.FlagMoreToCome
	if ack {
		flags = 0
	}
	c.nextID++
	c.msg = wire.AppendMsg(c.msg[:0], c.nextID, 0, flags, body)
	_ = c.nc.SetWriteDeadline(time.Now().Add(timeout))
	_, err := c.nc.Write(c.msg)
	if cap(c.msg) > 1<<20 {
		c.msg = nil // do not keep a large batch's buffer
	}
	return err
}

// readReplies reads the replies to the acknowledged commands until the
// connection fails or closes.
func (c *peerConn) readReplies() {
	defer close(c.replies)
	for {
		m, err := c.r.ReadMessage()
		if err == nil && m.Msg == nil {
			err = errors.New("the reply is not an OP_MSG")
		}
		if err == nil {
			err = replyError(bson.Doc(m.Msg.Body))
		} else {
			err = fmt.Errorf("reading a reply: %w", err)
		}
		select {
		case c.replies <- err:
		case <-c.done:
			return
		}
		if m == nil || m.Msg == nil {
			return
		}
	}
}
