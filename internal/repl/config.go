package repl

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The replica-set configuration: the document replSetInitiate and
// replSetReconfig take, replSetGetConfig reports and local.system.replset
// holds. A set of one member is the member alone (this file and
// replset.go); a set of several members runs on Raft (internal/raftrepl),
// where every member votes and may be elected (votes 1, priority > 0) or
// is a Raft learner (votes 0, priority 0, hidden or not); arbiters and
// delayed members are refused (InvalidReplicaSetConfig).

// MaxMembers is the largest set Cairn runs (mongod's voting members).
const MaxMembers = 7

// Member is the configuration's one member, normalized as mongod reports
// it.
type Member struct {
	ID                 int64
	Host               string
	ArbiterOnly        bool
	BuildIndexes       bool
	Hidden             bool
	Priority           float64
	Tags               bson.Doc // {} when none
	SecondaryDelaySecs int64
	Votes              int64
}

// Config is a parsed replica-set configuration.
type Config struct {
	Name    string
	Version int64
	// Term is the term the configuration was written in (-1 after a
	// forced reconfig, as mongod).
	Term                               int64
	Members                            []Member
	ProtocolVersion                    int64
	WriteConcernMajorityJournalDefault bool
	Settings                           Settings
}

// Settings are the configuration's settings, with mongod's defaults.
type Settings struct {
	ChainingAllowed            bool
	HeartbeatIntervalMillis    int64
	HeartbeatTimeoutSecs       int64
	ElectionTimeoutMillis      int64
	CatchUpTimeoutMillis       int64
	CatchUpTakeoverDelayMillis int64
	// GetLastErrorModes are the custom write concern modes (tag sets).
	GetLastErrorModes bson.Doc
	// GetLastErrorDefaults is the legacy default write concern.
	GetLastErrorDefaults bson.Doc
	ReplicaSetID         [12]byte
}

// DefaultElectionTimeoutMillis is settings.electionTimeoutMillis when the
// configuration does not set it: 1 s (mongod's is 10 s), so that a set on
// a LAN elects a new primary within about 2 s of losing one (Raft waits a
// random timeout between one and two election timeouts).
const DefaultElectionTimeoutMillis = 1000

func defaultSettings() Settings {
	var b bson.Builder
	b.AppendInt32("w", 1)
	b.AppendInt32("wtimeout", 0)
	return Settings{ChainingAllowed: true, HeartbeatIntervalMillis: 2000, HeartbeatTimeoutSecs: 10,
		ElectionTimeoutMillis: DefaultElectionTimeoutMillis, CatchUpTimeoutMillis: -1, CatchUpTakeoverDelayMillis: 30000,
		GetLastErrorModes: emptyDoc(), GetLastErrorDefaults: b.Finish()}
}

func emptyDoc() bson.Doc { var b bson.Builder; return b.Finish() }

// Clone returns a deep enough copy (the documents are immutable).
func (c *Config) Clone() *Config {
	n := *c
	n.Members = append([]Member(nil), c.Members...)
	return &n
}

// Doc is the configuration as replSetGetConfig reports it and
// local.system.replset stores it.
func (c *Config) Doc() bson.Doc {
	var b bson.Builder
	c.Append(&b)
	return b.Finish()
}

// Append appends the configuration's fields to b.
func (c *Config) Append(b *bson.Builder) {
	b.AppendString("_id", c.Name)
	b.AppendInt32("version", int32(c.Version))
	b.AppendInt32("term", int32(c.Term))
	b.StartArray("members")
	for i, m := range c.Members {
		b.StartDocument(bson.Index(i))
		b.AppendInt32("_id", int32(m.ID))
		b.AppendString("host", m.Host)
		b.AppendBool("arbiterOnly", m.ArbiterOnly)
		b.AppendBool("buildIndexes", m.BuildIndexes)
		b.AppendBool("hidden", m.Hidden)
		b.AppendDouble("priority", m.Priority)
		b.AppendDocument("tags", m.Tags)
		b.AppendInt64("secondaryDelaySecs", m.SecondaryDelaySecs)
		b.AppendInt32("votes", int32(m.Votes))
		b.End()
	}
	b.End()
	b.AppendInt64("protocolVersion", c.ProtocolVersion)
	b.AppendBool("writeConcernMajorityJournalDefault", c.WriteConcernMajorityJournalDefault)
	s := c.Settings
	b.StartDocument("settings")
	b.AppendBool("chainingAllowed", s.ChainingAllowed)
	b.AppendInt32("heartbeatIntervalMillis", int32(s.HeartbeatIntervalMillis))
	b.AppendInt32("heartbeatTimeoutSecs", int32(s.HeartbeatTimeoutSecs))
	b.AppendInt32("electionTimeoutMillis", int32(s.ElectionTimeoutMillis))
	b.AppendInt32("catchUpTimeoutMillis", int32(s.CatchUpTimeoutMillis))
	b.AppendInt32("catchUpTakeoverDelayMillis", int32(s.CatchUpTakeoverDelayMillis))
	b.AppendDocument("getLastErrorModes", s.GetLastErrorModes)
	b.AppendDocument("getLastErrorDefaults", s.GetLastErrorDefaults)
	b.AppendObjectID("replicaSetId", s.ReplicaSetID)
	b.End()
}

