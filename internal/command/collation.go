package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
)

// Collections' default collations (exec.DefaultCollations): a command
// that gives no collation uses its collection's.

// defaultCollation returns the default collation of collection name of
// the command's database (nil: none, or no such collection).
func defaultCollation(c *Ctx, name string) (*query.Collation, error) {
	if name == "" || !c.Env.Collations.Any(&c.Env.Engine) {
		return nil, nil
	}
	coll, err := c.CollectionMeta(name)
	if err != nil || coll == nil {
		return nil, err
	}
	return exec.CollectionCollation(coll)
}

// given reports whether a command gave a collation. collation: {} is none,
// as mongod treats an empty collation document in a query or write (the
// collection's default applies).
func given(collation bson.Value) bool {
	if collation.Type == bson.TypeDocument && len(collation.Document()) <= 5 {
		return false
	}
	return collation.Type != 0 && collation.Type != bson.TypeNull
}

// queryOptionsFor is parseQueryOptions with collection name's default
// collation when the command gives none; a view refuses another
// collation than its own.
func queryOptionsFor(c *Ctx, a args, collation bson.Value, name string) (*query.Options, error) {
	opts, err := parseQueryOptions(a, collation)
	if err != nil {
		return opts, err
	}
	opts.Scripts = scripts(c)
	if !given(collation) {
		opts.Collation, err = defaultCollation(c, name)
		return opts, err
	}
	if name == "" || !c.Env.Collations.Any(&c.Env.Engine) {
		return opts, nil
	}
	coll, err := c.CollectionMeta(name)
	if err != nil {
		return opts, err
	}
	return opts, exec.CheckViewCollation(coll, opts.Collation)
}
