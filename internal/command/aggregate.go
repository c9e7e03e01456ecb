package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// aggregate runs an aggregation pipeline. Results are served by a cursor
// whose source is exec.AggSource (exec/aggsource.go); $out and $merge run
// to completion in the command and write in one transaction.
func aggregate(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("pipeline", "cursor", "explain", "allowDiskUse", "collation", "hint", "let",
		"bypassDocumentValidation", "fromMongos", "needsMerge", "isMapReduceCommand", "rawData"); err != nil {
		return err
	}
	var name string
	switch first := a.First(); first.Type {
	case bson.TypeString:
		name = first.StringValue()
		if err := catalog.ValidateCollectionName(c.DB, name); err != nil {
			return err
		}
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		if f, _ := first.AsFloat64(); f != 1 {
			return mongoerr.New(mongoerr.FailedToParse, "Invalid aggregate namespace: an integer argument to aggregate must be 1")
		}
	default:
		return mongoerr.New(mongoerr.FailedToParse, "Invalid aggregate namespace: collection name must be a string or 1")
	}
	explain, _, err := a.Boolean("explain")
	if err != nil {
		return err
	}
	// MongoDB 7.0's allowDiskUseByDefault is true: blocking stages spill
	// unless the command says allowDiskUse: false.
	allowDisk, set, err := a.Boolean("allowDiskUse")
	if err != nil {
		return err
	}
	if !set {
		allowDisk = true
	}
	if _, _, err := a.Boolean("bypassDocumentValidation"); err != nil {
		return err
	}
	if _, ok := a.Lookup("cursor"); !ok && !explain {
		return mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	_, explicitBatch := lookupBatchSize(a)
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	collation, _ := c.Body.Lookup("collation")
	qopts, err := queryOptionsFor(c, a, collation, name)
	if err != nil {
		return err
	}
	stages, err := pipelineArg(a)
	if err != nil {
		return err
	}
	if isChangeStream(stages) {
		return changeStream(c, a, name, stages, batchSize, explain)
	}
	if stages, err = c.Env.Ops.ExpandCurrentOp(c.DB, name, stages); err != nil {
		return err
	}
	source := name
	if name != "" {
		if source, stages, err = expandView(c, name, stages); err != nil {
			return err
		}
	}
	actx, p, planning, err := c.Env.ParseAggregate(c.DB, name, source, stages, qopts, allowDisk)
	if err != nil {
		return err
	}
	if v, ok := a.Lookup("hint"); ok && name != "" {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		if source == name {
			planning.Hint = v
		}
	}
	ns := c.DB + "." + name
	if name == "" {
		ns = c.DB + ".$cmd.aggregate"
	}
	if explain {
		return explainAggregate(c, ns, source, p, &planning)
	}
	cat := &exec.AggCatalog{Cmd: c, Latency: c.Env.Top.Latency, Started: c.Env.Started, Sessions: sessionLister{c}}
	src := c.Env.NewAggSource(actx, p, c.DB, source, cat, planning)
	if p.Writes() {
		var wc writeConcern
		if wc, err = parseWriteConcern(c); err != nil {
			return err
		}
		cat.Durability = wc.durability()
		// Run to completion now: $out/$merge produce no documents.
		if _, err := src.Fill(c, func(bson.Doc) bool { return true }); err != nil {
			return err
		}
		return writeBatch(c, nil, &exec.SliceSource{}, ns, 0, batchOptions{firstBatch: true}, false)
	}
	var s exec.Source = src
	if explicitBatch && batchSize == 0 {
		s = &exec.DeferFirst{Source: src}
	}
	return writeBatch(c, nil, s, ns, 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// expandView resolves name; for a view it returns the underlying
// collection and the views' pipelines followed by stages.
func expandView(c *Ctx, name string, stages []bson.Doc) (string, []bson.Doc, error) {
	tx, err := c.ReadSnapshot()
	if err != nil {
		return "", nil, err
	}
	defer tx.Rollback()
	source, vstages, isView, err := exec.ResolveView(tx, c.DB, name)
	if err != nil || !isView {
		return name, stages, err
	}
	if len(stages) > 0 && stages[0].Len() == 1 {
		if _, ok := stages[0].Lookup("$collStats"); ok {
			// $collStats on a time-series collection reports its buckets
			// (exec.CollStatsDoc): the view's pipeline does not run.
			if ts, err := exec.TimeseriesOf(tx, c.DB, name); err != nil || ts != nil {
				return name, stages, err
			}
		}
	}
	return source, append(vstages, stages...), nil
}

func lookupBatchSize(a args) (bson.Value, bool) {
	cur, ok, _ := a.Doc("cursor")
	if !ok {
		return bson.Value{}, false
	}
	return cur.Lookup("batchSize")
}

func pipelineArg(a args) ([]bson.Doc, error) {
	stagesDoc, ok, err := a.Array("pipeline")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	var stages []bson.Doc
	it := stagesDoc.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		stages = append(stages, v.Document())
	}
	return stages, nil
}

// newAggContext prepares a pipeline's options (exec.Engine.NewAggContext).
func newAggContext(c *Ctx, name string, qopts *query.Options, allowDisk bool) (*agg.Context, error) {
	return c.Env.NewAggContext(c.DB, name, qopts, allowDisk)
}