// DefaultConfig is the configuration replSetInitiate builds without one:
// the set's name, version 1 and this node as member 0.
func DefaultConfig(name, host string) *Config {
	return &Config{Name: name, Version: 1, ProtocolVersion: 1, WriteConcernMajorityJournalDefault: true,
		Settings: defaultSettings(), Members: []Member{defaultMember(0, host)}}
}

func defaultMember(id int64, host string) Member {
	return Member{ID: id, Host: host, BuildIndexes: true, Priority: 1, Tags: emptyDoc(), Votes: 1}
}

func invalid(format string, args ...any) error {
	return mongoerr.New(mongoerr.InvalidReplicaSetConfig, format, args...)
}

// ParseConfig parses and checks a configuration document (replSetInitiate's
// or replSetReconfig's argument, or the stored one). A missing version is
// 1, missing settings take mongod's defaults; the replicaSetId is kept if
// given (a stored configuration) and left zero otherwise.
func ParseConfig(d bson.Doc) (*Config, error) {
	c := &Config{Version: 1, Term: -1, ProtocolVersion: 1, WriteConcernMajorityJournalDefault: true, Settings: defaultSettings()}
	var haveName, haveMembers bool
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		v := e.Value
		switch e.Key {
		case "_id":
			if v.Type != bson.TypeString {
				return nil, invalid("BSON field 'ReplSetConfig._id' is the wrong type '%s', expected type 'string'", v.Type)
			}
			c.Name, haveName = v.StringValue(), true
		case "version":
			n, ok := v.AsInt64()
			if !ok || !v.IsNumber() {
				return nil, invalid("BSON field 'ReplSetConfig.version' is the wrong type '%s', expected type 'int'", v.Type)
			}
			if n < 1 || n > 1<<31-1 {
				return nil, invalid("version field value of %d is out of range", n)
			}
			c.Version = n
		case "term":
			n, ok := v.AsInt64()
			if !ok || !v.IsNumber() {
				return nil, invalid("BSON field 'ReplSetConfig.term' is the wrong type '%s', expected type 'long'", v.Type)
			}
			c.Term = n
		case "protocolVersion":
			n, ok := v.AsInt64()
			if !ok || !v.IsNumber() || n != 1 {
				return nil, invalid("Only protocol version 1 is supported; found %v", v)
			}
		case "writeConcernMajorityJournalDefault":
			if v.Type != bson.TypeBoolean {
				return nil, invalid("BSON field 'ReplSetConfig.writeConcernMajorityJournalDefault' is the wrong type '%s', expected type 'bool'", v.Type)
			}
			c.WriteConcernMajorityJournalDefault = v.Boolean()
		case "configsvr":
			if v.Truthy() {
				return nil, invalid("Nodes being used for config servers must be started with the --configsvr flag")
			}
		case "members":
			if v.Type != bson.TypeArray {
				return nil, invalid("BSON field 'ReplSetConfig.members' is the wrong type '%s', expected type 'array'", v.Type)
			}
			ms, err := parseMembers(v.Document())
			if err != nil {
				return nil, err
			}
			c.Members, haveMembers = ms, true
		case "settings":
			if v.Type != bson.TypeDocument {
				return nil, invalid("BSON field 'ReplSetConfig.settings' is the wrong type '%s', expected type 'object'", v.Type)
			}
			if err := parseSettings(&c.Settings, v.Document()); err != nil {
				return nil, err
			}
		default:
			return nil, invalid("BSON field 'ReplSetConfig.%s' is an unknown field.", e.Key)
		}
	}
	if !haveName {
		return nil, invalid("BSON field 'ReplSetConfig._id' is missing but a required field")
	}
	if c.Name == "" {
		return nil, invalid("Replica set configuration must have non-empty _id field")
	}
	if !haveMembers {
		return nil, invalid("BSON field 'ReplSetConfig.members' is missing but a required field")
	}
	if len(c.Members) == 0 {
		return nil, invalid("Replica set configuration must have at least one member")
	}
	if len(c.Members) > MaxMembers {
		return nil, invalid("Replica set configuration contains %d members, but must have at most %d members (Cairn: the members of its Raft group)", len(c.Members), MaxMembers)
	}
	electable, hosts := 0, map[string]bool{}
	for _, m := range c.Members {
		if hosts[m.Host] {
			return nil, invalid("Found two member configurations with same host field, host == %s", m.Host)
		}
		hosts[m.Host] = true
		if m.ArbiterOnly {
			return nil, invalid("Cairn has no arbiters: member %s (_id %d) is arbiterOnly; every member holds the data", m.Host, m.ID)
		}
		if m.SecondaryDelaySecs != 0 {
			return nil, invalid("Cairn does not delay members yet: member %s (_id %d) has secondaryDelaySecs", m.Host, m.ID)
		}
		if m.Votes == 0 && m.Priority != 0 {
			return nil, invalid("priority must be 0 when non-voting (votes:0): member %s (_id %d) has priority %v", m.Host, m.ID, m.Priority)
		}
		if m.Hidden && m.Votes != 0 {
			return nil, invalid("priority must be 0 when hidden=true: member %s (_id %d)", m.Host, m.ID)
		}
		if m.Priority > 0 && m.Votes > 0 {
			electable++
		}
	}
	if electable == 0 {
		return nil, mongoerr.New(mongoerr.InvalidReplicaSetConfig, "Replica set configuration must contain at least one non-arbiter member with priority > 0 and votes > 0")
	}
	if len(c.Members) == 1 && electable != 1 {
		m := c.Members[0]
		return nil, mongoerr.New(mongoerr.InvalidReplicaSetConfig, "Replica set configuration must contain at least one non-arbiter member with priority > 0 and votes > 0: member %s (_id %d) is not electable", m.Host, m.ID)
	}
	return c, nil
}

