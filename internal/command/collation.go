package command

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
// only once some collection has one: defaultsState remembers whether any
// collection was created with a collation (found by one scan of the
// catalog on first use, then kept up to date by create).

type defaultsState struct {
	once sync.Once
	any  atomic.Bool
}

// anyDefaultCollation reports whether some collection may have a default
// collation.
func (e *Env) anyDefaultCollation() bool {
	e.collations.once.Do(func() {
		tx, err := e.KV.BeginRead()
		if err != nil {
			e.collations.any.Store(true) // cannot tell: look each time
			return
		}
		defer tx.Rollback()
		colls, err := catalog.List(tx, "") // every database
		if err != nil {
			e.collations.any.Store(true)
			return
		}
		for _, coll := range colls {
			if _, ok := coll.Options.Lookup("collation"); ok {
				e.collations.any.Store(true)
				return
			}
		}
	})
	return e.collations.any.Load()
}

// noteDefaultCollation records that a collection with a default collation
// exists.
func (e *Env) noteDefaultCollation() {
	e.anyDefaultCollation()
	e.collations.any.Store(true)
}

// defaultCollation returns the default collation of collection name of
// the command's database (nil: none, or no such collection).
func (c *Ctx) defaultCollation(name string) (*query.Collation, error) {
	if name == "" || !c.Env.anyDefaultCollation() {
		return nil, nil
	}
	coll, err := c.collectionMeta(name)
	if err != nil || coll == nil {
		return nil, err
	}
	return collectionCollation(coll)
}

// collectionCollation reads a collection's default collation (nil: none).
func collectionCollation(coll *catalog.Collection) (*query.Collation, error) {
	v, ok := coll.Options.Lookup("collation")
	if !ok || v.Type != bson.TypeDocument {
		return nil, nil
	}
	return query.ParseCollation(v.Document())
}

// given reports whether a command gave a collation.
func given(collation bson.Value) bool {
	return collation.Type != 0 && collation.Type != bson.TypeNull
}

// queryOptionsFor is parseQueryOptions with collection name's default
// collation when the command gives none.
func (c *Ctx) queryOptionsFor(a args, collation bson.Value, name string) (*query.Options, error) {
	opts, err := parseQueryOptions(a, collation)
	if err != nil {
		return opts, err
	}
	if given(collation) {
		return opts, c.checkViewCollation(name, opts.Collation)
	}
	opts.Collation, err = c.defaultCollation(name)
	return opts, err
}

// checkViewCollation refuses a collation other than a view's own default,
// as mongod does (a view's results depend on it).
func (c *Ctx) checkViewCollation(name string, want *query.Collation) error {
	if name == "" || !c.Env.anyDefaultCollation() {
		return nil
	}
	coll, err := c.collectionMeta(name)
	if err != nil || coll == nil {
		return err
	}
	if _, _, isView := coll.View(); !isView {
		return nil
	}
	have, err := collectionCollation(coll)
	if err != nil {
		return err
	}
	if !index.SameCollation(have, want) {
		return mongoerr.New(mongoerr.OptionNotSupportedOnView, "Cannot override a view's default collation")
	}
	return nil
}
