package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// maxAggResultBytes bounds the results an aggregate holds for its cursor.
const maxAggResultBytes = 100 * 1024 * 1024

func aggregate(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("pipeline", "cursor", "explain", "allowDiskUse", "collation", "hint", "let",
		"bypassDocumentValidation", "fromMongos", "needsMerge", "isMapReduceCommand"); err != nil {
		return err
	}
	first := a.first()
	var name string
	switch first.Type {
	case bson.TypeString:
		name = first.StringValue()
		if err := catalog.ValidateCollectionName(c.DB, name); err != nil {
			return err
		}
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		if f, _ := first.AsFloat64(); f != 1 {
			return mongoerr.New(mongoerr.FailedToParse, "Invalid aggregate namespace: an integer argument to aggregate must be 1")
		}
		return mongoerr.New(mongoerr.NotImplemented, "collectionless aggregate ({aggregate: 1}) is not supported by Cairn yet")
	default:
		return mongoerr.New(mongoerr.FailedToParse, "Invalid aggregate namespace: collection name must be a string or 1")
	}
	if explain, _, _ := a.boolean("explain"); explain {
		return mongoerr.New(mongoerr.NotImplemented, "aggregate explain is not supported by Cairn yet")
	}
	if _, ok := a.lookup("cursor"); !ok {
		return mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	collation, _ := c.Body.Lookup("collation")
	opts, err := parseQueryOptions(a, collation)
	if err != nil {
		return err
	}
	stagesDoc, ok, err := a.array("pipeline")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(40414, "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	var stages []bson.Doc
	it := stagesDoc.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		stages = append(stages, v.Document())
	}
	p, err := agg.Parse(stages, opts)
	if err != nil {
		return err
	}
	if v, ok := a.lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
	}
	docs, err := runPipeline(c, name, p)
	if err != nil {
		return err
	}
	return writeBatch(c, nil, &sliceSource{docs: docs}, c.DB+"."+name, 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// runPipeline feeds the collection (in _id order, filtered by a leading
// $match) through the pipeline in one snapshot and collects the results.
func runPipeline(c *Ctx, name string, p *agg.Pipeline) ([]bson.Doc, error) {
	tx, err := c.readTx()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, c.DB, name)
	if err != nil {
		return nil, err
	}
	var in agg.Iterator = &agg.SliceIterator{}
	if coll != nil {
		t, err := dataTree(tx, coll)
		if err != nil {
			return nil, err
		}
		cur := t.Cursor()
		started := false
		n := 0
		in = agg.FuncIterator(func() (bson.Doc, error) {
			var k, v []byte
			for {
				if !started {
					k, v = cur.First()
					started = true
				} else {
					k, v = cur.Next()
				}
				if k == nil {
					return nil, cur.Err()
				}
				if n++; n&255 == 0 {
					if err := c.Err(); err != nil {
						return nil, ctxErr(err)
					}
				}
				if p.Filter == nil || p.Filter.Match(bson.Doc(v)) {
					return bson.Doc(v), nil
				}
			}
		})
	}
	out := p.Run(in)
	var docs []bson.Doc
	var bytes int
	for {
		d, err := out.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		if len(d) > MaxBSONObjectSize {
			return nil, mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB)", len(d), len(d))
		}
		bytes += len(d)
		if bytes > maxAggResultBytes {
			return nil, mongoerr.New(mongoerr.NotImplemented, "aggregation results larger than %d bytes are not supported by Cairn yet", maxAggResultBytes)
		}
		docs = append(docs, bson.Doc(append([]byte(nil), d...)))
	}
	return docs, nil
}