func parseMembers(arr bson.Doc) ([]Member, error) {
	var out []Member
	ids := map[int64]bool{}
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return nil, invalid("Expected type of ReplSetConfig.members.%s to be object, but found %s", it.Element().Key, v.Type)
		}
		m := Member{BuildIndexes: true, Priority: 1, Votes: 1, Tags: emptyDoc(), ID: -1}
		haveID := false
		mt := v.Document().Iter()
		for mt.Next() {
			e := mt.Element()
			f := e.Value
			switch e.Key {
			case "_id":
				n, ok := f.AsInt64()
				if !ok || !f.IsNumber() || n < 0 || n > 255 {
					return nil, invalid("_id field value of %v is out of range.", f)
				}
				m.ID, haveID = n, true
			case "host":
				if f.Type != bson.TypeString || f.StringValue() == "" {
					return nil, invalid("BSON field 'MemberConfig.host' must be a non-empty string")
				}
				m.Host = f.StringValue()
			case "arbiterOnly":
				m.ArbiterOnly = f.Truthy()
			case "buildIndexes":
				m.BuildIndexes = f.Truthy()
			case "hidden":
				m.Hidden = f.Truthy()
			case "priority":
				p, ok := numberFloat(f)
				if !ok || p < 0 || p > 1000 {
					return nil, invalid("priority field value of %v is out of range", f)
				}
				m.Priority = p
			case "votes":
				n, ok := f.AsInt64()
				if !ok || !f.IsNumber() || n < 0 || n > 1 {
					return nil, invalid("votes field value is %v but must be 0 or 1", f)
				}
				m.Votes = n
			case "tags":
				if f.Type != bson.TypeDocument {
					return nil, invalid("BSON field 'MemberConfig.tags' is the wrong type '%s', expected type 'object'", f.Type)
				}
				tt := f.Document().Iter()
				for tt.Next() {
					if tt.Element().Value.Type != bson.TypeString {
						return nil, invalid("tags.%s field has non-string value of type %s", tt.Element().Key, tt.Element().Value.Type)
					}
				}
				m.Tags = bson.Doc(append([]byte(nil), f.Document()...))
			case "secondaryDelaySecs", "slaveDelay":
				n, ok := f.AsInt64()
				if !ok || !f.IsNumber() || n < 0 {
					return nil, invalid("secondaryDelaySecs field value of %v is out of range", f)
				}
				m.SecondaryDelaySecs = n
			default:
				return nil, invalid("BSON field 'MemberConfig.%s' is an unknown field.", e.Key)
			}
		}
		if !haveID {
			return nil, invalid("BSON field 'MemberConfig._id' is missing but a required field")
		}
		if m.Host == "" {
			return nil, invalid("BSON field 'MemberConfig.host' is missing but a required field")
		}
		if ids[m.ID] {
			return nil, invalid("Found two member configurations with same _id field, members.%d._id == members.%d._id == %d", len(out), len(out), m.ID)
		}
		ids[m.ID] = true
		out = append(out, m)
	}
	return out, nil
}

func numberFloat(v bson.Value) (float64, bool) {
	switch v.Type {
	case bson.TypeDouble:
		return v.Double(), true
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64()
		return float64(n), true
	}
	return 0, false
}

