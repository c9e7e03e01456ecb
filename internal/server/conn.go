package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/command"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/wire"
)

// maxMessageDepth is the nesting accepted in a command message: MongoDB
// allows command objects to nest deeper than stored documents (whose limit,
// 100, the write commands check), so that a too-deep document is answered
// with its own error instead of a message-level one.
const maxMessageDepth = 200

// offeredCompressors are the wire compressors Cairn negotiates, in its
// order of preference.
var offeredCompressors = []string{"snappy", "zstd", "zlib"}

type conn struct {
	s        *Server
	nc       net.Conn
	r        *wire.Reader
	info     command.Conn
	reply    bson.Builder
	replyBuf []byte
	out      []byte
	comp     []byte
	nextID   int32
	busy     atomic.Bool
	closeReq atomic.Bool
	// raw is the socket under TLS (nc itself without), busySince the
	// UnixNano start of the running request (0 between requests) and gone
	// set once the watcher saw the client leave (disconnect.go).
	raw       net.Conn
	busySince atomic.Int64
	gone      atomic.Bool
	ctxName   string
	// legacyPos tracks cursors opened by legacy OP_QUERY (legacy.go).
	legacyPos legacyPositions
	limits    connLimits
	// drop is set when a command asked for the connection to be closed
	// without a reply (a failCommand fail point's closeConnection).
	drop bool
}

func (s *Server) newConn(nc net.Conn) *conn {
	id := s.connID.Add(1)
	c := &conn{s: s, nc: nc, raw: rawConn(nc), ctxName: "conn" + strconv.FormatInt(id, 10)}
	c.r = c.limits.reader(s, nc)
	c.info = command.Conn{ID: id, Remote: nc.RemoteAddr().String(), Local: nc.LocalAddr().String(), OfferedCompressors: offeredCompressors}
	return c
}

// closeWhenIdle closes the connection now if it is waiting for a request,
// or after the request it is running.
func (c *conn) closeWhenIdle() {
	c.closeReq.Store(true)
	if !c.busy.Load() {
		c.nc.Close()
	}
}

