package exec

import (
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Collection default collations: create's collation option is kept in the
// collection's options, and the CRUD commands, aggregate and
// createIndexes use it when they give none (an explicit {locale:
// "simple"} asks for binary comparison).
//
// Looking the default up costs a catalog read per command, so it is done
// only once some collection has one: DefaultCollations remembers whether
// any collection was created with a collation (found by one scan of the
// catalog on first use, then kept up to date by create).

// DefaultCollations tells whether collections with default collations
// exist. The zero value is ready.
type DefaultCollations struct {
	once sync.Once
	any  atomic.Bool
}

// Any reports whether some collection of e may have a default collation.
func (d *DefaultCollations) Any(e *Engine) bool {
	d.once.Do(func() {
		tx, err := e.KV.BeginRead()
		if err != nil {
			d.any.Store(true) // cannot tell: look each time
			return
		}
		defer tx.Rollback()
		colls, err := catalog.List(tx, "") // every database
		if err != nil {
			d.any.Store(true)
			return
		}
		for _, coll := range colls {
			if _, ok := coll.Options.Lookup("collation"); ok {
				d.any.Store(true)
				return
			}
		}
	})
	return d.any.Load()
}

// Note records that a collection with a default collation exists.
func (d *DefaultCollations) Note(e *Engine) {
	d.Any(e)
	d.any.Store(true)
}

// CollectionCollation reads a collection's default collation (nil: none).
func CollectionCollation(coll *catalog.Collection) (*query.Collation, error) {
	v, ok := coll.Options.Lookup("collation")
	if !ok || v.Type != bson.TypeDocument {
		return nil, nil
	}
	return query.ParseCollation(v.Document())
}

// CheckViewCollation refuses a collation other than a view's own default,
// as mongod does (a view's results depend on it); coll may be nil or a
// collection.
func CheckViewCollation(coll *catalog.Collection, want *query.Collation) error {
	if coll == nil {
		return nil
	}
	if _, _, isView := coll.View(); !isView {
		return nil
	}
	have, err := CollectionCollation(coll)
	if err != nil {
		return err
	}
	if !index.SameCollation(have, want) {
		return mongoerr.New(mongoerr.OptionNotSupportedOnView, "Cannot override a view's default collation")
	}
	return nil
}
