package oplog

// Pre-images for change streams.
//
// A collection created or modified with changeStreamPreAndPostImages:
// {enabled: true} keeps, for every update, replacement and delete of one
// of its documents, the document as it was before the change, so that a
// change stream can report it (fullDocumentBeforeChange) and derive the
// post-image of an update from it (fullDocument: whenAvailable or
// required). mongod keeps them in config.system.preimages under _id
// {nsUUID, ts, applyOpsIndex}; Cairn keeps them in the kv tree _preimages,
// keyed by ts (8 bytes), applyOpsIndex (8) and the collection's UUID (16),
// all big-endian, so that the oldest are at the tree's left edge.
//
// A pre-image is written in the transaction of the change, after its entry
// took its ts (a multi-document transaction's pre-images ride with its
// buffered operations and are written with its applyOps entry, under that
// entry's ts and their operation's index). They expire as mongod's do:
// when their entry has left the oplog, or, with setClusterParameter
// {changeStreamOptions: {preAndPostImages: {expireAfterSeconds}}}, once
// they are that old. Expiry is amortised into the appends like the
// oplog's truncation: each append removes at most truncateBatch expired
// pre-images from the left edge.

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// preTree is the kv tree of the pre-images.
const preTree = "_preimages"

// preImageField carries a transaction's pre-image in its buffered
// operation (stripped before the applyOps entry is written).
const preImageField = "$preImage"

// PreImagesEnabled reports whether coll keeps pre-images
// (changeStreamPreAndPostImages: {enabled: true}).
func PreImagesEnabled(coll *catalog.Collection) bool {
	if coll == nil || len(coll.Options) == 0 {
		return false
	}
	v, ok := coll.Options.Lookup("changeStreamPreAndPostImages")
	if !ok || v.Type != bson.TypeDocument {
		return false
	}
	e, ok := v.Document().Lookup("enabled")
	return ok && e.Truthy()
}

// preKey is a pre-image's key.
func preKey(ts repl.Timestamp, index int64, uuid [16]byte) []byte {
	k := make([]byte, 0, 32)
	k = binary.BigEndian.AppendUint64(k, uint64(ts))
	k = binary.BigEndian.AppendUint64(k, uint64(index))
	return append(k, uuid[:]...)
}

// preImages is the log's pre-image state.
type preImages struct {
	// expireAfter is expireAfterSeconds in seconds (0: off, expiry
	// follows the oplog).
	expireAfter atomic.Int64
	// any is set once a pre-image was written or found at startup, so
	// that appends on a server without pre-images never look.
	any atomic.Bool
}

// SetPreImageExpiry sets expireAfterSeconds (0: off).
func (l *Log) SetPreImageExpiry(d time.Duration) { l.pre.expireAfter.Store(int64(d / time.Second)) }

// PreImageExpiry returns expireAfterSeconds (0: off).
func (l *Log) PreImageExpiry() time.Duration {
	return time.Duration(l.pre.expireAfter.Load()) * time.Second
}

// writePreImage stores pre as the pre-image of the operation index of the
// entry at ts on the collection uuid, in tx.
func (l *Log) writePreImage(tx *kv.Tx, ts repl.Timestamp, index int64, uuid [16]byte, pre bson.Doc) error {
	t, err := tx.CreateTreeIfNotExists(preTree)
	if err != nil {
		return fmt.Errorf("oplog: pre-images: %w", err)
	}
	if err := t.Put(preKey(ts, index, uuid), pre); err != nil {
		return fmt.Errorf("oplog: writing a pre-image: %w", err)
	}
	l.pre.any.Store(true)
	return nil
}

// PreImage returns the pre-image of the operation index of the entry at
// ts on the collection uuid, as tx sees it (nil: none).
func PreImage(tx *kv.Tx, ts repl.Timestamp, index int64, uuid [16]byte) (bson.Doc, error) {
	t, err := tx.Tree(preTree)
	if err != nil {
		return nil, nil // no pre-image was ever written
	}
	v, err := t.Get(preKey(ts, index, uuid))
	if err != nil {
		return nil, fmt.Errorf("oplog: reading a pre-image: %w", err)
	}
	return bson.Doc(v), nil
}

// expirePreImages removes up to truncateBatch pre-images older than the
// oldest entry of the oplog tree t or, with expireAfterSeconds, than that.
func (l *Log) expirePreImages(tx *kv.Tx, t *kv.Tree) error {
	if !l.pre.any.Load() {
		return nil
	}
	p, err := tx.Tree(preTree)
	if err != nil {
		return nil
	}
	var cutoff uint64
	if k, _ := t.Cursor().First(); k != nil {
		cutoff = binary.BigEndian.Uint64(k)
	}
	if s := l.pre.expireAfter.Load(); s > 0 {
		secs := l.now().Unix() - s
		if secs > 0 {
			cutoff = max(cutoff, uint64(repl.MakeTimestamp(uint32(min(secs, int64(^uint32(0)))), 0)))
		}
	}
	cur := p.Cursor()
	for range truncateBatch {
		k, _ := cur.First()
		if k == nil || binary.BigEndian.Uint64(k) >= cutoff {
			break
		}
		k = append([]byte(nil), k...)
		if _, err := p.Delete(k); err != nil {
			return fmt.Errorf("oplog: expiring pre-images: %w", err)
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("oplog: expiring pre-images: %w", err)
	}
	return nil
}

// takePreImage returns op without its pre-image field and the pre-image
// (nil: none).
func takePreImage(op bson.Doc) (bson.Doc, bson.Doc) {
	v, ok := op.Lookup(preImageField)
	if !ok {
		return op, nil
	}
	var b bson.Builder
	it := op.Iter()
	for it.Next() {
		if it.Element().Key != preImageField {
			b.AppendElement(it.Element())
		}
	}
	return b.Finish(), v.Document()
}

// csOptionsKey is the key of changeStreamOptions in the log's meta tree.
const csOptionsKey = "changeStreamOptions"

// SaveChangeStreamOptions records the changeStreamOptions cluster
// parameter (its document) in tx; LoadChangeStreamOptions reads it back
// (nil: never set).
func (l *Log) SaveChangeStreamOptions(tx *kv.Tx, doc bson.Doc) error {
	m, err := tx.Tree(metaTree)
	if err != nil {
		return fmt.Errorf("oplog: %w", err)
	}
	if err := m.Put([]byte(csOptionsKey), doc); err != nil {
		return fmt.Errorf("oplog: saving changeStreamOptions: %w", err)
	}
	return nil
}

// LoadChangeStreamOptions returns the recorded changeStreamOptions (nil:
// never set).
func (l *Log) LoadChangeStreamOptions(tx *kv.Tx) (bson.Doc, error) {
	m, err := tx.Tree(metaTree)
	if err != nil {
		return nil, nil
	}
	v, err := m.Get([]byte(csOptionsKey))
	if err != nil || v == nil {
		return nil, err
	}
	return append(bson.Doc(nil), v...), nil
}

// ExpiryOf returns changeStreamOptions' preAndPostImages.expireAfterSeconds
// (0: "off" or absent).
func ExpiryOf(opts bson.Doc) time.Duration {
	v, ok := opts.Lookup("preAndPostImages")
	if !ok || v.Type != bson.TypeDocument {
		return 0
	}
	e, ok := v.Document().Lookup("expireAfterSeconds")
	if !ok || !e.IsNumber() {
		return 0
	}
	n, _ := e.AsInt64()
	return time.Duration(max(n, 0)) * time.Second
}
