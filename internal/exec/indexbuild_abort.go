package exec

// Cleaning up index builds that did not finish: the catalog entries and
// trees of indexes still marked not ready (indexbuild.go
// describes the build; its failure path and the server's startup both
// remove what a build left behind).

import (
	"context"

	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/kv"
)

// RemoveBuilds removes the indexes of coll that are being built and
// match, with their trees.
func RemoveBuilds(tx *kv.Tx, coll *catalog.Collection, match func(catalog.Index) bool) error {
	next := *coll
	next.Indexes = nil
	removed := false
	for _, ix := range coll.Indexes {
		if !ix.Ready && match(ix) {
			if err := coll.DropIndexTrees(tx, ix); err != nil {
				return err
			}
			removed = true
			continue
		}
		next.Indexes = append(next.Indexes, ix)
	}
	if !removed {
		return nil
	}
	return catalog.Put(tx, &next)
}

// AbortUnfinishedBuilds removes the indexes whose build a previous run of
// the server did not finish, returning how many; the server calls it at
// startup, before it accepts connections.
func AbortUnfinishedBuilds(ctx context.Context, db *kv.DB) (int, error) {
	// Look first in a snapshot: usually there is nothing to remove.
	n := 0
	err := db.View(func(tx *kv.Tx) error {
		colls, err := catalog.List(tx, "")
		for _, coll := range colls {
			for _, ix := range coll.Indexes {
				if !ix.Ready {
					n++
				}
			}
		}
		return err
	})
	if err != nil || n == 0 {
		return 0, err
	}
	err = db.Update(ctx, func(tx *kv.Tx) error {
		colls, err := catalog.List(tx, "")
		if err != nil {
			return err
		}
		for _, coll := range colls {
			if err := RemoveBuilds(tx, coll, func(catalog.Index) bool { return true }); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}
