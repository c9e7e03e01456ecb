package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// clientEntity is a MongoClient plus the command monitoring events it has
// observed.
type clientEntity struct {
	id        string
	client    *mongo.Client
	observe   map[string]bool // event kinds to record
	ignore    map[string]bool // command names to ignore
	sensitive bool            // observeSensitiveCommands

	mu      sync.Mutex
	stopped bool
	events  []cmdEvent
	pool    []poolEvent // CMAP events, when observed
	// checkedOut counts the connections checked out of the pool now.
	checkedOut int
}

// poolEvent is one connection pool (CMAP) event.
type poolEvent struct {
	kind   string // the unified format's name: connectionCheckedOutEvent...
	reason string
}

// cmapKinds maps the Go driver's pool event types to the unified format's
// event names.
var cmapKinds = map[string]string{
	event.ConnectionPoolCreated:     "poolCreatedEvent",
	event.ConnectionPoolReady:       "poolReadyEvent",
	event.ConnectionPoolCleared:     "poolClearedEvent",
	event.ConnectionPoolClosed:      "poolClosedEvent",
	event.ConnectionCreated:         "connectionCreatedEvent",
	event.ConnectionReady:           "connectionReadyEvent",
	event.ConnectionClosed:          "connectionClosedEvent",
	event.ConnectionCheckOutStarted: "connectionCheckOutStartedEvent",
	event.ConnectionCheckOutFailed:  "connectionCheckOutFailedEvent",
	event.ConnectionCheckedOut:      "connectionCheckedOutEvent",
	event.ConnectionCheckedIn:       "connectionCheckedInEvent",
}

func isCMAPKind(k string) bool {
	for _, v := range cmapKinds {
		if v == k {
			return true
		}
	}
	return false
}

func (c *clientEntity) poolMonitor() *event.PoolMonitor {
	return &event.PoolMonitor{Event: func(e *event.PoolEvent) {
		kind := cmapKinds[e.Type]
		c.mu.Lock()
		defer c.mu.Unlock()
		switch e.Type {
		case event.ConnectionCheckedOut:
			c.checkedOut++
		case event.ConnectionCheckedIn:
			c.checkedOut--
		}
		if c.observe[kind] && !c.stopped {
			c.pool = append(c.pool, poolEvent{kind: kind, reason: e.Reason})
		}
	}}
}

type cmdEvent struct {
	kind        string // commandStartedEvent, commandSucceededEvent, commandFailedEvent
	commandName string
	database    string
	doc         bson.Raw // command or reply
	failure     error
}

func (e cmdEvent) String() string {
	if e.failure != nil {
		return fmt.Sprintf("%s %s on %s: %v", e.kind, e.commandName, e.database, e.failure)
	}
	return fmt.Sprintf("%s %s on %s: %s", e.kind, e.commandName, e.database, e.doc)
}

// Commands whose events are never observed unless observeSensitiveCommands.
var sensitiveCommands = map[string]bool{
	"authenticate": true, "saslstart": true, "saslcontinue": true, "getnonce": true,
	"createuser": true, "updateuser": true, "copydbgetnonce": true, "copydbsaslstart": true,
	"copydb": true, "hello": true, "ismaster": true,
}

func (c *clientEntity) record(e cmdEvent) {
	if !c.observe[e.kind] || c.ignore[e.commandName] || e.commandName == "configureFailPoint" {
		return
	}
	if !c.sensitive && sensitiveCommands[strings.ToLower(e.commandName)] {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.events = append(c.events, e)
	}
}

func (c *clientEntity) stopRecording() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

func (c *clientEntity) observed() []cmdEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]cmdEvent(nil), c.events...)
}

func (c *clientEntity) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			c.record(cmdEvent{kind: "commandStartedEvent", commandName: e.CommandName,
				database: e.DatabaseName, doc: cloneRaw(e.Command)})
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			c.record(cmdEvent{kind: "commandSucceededEvent", commandName: e.CommandName,
				database: e.DatabaseName, doc: cloneRaw(e.Reply)})
		},
		Failed: func(_ context.Context, e *event.CommandFailedEvent) {
			c.record(cmdEvent{kind: "commandFailedEvent", commandName: e.CommandName,
				database: e.DatabaseName, failure: e.Failure})
		},
	}
}

func cloneRaw(r bson.Raw) bson.Raw { return append(bson.Raw(nil), r...) }

