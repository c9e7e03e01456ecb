// Package session owns logical sessions and the state of retryable writes.
//
// # Sessions
//
// A logical session is named by its lsid: the id a client generated (a
// UUID) and the uid, SHA-256 of the authenticated user's name ("user@db";
// of the empty string when nobody is authenticated), as mongod forms it,
// so that two users' sessions never share a record even if their clients
// picked the same id. The Registry holds the server's sessions in memory
// (mongod's logical session cache): every command that carries an lsid
// creates or touches its record (Vivify), startSession makes a new one,
// refreshSessions touches, endSessions forgets, and killSessions and its
// relatives kill the sessions' cursors and running operations (the command
// layer does the killing; the registry says which sessions match). At most
// MaxSessions (1,000,000, mongod's maxSessions) live at once: a new one
// beyond that is TooManyLogicalSessions (261).
//
// Every refresh interval (mongod's logicalSessionRefreshMillis, 5
// minutes) Flush writes the records touched since the last flush to
// config.system.sessions ({_id: {id, uid}, lastUse, user}), removes the
// records of sessions that were ended, and expires: a session idle for
// longer than the timeout (localLogicalSessionTimeoutMinutes, 30) leaves
// memory and the collection, its cursors are killed, and the state of its
// retryable writes (config.transactions, the statement history and
// config.image_collection, txn.go) is removed. After a restart the
// collection is what remains: a session the client uses again is created
// anew in memory, and its retryable-write state, which is durable, is
// found again. $listLocalSessions lists the registry, $listSessions the
// collection.
//
// # Retryable writes
//
// txn.go keeps what makes a retried statement answer its original result
// without running again; see the prose there.
package session

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Defaults, as mongod's.
const (
	// DefaultTimeoutMinutes is localLogicalSessionTimeoutMinutes' default.
	DefaultTimeoutMinutes = 30
	// DefaultRefreshInterval is logicalSessionRefreshMillis' default.
	DefaultRefreshInterval = 5 * time.Minute
	// MaxSessions is mongod's maxSessions default.
	MaxSessions = 1000000
)

// Key is a session's identity: the client's id and the owner's digest.
type Key struct {
	ID  [16]byte
	UID [32]byte
}

// UserDigest is the uid of the sessions of user ("name@db"; "" when
// nobody is authenticated): SHA-256 of the name.
func UserDigest(user string) [32]byte {
	if user == "" {
		return noUserDigest // every command of a server without auth asks
	}
	return sha256.Sum256([]byte(user))
}

// noUserDigest is UserDigest("").
var noUserDigest = sha256.Sum256(nil)

// ParseLSID reads an lsid as a client sends it ({id: UUID[, uid]}) for
// the user whose digest is uid. A uid given by the client must be the
// user's own. field names the lsid in error messages.
func ParseLSID(v bson.Value, uid [32]byte, field string) (Key, error) {
	var k Key
	if v.Type != bson.TypeDocument {
		return k, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'object'", field, v.Type)
	}
	k.UID = uid
	seen := false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "id":
			st, data := binaryOf(e.Value)
			if e.Value.Type != bson.TypeBinary || st != 4 || len(data) != 16 {
				return k, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.id' is the wrong type '%s', expected type 'uuid'", field, typeName(e.Value))
			}
			copy(k.ID[:], data)
			seen = true
		case "uid":
			_, data := binaryOf(e.Value)
			if e.Value.Type != bson.TypeBinary || len(data) != 32 {
				return k, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.uid' is the wrong type '%s', expected type 'bindata'", field, typeName(e.Value))
			}
			var given [32]byte
			copy(given[:], data)
			if given != uid {
				return k, mongoerr.New(mongoerr.Unauthorized, "Unauthorized to specify a uid other than that of the authenticated user")
			}
		default:
			return k, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", field, e.Key)
		}
	}
	if !seen {
		return k, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.id' is missing but a required field", field)
	}
	return k, nil
}