func parseSettings(s *Settings, d bson.Doc) error {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		v := e.Value
		num := func(dst *int64) error {
			n, ok := v.AsInt64()
			if !ok || !v.IsNumber() {
				return invalid("BSON field 'ReplSetConfigSettings.%s' is the wrong type '%s', expected a number", e.Key, v.Type)
			}
			*dst = n
			return nil
		}
		var err error
		switch e.Key {
		case "chainingAllowed":
			s.ChainingAllowed = v.Truthy()
		case "heartbeatIntervalMillis":
			err = num(&s.HeartbeatIntervalMillis)
		case "heartbeatTimeoutSecs":
			err = num(&s.HeartbeatTimeoutSecs)
		case "electionTimeoutMillis":
			err = num(&s.ElectionTimeoutMillis)
		case "catchUpTimeoutMillis":
			err = num(&s.CatchUpTimeoutMillis)
		case "catchUpTakeoverDelayMillis":
			err = num(&s.CatchUpTakeoverDelayMillis)
		case "getLastErrorModes":
			if v.Type != bson.TypeDocument {
				return invalid("BSON field 'ReplSetConfigSettings.getLastErrorModes' is the wrong type '%s', expected type 'object'", v.Type)
			}
			if err := checkModes(v.Document()); err != nil {
				return err
			}
			s.GetLastErrorModes = bson.Doc(append([]byte(nil), v.Document()...))
		case "getLastErrorDefaults":
			if v.Type != bson.TypeDocument {
				return invalid("BSON field 'ReplSetConfigSettings.getLastErrorDefaults' is the wrong type '%s', expected type 'object'", v.Type)
			}
			s.GetLastErrorDefaults = bson.Doc(append([]byte(nil), v.Document()...))
		case "replicaSetId":
			if v.Type != bson.TypeObjectID {
				return invalid("BSON field 'ReplSetConfigSettings.replicaSetId' is the wrong type '%s', expected type 'objectId'", v.Type)
			}
			s.ReplicaSetID = v.ObjectID()
		default:
			return invalid("BSON field 'ReplSetConfigSettings.%s' is an unknown field.", e.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkModes checks getLastErrorModes: {mode: {tagKey: count}}.
func checkModes(d bson.Doc) error {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if e.Value.Type != bson.TypeDocument {
			return invalid("Expected settings.getLastErrorModes.%s to be an Object, not %s", e.Key, e.Value.Type)
		}
		tt := e.Value.Document().Iter()
		for tt.Next() {
			n, ok := tt.Element().Value.AsInt64()
			if !ok || !tt.Element().Value.IsNumber() || n <= 0 {
				return invalid("Value of tag count for \"%s.%s\" must be positive, but found %v", e.Key, tt.Element().Key, tt.Element().Value)
			}
		}
	}
	return nil
}

// CheckWriteMode checks a write concern's w: "<mode>" against the custom
// modes: a mode unknown to the configuration is UnknownReplWriteConcern
// (79); one whose tag counts one member cannot meet is
// UnsatisfiableWriteConcern (100), as mongod's checks.
func (c *Config) CheckWriteMode(mode string) error {
	v, ok := c.Settings.GetLastErrorModes.Lookup(mode)
	if !ok || v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.UnknownReplWriteConcern, "No write concern mode named '%s' found in replica set configuration", mode)
	}
	it := v.Document().Iter()
	for it.Next() {
		need, _ := it.Element().Value.AsInt64()
		have := int64(0)
		for _, m := range c.Members {
			if _, ok := m.Tags.Lookup(it.Element().Key); ok {
				have++ // one member: one distinct value at most
			}
		}
		if have < need {
			return mongoerr.New(mongoerr.UnsatisfiableWriteConcern, "Not enough nodes match write concern mode \"%s\"", mode)
		}
	}
	return nil
}

// DataBearing is the number of data-bearing members (w: N's bound).
func (c *Config) DataBearing() int {
	n := 0
	for _, m := range c.Members {
		if !m.ArbiterOnly {
			n++
		}
	}
	return n
}

// sortedHosts returns the members' hosts (hello's hosts).
func (c *Config) sortedHosts() []string {
	var hs []string
	for _, m := range c.Members {
		if !m.Hidden && !m.ArbiterOnly {
			hs = append(hs, m.Host)
		}
	}
	sort.Strings(hs)
	return hs
}

var oidCounter atomic.Uint32

// NewObjectID returns a new ObjectId (time, random, counter), for the
// replicaSetId.
func NewObjectID() (id [12]byte) {
	binary.BigEndian.PutUint32(id[:4], uint32(time.Now().Unix()))
	if _, err := rand.Read(id[4:9]); err != nil {
		panic(fmt.Sprintf("repl: reading random bytes: %v", err))
	}
	n := oidCounter.Add(1)
	id[9], id[10], id[11] = byte(n>>16), byte(n>>8), byte(n)
	return id
}