func (c *conn) serve() {
	st := &c.s.env.Stats
	st.ConnsCurrent.Add(1)
	st.ConnsTotal.Add(1)
	c.s.log.Info("Connection accepted", "c", "NETWORK", "id", 22943, "ctx", "listener",
		"remote", c.info.Remote, "connectionId", c.info.ID, "connectionCount", st.ConnsCurrent.Load())
	defer func() {
		// A bug reached by one client's input must not take the server
		// down for everyone: log it and drop only this connection.
		if r := recover(); r != nil {
			c.s.log.Error("Connection handler panicked", "c", "NETWORK", "ctx", c.ctxName, "remote", c.info.Remote, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
		c.nc.Close()
		c.limits.requestDone()
		st.ConnsCurrent.Add(-1)
		c.s.log.Info("Connection ended", "c", "NETWORK", "id", 22944, "ctx", c.ctxName,
			"remote", c.info.Remote, "connectionId", c.info.ID, "connectionCount", st.ConnsCurrent.Load())
	}()
	for !c.closeReq.Load() {
		c.r.SetMaxMessageSize(c.maxMessageSize())
		msg, err := c.r.ReadMessage()
		c.limits.messageRead()
		if err != nil {
			c.limits.requestDone()
			if !c.handleReadError(err) {
				return
			}
			continue
		}
		c.busy.Store(true)
		c.s.running.Add(1)
		c.busySince.Store(time.Now().UnixNano())
		st.Requests.Add(1)
		st.BytesIn.Add(int64(msg.Header.MessageLength))
		ok := c.handle(msg)
		c.limits.requestDone()
		c.busySince.Store(0)
		c.s.running.Add(-1)
		c.busy.Store(false)
		if !ok {
			return
		}
	}
}

// handleReadError answers a malformed message when the stream can go on and
// reports whether to keep reading.
func (c *conn) handleReadError(err error) bool {
	var pe *wire.ProtocolError
	if !errors.As(err, &pe) {
		if isMessageTimeout(err) && !c.closeReq.Load() {
			c.s.log.Info("Connection closed: message not received in time", "c", "NETWORK", "ctx", c.ctxName,
				"remote", c.info.Remote, "timeoutSecs", c.s.opts.MessageTimeout.Seconds(), "error", err.Error())
			return false
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !c.closeReq.Load() {
			c.s.log.Debug("Connection read failed", "c", "NETWORK", "ctx", c.ctxName, "error", err.Error())
		}
		return false
	}
	if pe.TooLarge && c.r.MaxMessageSize() < wire.MaxMessageSize {
		c.s.env.Stats.MessageSizeErrorsPreAuth.Add(1)
		c.s.log.Warn("Message from an unauthenticated client exceeds preAuthMaximumMessageSizeBytes", "c", "NETWORK", "ctx", c.ctxName,
			"remote", c.info.Remote, "error", pe.Msg, "limit", c.r.MaxMessageSize(), "fatal", pe.Fatal)
	} else {
		c.s.log.Warn("Malformed message", "c", "NETWORK", "id", 22988, "ctx", c.ctxName, "remote", c.info.Remote,
			"error", pe.Msg, "code", pe.Code, "fatal", pe.Fatal)
	}
	if pe.Fatal {
		return false
	}
	switch pe.Header.OpCode {
	case wire.OpInsert, wire.OpUpdate, wire.OpDelete, wire.OpKillCursors:
		return true // fire-and-forget legacy opcodes expect no reply
	}
	if pe.Flags&wire.FlagMoreToCome != 0 {
		return true
	}
	doc := command.ErrorReply(&mongoerr.Error{Code: pe.Code, Message: pe.Msg})
	if pe.Header.OpCode == wire.OpQuery || pe.Header.OpCode == wire.OpGetMore {
		return c.writeReply(pe.Header.RequestID, pe.Compressor, doc, true)
	}
	return c.writeReply(pe.Header.RequestID, pe.Compressor, doc, false)
}

// maxMessageSize is the largest message the connection may send next:
// with access control on, a connection that has not authenticated is held
// to preAuthMaximumMessageSizeBytes (16 KiB by default, as mongod 8.0), so
// that an anonymous client cannot make the server read, inflate or hold
// large messages.
func (c *conn) maxMessageSize() int {
	if c.s.env.Auth.Enabled() && !c.info.Auth.Authenticated() {
		return c.s.env.PreAuthMaxMessageSizeBytes()
	}
	return wire.MaxMessageSize
}

func (c *conn) handle(msg *wire.Message) bool {
	switch {
	case msg.Msg != nil:
		return c.handleMsg(msg)
	case msg.Query != nil:
		return c.handleQuery(msg)
	case msg.GetMore != nil:
		return c.handleGetMore(msg)
	case msg.KillCursors != nil:
		c.handleKillCursors(msg)
	}
	return true
}

// handleMsg runs one OP_MSG command.
func (c *conn) handleMsg(msg *wire.Message) bool {
	m := msg.Msg
	if wait, ok := awaitableHello(m.Body); ok {
		return c.streamHello(msg, wait)
	}
	if m.Flags&wire.FlagExhaustAllowed != 0 && m.Flags&wire.FlagMoreToCome == 0 && isGetMore(m.Body) {
		return c.streamGetMore(msg) // exhaust.go
	}
	reply, _ := c.run(m.Body, m.Sequences)
	if c.drop {
		return false
	}
	if m.Flags&wire.FlagMoreToCome != 0 {
		return true // unacknowledged: the client wants no reply
	}
	return c.writeReply(msg.Header.RequestID, msg.Compressor, reply, false)
}

// run validates and dispatches one command; it returns the reply and
// whether the command was an unacknowledged write.
func (c *conn) run(rawBody []byte, seqs []wire.Sequence) (bson.Doc, bool) {
	if len(rawBody) > bson.MaxCommandSize {
		return command.ErrorReply(mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB)", len(rawBody), len(rawBody))), false
	}
	if err := bson.Validate(rawBody, maxMessageDepth); err != nil {
		return command.ErrorReply(invalidBSON(err)), false
	}
	// The body outlives the wire buffer when a cursor keeps its filter.
	body := bson.Doc(bytes.Clone(rawBody))
	ctx := &command.Ctx{Context: context.Background(), Env: c.s.env, Conn: &c.info, Body: body, Reply: &c.reply}
	c.reply.Reset(c.replyBuf)
	dbv, ok := body.Lookup("$db")
	if !ok {
		return command.ErrorReply(mongoerr.New(mongoerr.OpMsgMissingDB, "OP_MSG requests require a $db argument")), false
	}
	if dbv.Type != bson.TypeString {
		return command.ErrorReply(mongoerr.New(mongoerr.TypeMismatch, "BSON field '$db' is the wrong type '%s', expected type 'string'", dbv.Type)), false
	}
	ctx.DB = dbv.StringValue()
	if len(seqs) > 0 {
		ctx.Seqs = make(map[string][]bson.Doc, len(seqs))
		for _, s := range seqs {
			docs := make([]bson.Doc, len(s.Docs))
			for i, d := range s.Docs {
				if err := bson.Validate(d, maxMessageDepth); err != nil {
					return command.ErrorReply(invalidBSON(err)), false
				}
				docs[i] = bson.Doc(d)
			}
			ctx.Seqs[s.Identifier] = docs
		}
	}
	reply := command.Dispatch(ctx)
	c.drop = ctx.CloseConnection
	c.replyBuf = reply[:0]
	if cap(c.replyBuf) > 1<<20 {
		c.replyBuf = nil // do not keep a large reply's buffer on the connection
	}
	return reply, ctx.Unacknowledged
}

func invalidBSON(err error) error {
	var ve *bson.ValidationError
	if errors.As(err, &ve) && ve.TooDeep {
		return mongoerr.New(mongoerr.Overflow, "BSONObj exceeds maximum nested object depth: %s", ve.Reason)
	}
	return mongoerr.New(mongoerr.InvalidBSON, "%v", err)
}

func cutNS(ns string) (db, coll string, ok bool) {
	for i := 0; i < len(ns); i++ {
		if ns[i] == '.' {
			return ns[:i], ns[i+1:], true
		}
	}
	return ns, "", false
}

// writeReply sends doc as an OP_MSG (or OP_REPLY for legacy requests),
// compressed with the request's compressor when it was compressed.
func (c *conn) writeReply(responseTo int32, comp wire.Compressor, doc bson.Doc, legacy bool) bool {
	return c.writeReplyFlags(responseTo, comp, doc, legacy, 0)
}

func (c *conn) writeReplyFlags(responseTo int32, comp wire.Compressor, doc bson.Doc, legacy bool, flags uint32) bool {
	c.nextID++
	if legacy {
		c.out = wire.AppendReply(c.out[:0], c.nextID, responseTo, 8, 0, 0, doc)
	} else {
		c.out = wire.AppendMsg(c.out[:0], c.nextID, responseTo, flags, doc)
	}
	return c.send(comp)
}

// send writes the message in c.out, compressed with comp unless it is the
// noop compressor.
func (c *conn) send(comp wire.Compressor) bool {
	out := c.out
	if comp != wire.CompressorNoop {
		var err error
		c.comp, err = wire.Compress(c.comp[:0], c.out, comp, 0)
		if err != nil {
			c.s.log.Warn("Compressing reply failed", "c", "NETWORK", "ctx", c.ctxName, "error", err.Error())
		} else {
			out = c.comp
		}
	}
	if _, err := c.nc.Write(out); err != nil {
		return false
	}
	c.s.env.Stats.BytesOut.Add(int64(len(out)))
	if cap(c.out) > 1<<20 {
		c.out = nil // do not keep a huge buffer on an idle connection
	}
	if cap(c.comp) > 1<<20 {
		c.comp = nil
	}
	return true
}
