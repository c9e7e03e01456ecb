package exec

import (
	"crypto/rand"
	"encoding/binary"
	"sync/atomic"
	"time"
)

var (
	oidProcess [5]byte
	oidCounter atomic.Uint32
)

func init() {
	_, _ = rand.Read(oidProcess[:])
	var b [4]byte
	_, _ = rand.Read(b[:])
	oidCounter.Store(binary.BigEndian.Uint32(b[:]))
}

// NewObjectID returns a new ObjectId: 4-byte seconds, 5 random bytes per
// process, 3-byte counter, as MongoDB generates them.
func NewObjectID() (id [12]byte) {
	binary.BigEndian.PutUint32(id[:4], uint32(time.Now().Unix()))
	copy(id[4:9], oidProcess[:])
	n := oidCounter.Add(1)
	id[9], id[10], id[11] = byte(n>>16), byte(n>>8), byte(n)
	return id
}
