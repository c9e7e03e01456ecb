package catalog

// Where a new collection's UUID comes from. A collection's UUID is drawn
// at random when it is created, except on a replica-set member that
// applies the primary's create entry: the member's replication
// (internal/raftrepl) gives its database a source that answers the
// entry's ui for the namespace it creates, so that the collection has
// the same UUID on every member, as mongod's (listCollections'
// info.uuid, change stream resume tokens, the oplog's ui).

import (
	"sync"

	"github.com/cairndb/cairn/kv"
)

// UUIDSource answers the UUID the collection db.name being created in
// the write transaction takes (false: a random one).
type UUIDSource func(db, name string) ([16]byte, bool)

var uuidSources sync.Map // *kv.DB -> UUIDSource

// SetUUIDSource makes src the UUID source of the collections created in
// kdb (nil: none).
func SetUUIDSource(kdb *kv.DB, src UUIDSource) {
	if src == nil {
		uuidSources.Delete(kdb)
		return
	}
	uuidSources.Store(kdb, src)
}

// sourcedUUID is the UUID kdb's source gives db.name, if any.
func sourcedUUID(tx *kv.Tx, db, name string) ([16]byte, bool) {
	v, ok := uuidSources.Load(tx.DB())
	if !ok {
		return [16]byte{}, false
	}
	return v.(UUIDSource)(db, name)
}