// checkExpectedEvents verifies one expectedEventsForClient object.
func checkExpectedEvents(em *entityMap, spec bson.Raw) error {
	a := newArgs(spec)
	c, err := em.client(a.str("client"))
	if err != nil {
		return err
	}
	eventType := a.str("eventType")
	expected := a.docs("events")
	ignoreExtra := a.bool("ignoreExtraEvents")
	if err := a.done(); err != nil {
		return err
	}
	switch eventType {
	case "", "command":
	case "cmap":
		return checkPoolEvents(c, expected, ignoreExtra)
	default:
		return skipf("expectEvents of type %s", eventType)
	}
	actual := c.observed()
	m := matcher{entities: em}
	for i, exp := range expected {
		if i >= len(actual) {
			return fmt.Errorf("client %s: expected %d events, observed %d; missing event %d: %s\nobserved:%s",
				c.id, len(expected), len(actual), i, exp, eventList(actual))
		}
		if err := matchEvent(m, exp, actual[i]); err != nil {
			return fmt.Errorf("client %s: event %d: %v\nobserved:%s", c.id, i, err, eventList(actual))
		}
	}
	if !ignoreExtra && len(actual) > len(expected) {
		return fmt.Errorf("client %s: expected %d events, observed %d:%s", c.id, len(expected), len(actual), eventList(actual))
	}
	return nil
}

func eventList(evs []cmdEvent) string {
	var b strings.Builder
	for i, e := range evs {
		fmt.Fprintf(&b, "\n  %d: %s", i, e)
	}
	return b.String()
}

func matchEvent(m matcher, exp bson.Raw, act cmdEvent) error {
	elems, err := exp.Elements()
	if err != nil || len(elems) != 1 {
		return fmt.Errorf("malformed expected event %s", exp)
	}
	kind := elems[0].Key()
	if kind != act.kind {
		return fmt.Errorf("expected %s, observed %s", kind, act)
	}
	a := newArgs(elems[0].Value().Document())
	if name := a.str("commandName"); name != "" && name != act.commandName {
		return fmt.Errorf("expected command %s, observed %s", name, act)
	}
	if db := a.str("databaseName"); db != "" && db != act.database {
		return fmt.Errorf("expected database %s, observed %s", db, act)
	}
	docKey := "command"
	if kind == "commandSucceededEvent" {
		docKey = "reply"
	}
	if d, ok := a.doc(docKey); ok {
		got := act.doc
		if got == nil { // a failure, or a redacted command or reply
			got = emptyDoc
		}
		if err := m.matchRoot(docValue(d), docValue(got)); err != nil {
			return fmt.Errorf("%s %s %s: %v\nobserved: %s", kind, act.commandName, docKey, err, act.doc)
		}
	}
	// Not meaningful against a single standalone server without a load balancer.
	a.raw("hasServiceId")
	a.raw("hasServerConnectionId")
	if err := a.done(); err != nil {
		return skipf("expected event field: %v", err)
	}
	return nil
}

// checkPoolEvents verifies expected CMAP events: their kinds, in order (the
// fields they may assert — reason, hasServiceId — are checked where the Go
// driver exposes them).
func checkPoolEvents(c *clientEntity, expected []bson.Raw, ignoreExtra bool) error {
	c.mu.Lock()
	actual := append([]poolEvent(nil), c.pool...)
	c.mu.Unlock()
	list := func() string {
		var b strings.Builder
		for i, e := range actual {
			fmt.Fprintf(&b, "\n  %d: %s %s", i, e.kind, e.reason)
		}
		return b.String()
	}
	for i, exp := range expected {
		elems, err := exp.Elements()
		if err != nil || len(elems) != 1 {
			return fmt.Errorf("malformed expected CMAP event %s", exp)
		}
		if i >= len(actual) {
			return fmt.Errorf("client %s: expected %d CMAP events, observed %d; missing %s\nobserved:%s",
				c.id, len(expected), len(actual), exp, list())
		}
		if kind := elems[0].Key(); kind != actual[i].kind {
			return fmt.Errorf("client %s: CMAP event %d: expected %s, observed %s\nobserved:%s", c.id, i, kind,
				actual[i].kind, list())
		}
		a := newArgs(elems[0].Value().Document())
		if r := a.str("reason"); r != "" && r != actual[i].reason {
			return fmt.Errorf("client %s: CMAP event %d: expected reason %s, observed %s", c.id, i, r, actual[i].reason)
		}
		a.raw("hasServiceId") // no load balancer: nothing to check
		a.raw("interruptInUseConnections")
		if err := a.done(); err != nil {
			return skipf("expected CMAP event field: %v", err)
		}
	}
	if !ignoreExtra && len(actual) > len(expected) {
		return fmt.Errorf("client %s: expected %d CMAP events, observed %d:%s", c.id, len(expected), len(actual), list())
	}
	return nil
}
