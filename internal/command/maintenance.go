package command

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// compact returns free space to the file system. Cairn's engine compacts
// the whole data file (every collection) at once, while readers go on.
func compact(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("force", "dryRun", "freeSpaceTargetMB"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	tx, coll, err := c.SnapshotCollection(name)
	if err != nil {
		return err
	}
	tx.Rollback()
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "collection does not exist")
	}
	if v, ok := a.Lookup("dryRun"); ok && v.Truthy() {
		// Only an estimate, as mongod's dryRun: the free pages a compaction
		// would return now (at most; pages still read by a snapshot stay).
		st := c.Env.KV.Stats()
		c.Reply.AppendInt64("estimatedBytesToFree", int64(st.FreePages)*int64(st.PageSize))
		return nil
	}
	before := c.Env.KV.Stats().DataFileBytes
	if err := c.Env.KV.Compact(c); err != nil {
		return fmt.Errorf("compact: %w", ctxErr(err))
	}
	after := c.Env.KV.Stats().DataFileBytes
	c.Reply.AppendInt64("bytesFreed", max(before-after, 0))
	return nil
}

// dbHash returns an MD5 of each collection's documents in _id order and of
// them all, as mongod's dbHash does (the values are Cairn's own: they
// compare Cairn servers, not Cairn with mongod).
func dbHash(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("collections"); err != nil {
		return err
	}
	want := map[string]bool{}
	if arr, ok, err := a.Array("collections"); err != nil {
		return err
	} else if ok {
		it := arr.Iter()
		for it.Next() {
			if it.Element().Value.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "collections must be strings")
			}
			want[it.Element().Value.StringValue()] = true
		}
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	colls, err := catalog.List(tx, c.DB)
	if err != nil {
		return err
	}
	hashes := map[string]string{}
	var names []string
	for _, coll := range colls {
		if _, _, view := coll.View(); view || (len(want) > 0 && !want[coll.Name]) {
			continue
		}
		t, err := exec.DataTree(tx, coll)
		if err != nil {
			return err
		}
		h := md5.New()
		cur := t.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			h.Write(v)
		}
		if err := cur.Err(); err != nil {
			return err
		}
		hashes[coll.Name] = hex.EncodeToString(h.Sum(nil))
		names = append(names, coll.Name)
	}
	sort.Strings(names)
	all := md5.New()
	r := c.Reply
	r.StartDocument("collections")
	for _, n := range names {
		r.AppendString(n, hashes[n])
		all.Write([]byte(hashes[n]))
	}
	r.End()
	r.AppendString("md5", hex.EncodeToString(all.Sum(nil)))
	return nil
}