func binaryOf(v bson.Value) (byte, []byte) {
	if v.Type != bson.TypeBinary {
		return 0, nil
	}
	return v.Binary()
}

func typeName(v bson.Value) string {
	if v.Type == bson.TypeBinary {
		return "binData"
	}
	return v.Type.String()
}

// AppendDoc appends the lsid {id: UUID, uid: BinData} under key, the
// shape mongod stores and reports.
func (k Key) AppendDoc(b *bson.Builder, key string) {
	b.StartDocument(key)
	b.AppendBinary("id", 4, k.ID[:])
	b.AppendBinary("uid", 0, k.UID[:])
	b.End()
}

// Doc returns {id, uid}: {id: BinData(4, ID), uid: BinData(0, UID)},
// encoded directly into one allocation of its keyDocLen bytes (every
// transaction's commit and session record builds it).
func (k Key) Doc() bson.Doc {
	d := make([]byte, 0, keyDocLen)
	d = binary.LittleEndian.AppendUint32(d, keyDocLen)
	d = append(d, byte(bson.TypeBinary), 'i', 'd', 0)
	d = binary.LittleEndian.AppendUint32(d, uint32(len(k.ID)))
	d = append(d, 4)
	d = append(d, k.ID[:]...)
	d = append(d, byte(bson.TypeBinary), 'u', 'i', 'd', 0)
	d = binary.LittleEndian.AppendUint32(d, uint32(len(k.UID)))
	d = append(d, 0)
	d = append(d, k.UID[:]...)
	return bson.Doc(append(d, 0))
}

// keyDocLen is the size of Key.Doc: the length, two binary elements
// (type, key and NUL, length, subtype, bytes) and the terminating NUL.
const keyDocLen = 4 + (1 + 3 + 4 + 1 + 16) + (1 + 4 + 4 + 1 + 32) + 1

