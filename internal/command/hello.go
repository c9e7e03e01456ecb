package command

import (
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Wire-protocol facts Cairn announces as a MongoDB 7.0 standalone.
const (
	MaxBSONObjectSize   = exec.MaxBSONObjectSize
	MaxMessageSizeBytes = 48000000
	MaxWriteBatchSize   = 100000
	MinWireVersion      = 0
	MaxWireVersion      = 21
	// CompatibleVersion is the MongoDB version Cairn's behaviour follows.
	CompatibleVersion = "7.0.0"
)

// Version is Cairn's own version, set by the binary.
var Version = "0.1.0-dev"

// hello answers hello, isMaster and ismaster: the handshake every driver
// sends first. It also negotiates wire compression. A replica-set member
// answers as mongod's HelloResponse (appendReplHello).
func hello(c *Ctx) error {
	a := newArgs(c)
	if v, ok := a.Lookup("client"); ok && v.Type == bson.TypeDocument && c.Conn.ClientMeta == nil {
		c.Conn.ClientMeta = bson.Doc(append([]byte(nil), v.Data...))
	}
	var negotiated []string
	if arr, ok, err := a.Array("compression"); err != nil {
		return err
	} else if ok {
		it := arr.Iter()
		for it.Next() {
			v := it.Element().Value
			if v.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'hello.compression.%s' is the wrong type '%s', expected type 'string'", it.Element().Key, v.Type)
			}
			name := v.StringValue()
			for _, s := range c.Conn.OfferedCompressors {
				if s == name {
					negotiated = append(negotiated, strings.Clone(name))
				}
			}
		}
		c.Conn.Compressors = negotiated
	}
	r := c.Reply
	if helloOk, _, _ := a.Boolean("helloOk"); helloOk {
		r.AppendBool("helloOk", true)
	}
	if c.Env.Repl != nil {
		appendReplHello(c)
	} else {
		if c.Name == "hello" {
			r.AppendBool("isWritablePrimary", true)
		} else {
			r.AppendBool("ismaster", true)
		}
		r.StartDocument("topologyVersion")
		r.AppendObjectID("processId", ProcessID())
		r.AppendInt64("counter", 0)
		r.End()
	}
	r.AppendInt32("maxBsonObjectSize", MaxBSONObjectSize)
	r.AppendInt32("maxMessageSizeBytes", MaxMessageSizeBytes)
	r.AppendInt32("maxWriteBatchSize", MaxWriteBatchSize)
	r.AppendDateTime("localTime", time.Now().UnixMilli())
	r.AppendInt32("logicalSessionTimeoutMinutes", c.Env.SessionTimeoutMinutes())
	r.AppendInt64("connectionId", c.Conn.ID)
	r.AppendInt32("minWireVersion", MinWireVersion)
	r.AppendInt32("maxWireVersion", MaxWireVersion)
	r.AppendBool("readOnly", false)
	if err := helloAuth(c, a); err != nil {
		return err
	}
	if len(negotiated) > 0 {
		r.StartArray("compression")
		for i, n := range negotiated {
			r.AppendString(bson.Index(i), n)
		}
		r.End()
	}
	return nil
}

func ping(c *Ctx) error { return nil }

func buildInfo(c *Ctx) error {
	r := c.Reply
	r.AppendString("version", CompatibleVersion)
	r.AppendString("gitVersion", "cairn-"+Version)
	r.StartArray("versionArray")
	r.AppendInt32("0", 7)
	r.AppendInt32("1", 0)
	r.AppendInt32("2", 0)
	r.AppendInt32("3", 0)
	r.End()
	r.AppendString("cairnVersion", Version)
	r.AppendString("javascriptEngine", "none")
	r.AppendString("allocator", "go")
	r.StartArray("storageEngines")
	r.AppendString("0", "cairn")
	r.End()
	r.StartArray("modules")
	r.End()
	r.AppendInt32("bits", 64)
	r.AppendBool("debug", false)
	r.AppendInt32("maxBsonObjectSize", MaxBSONObjectSize)
	r.StartDocument("openssl")
	r.AppendString("running", "disabled")
	r.End()
	r.StartDocument("buildEnvironment")
	r.End()
	return nil
}

func whatsmyuri(c *Ctx) error {
	c.Reply.AppendString("you", c.Conn.Remote)
	return nil
}

// appendReplHello appends a replica-set member's fields in mongod's order
// (replset.Member's AppendHelloFields).
func appendReplHello(c *Ctx) {
	primaryKey := "isWritablePrimary"
	if c.Name != "hello" {
		primaryKey = "ismaster"
	}
	c.Env.Member().AppendHelloFields(c.Reply, primaryKey, ProcessID())
}
