package command

// aggregate with $changeStream first: the request's parsing and the
// reply; internal/changestream derives the events, keeps the position and
// the tokens.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/changestream"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// isChangeStream reports whether a pipeline starts with $changeStream.
func isChangeStream(stages []bson.Doc) bool {
	if len(stages) == 0 {
		return false
	}
	it := stages[0].Iter()
	return it.Next() && it.Element().Key == "$changeStream"
}

// changeStream opens a change stream on the aggregate's namespace (name ""
// for {aggregate: 1}) and answers its first batch.
func changeStream(c *Ctx, a args, name string, stages []bson.Doc, batchSize int64, explain bool) error {
	if c.Env.Oplog == nil {
		return mongoerr.New(mongoerr.ChangeStreamReplicaSetOnly, "The $changeStream stage is only supported on replica sets")
	}
	first, _ := stages[0].Lookup("$changeStream")
	spec, err := changestream.ParseSpec(first)
	if err != nil {
		return err
	}
	scope := changestream.Scope{DB: c.DB, Coll: name, Cluster: spec.AllChangesForCluster}
	switch {
	case spec.AllChangesForCluster && (c.DB != "admin" || name != ""):
		return mongoerr.New(mongoerr.InvalidNamespace, "A $changeStream with 'allChangesForCluster:true' may only be opened on the 'admin' database, and with no collection name")
	case c.DB == "admin" && !spec.AllChangesForCluster:
		return mongoerr.New(mongoerr.InvalidNamespace, "$changeStream may not be opened on the internal admin database")
	case c.DB == "config" || c.DB == "local":
		return mongoerr.New(mongoerr.InvalidNamespace, "$changeStream may not be opened on the internal %s database", c.DB)
	}
	if spec.AllChangesForCluster {
		if err := requireEveryDatabase(c, auth.Find); err != nil {
			return err
		}
	}
	if name != "" {
		// mongod: a view has no changes of its own to stream.
		if source, _, err := expandView(c, name, nil); err != nil {
			return err
		} else if source != name {
			return mongoerr.New(mongoerr.CommandNotSupportedOnView, "Namespace %s.%s is a view, not a collection", c.DB, name)
		}
	}
	rest := stages[1:]
	if err := changestream.CheckStages(rest); err != nil {
		return err
	}
	if explain {
		return mongoerr.New(mongoerr.NotImplemented, "explain of a $changeStream pipeline is not supported by Cairn")
	}
	var pipe *agg.Pipeline
	if len(rest) > 0 {
		collation, _ := c.Body.Lookup("collation")
		qopts, err := queryOptionsFor(c, a, collation, name)
		if err != nil {
			return err
		}
		actx, err := newAggContext(c, "$cmd.aggregate", qopts, false)
		if err != nil {
			return err
		}
		if pipe, err = agg.Parse(actx, rest); err != nil {
			return err
		}
	}
	s, err := changestream.Open(c.Env.KV, c.Env.Oplog, c.Env.ChangeStreams, scope, spec, pipe, rest)
	if err != nil {
		return err
	}
	ns := c.DB + "." + name
	if name == "" {
		ns = c.DB + ".$cmd.aggregate"
	}
	return writeBatch(c, nil, s, ns, 0, batchOptions{batchSize: batchSize, firstBatch: true,
		tailable: true, awaitData: true, watch: s.WatchTree()}, false)
}

// requireEveryDatabase refuses a connection that does not hold actions on
// every database (a cluster-wide stream reads every database's changes,
// as mongod's find on anyResource).
func requireEveryDatabase(c *Ctx, actions auth.Action) error {
	m := c.Env.Auth
	if !m.Enabled() || c.Conn == nil {
		return nil
	}
	s := c.Conn.Session()
	if !s.Authenticated() {
		if !m.HasUsers() && s.Loopback {
			return nil
		}
		return dispatch.NotAuthorized(c, c.DB)
	}
	privs, _, err := s.Privileges(m)
	if err != nil {
		return err
	}
	if !privs.AnyDatabase(actions) {
		return dispatch.NotAuthorized(c, c.DB)
	}
	return nil
}

// postBatchResumer is a source whose batches carry a postBatchResumeToken.
type postBatchResumer interface {
	PostBatchResumeToken() bson.Doc
}