// UUID formats the id as mongod prints a UUID.
func (k Key) UUID() string {
	h := hex.EncodeToString(k.ID[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// String is the lsid as mongod's messages print it: "<uuid> - <base64 uid>".
func (k Key) String() string {
	return k.UUID() + " - " + base64.StdEncoding.EncodeToString(k.UID[:])
}

// BSONString is the lsid as mongod prints a BSON object in a message.
func (k Key) BSONString() string {
	return fmt.Sprintf("{ id: UUID(\"%s\"), uid: BinData(0, %X) }", k.UUID(), k.UID[:])
}

// Record is a session as the registry holds it.
type Record struct {
	Key
	// User is the owner's "name@db" ("" when not authenticated).
	User    string
	LastUse time.Time
	// dirty: touched since the last flush.
	dirty bool
	// activeTxn is the highest txnNumber a retryable write of the session
	// has started since the server started (-1: none), as mongod's
	// in-memory active transaction number: a lower one is too old even
	// when the higher one wrote nothing.
	activeTxn int64
	// slot is the session's multi-document transaction (transaction.go).
	slot *Slot
}

// Options configure a Registry.
type Options struct {
	// Timeout is how long an idle session lives (0: 30 minutes).
	Timeout time.Duration
	// Limit is the number of sessions at most (0: MaxSessions).
	Limit int
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Registry holds the server's sessions.
type Registry struct {
	mu      sync.Mutex
	m       map[Key]*Record
	ended   map[Key]struct{} // to remove from config.system.sessions
	timeout time.Duration
	limit   int
	now     func() time.Time
	// TxnStats counts the sessions' transactions (serverStatus).
	TxnStats TxnStats
}

// New returns an empty registry.
func New(o Options) *Registry {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeoutMinutes * time.Minute
	}
	if o.Limit <= 0 {
		o.Limit = MaxSessions
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Registry{m: make(map[Key]*Record), ended: make(map[Key]struct{}), timeout: o.Timeout, limit: o.Limit, now: o.Now}
}

// Timeout is how long an idle session lives.
func (r *Registry) Timeout() time.Duration { return r.timeout }

// TimeoutMinutes is the timeout in whole minutes (startSession's
// timeoutMinutes, hello's logicalSessionTimeoutMinutes).
func (r *Registry) TimeoutMinutes() int32 { return int32(r.timeout / time.Minute) }

// Vivify creates the session k of user or marks it used now (every
// command carrying an lsid, refreshSessions). A new session beyond the
// limit is TooManyLogicalSessions.
func (r *Registry) Vivify(k Key, user string) error {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.m[k]
	if rec == nil {
		if len(r.m) >= r.limit {
			return mongoerr.New(mongoerr.TooManyLogicalSessions, "Unable to add session into the cache because the number of active sessions is too high")
		}
		rec = &Record{Key: k, User: user, activeTxn: -1}
		r.m[k] = rec
		delete(r.ended, k)
	}
	rec.LastUse = now
	rec.dirty = true
	return nil
}

// End forgets the sessions (endSessions); the next flush removes their
// records from config.system.sessions. Unknown sessions are ignored, as
// mongod ignores them.
func (r *Registry) End(keys []Key) {
	r.mu.Lock()
	var slots []*Slot
	for _, k := range keys {
		if rec := r.m[k]; rec != nil {
			slots = append(slots, rec.slot)
		}
		delete(r.m, k)
		r.ended[k] = struct{}{}
	}
	r.mu.Unlock()
	abortSlots(slots) // an ended session's open transaction is aborted
}

// Matching returns the keys of the sessions match accepts.
func (r *Registry) Matching(match func(*Record) bool) []Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Key
	for k, rec := range r.m {
		if match(rec) {
			out = append(out, k)
		}
	}
	return out
}

// List returns copies of the sessions match accepts ($listLocalSessions).
func (r *Registry) List(match func(*Record) bool) []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Record
	for _, rec := range r.m {
		if match(rec) {
			out = append(out, *rec)
		}
	}
	return out
}

// Len is the number of sessions.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// Has reports whether session k is live.
func (r *Registry) Has(k Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[k] != nil
}

// expire removes the sessions idle for longer than the timeout and
// returns them.
func (r *Registry) expire(now time.Time) []Key {
	r.mu.Lock()
	var out []Key
	var slots []*Slot
	for k, rec := range r.m {
		if now.Sub(rec.LastUse) > r.timeout {
			delete(r.m, k)
			out = append(out, k)
			slots = append(slots, rec.slot)
		}
	}
	r.mu.Unlock()
	abortSlots(slots)
	return out
}

// pending takes the records touched since the last flush and the ended
// sessions.
func (r *Registry) pending() (touched []Record, ended []Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.m {
		if rec.dirty {
			rec.dirty = false
			touched = append(touched, *rec)
		}
	}
	for k := range r.ended {
		ended = append(ended, k)
	}
	clear(r.ended)
	return touched, ended
}

// redirty marks records whose flush failed so that the next one writes
// them again.
func (r *Registry) redirty(recs []Record, ended []Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		if cur := r.m[rec.Key]; cur != nil {
			cur.dirty = true
		}
	}
	for _, k := range ended {
		if r.m[k] == nil {
			r.ended[k] = struct{}{}
		}
	}
}

// BeginTxn checks txnNumber against the highest one the session k has
// started since the server started and records it: a lower one is
// TransactionTooOld. durable is the txnNumber config.transactions holds
// for the session (-1: none), checked by the caller inside its write.
func (r *Registry) BeginTxn(k Key, txnNumber int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.m[k]
	if rec == nil {
		return nil // expired meanwhile: the durable record decides
	}
	if rec.activeTxn > txnNumber {
		return TooOld(k, txnNumber, rec.activeTxn)
	}
	rec.activeTxn = txnNumber
	return nil
}

// TooOld is mongod's TransactionTooOld for txnNumber on session k whose
// active transaction is active.
func TooOld(k Key, txnNumber, active int64) error {
	return mongoerr.New(mongoerr.TransactionTooOld, "Cannot start transaction %d on session %s because a newer transaction with txnNumber %d has already started on this session.", txnNumber, k, active)
}
