package command

import (
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
)

// planCacheClear drops a collection's cached plans, or with query (and
// collation) those of one query shape. sort and projection are accepted:
// Cairn's cache keys on the filter's shape alone.
func planCacheClear(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("query", "sort", "projection", "collation"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	q, hasQuery, err := a.Doc("query")
	if err != nil {
		return err
	}
	collation, _ := c.Body.Lookup("collation")
	opts, err := parseQueryOptions(a, collation)
	if err != nil {
		return err
	}
	if _, err := query.ParseFilter(orEmptyDoc(q), opts); err != nil {
		return err
	}
	tx, coll, err := c.SnapshotCollection(name)
	if err != nil {
		return err
	}
	tx.Rollback()
	if coll == nil {
		return nil // MongoDB answers ok for a missing collection
	}
	key := ""
	if hasQuery {
		key = exec.PlanCacheKey(q, opts)
	}
	c.Env.Plans.Clear(coll, key)
	return nil
}
