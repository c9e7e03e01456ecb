package command

import (
	"os"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
)

// planCacheClear drops a collection's cached plans, or with query (and
// collation) those of one query shape. sort and projection are accepted:
// Cairn's cache keys on the filter's shape alone.
func planCacheClear(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("query", "sort", "projection", "collation"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	q, hasQuery, err := a.doc("query")
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
	tx, coll, err := c.snapshotCollection(name)
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

// PlanCacheStats implements $planCacheStats.
func (k *aggCatalog) PlanCacheStats(db, name string) ([]bson.Doc, error) {
	coll, err := catalog.Get(k.Tx, db, name)
	if err != nil || coll == nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return k.env.Plans.Stats(coll, host), nil
}
