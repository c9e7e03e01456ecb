package js

// mapReduce's input and output: the out option and the aggregations the
// command runs to read its input and to write its results (mapreduce.go).

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// MapReduceOut is mapReduce's out option.
type MapReduceOut struct {
	// Inline answers the results in the reply.
	Inline bool
	// Mode is replace, merge or reduce.
	Mode     string
	DB, Coll string
	// DBExplicit is set when out named its database: the reply names
	// both ({result: {db, collection}}).
	DBExplicit bool
}

// ParseMapReduceOut parses out (v, present) of the command cmd (the name as
// the client spelled it) run on db.
func ParseMapReduceOut(cmd, db string, v bson.Value, present bool) (MapReduceOut, error) {
	if !present {
		return MapReduceOut{}, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.out' is missing but a required field", cmd)
	}
	o := MapReduceOut{Mode: "replace", DB: db}
	wrongType := func(field string, v bson.Value, expected string) error {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type '%s'", cmd, field, v.Type, expected)
	}
	switch v.Type {
	case bson.TypeString:
		o.Coll = v.StringValue()
	case bson.TypeDocument:
		it := v.Document().Iter()
		modes := 0
		for it.Next() {
			e := it.Element()
			switch e.Key {
			case "inline":
				o.Inline = true
				modes++
			case "replace", "merge", "reduce":
				if e.Value.Type != bson.TypeString {
					return o, wrongType("out."+e.Key, e.Value, "string")
				}
				o.Mode, o.Coll = e.Key, e.Value.StringValue()
				modes++
			case "db":
				if e.Value.Type != bson.TypeString {
					return o, wrongType("out.db", e.Value, "string")
				}
				o.DB, o.DBExplicit = e.Value.StringValue(), true
			case "nonAtomic":
				// 4.4+: accepted for merge and reduce (always non-atomic).
			case "sharded":
				return o, mongoerr.New(mongoerr.InvalidOptions, "sharded field value must be true, got %s", e.Value.String())
			default:
				return o, mongoerr.New(mongoerr.BadValue, "'out' has unknown field: %s", e.Key)
			}
		}
		if modes != 1 {
			return o, mongoerr.New(mongoerr.BadValue, "'out' must specify exactly one of inline, replace, merge or reduce")
		}
	default:
		return o, mongoerr.New(mongoerr.BadValue, "'out' must be either a string or an object")
	}
	if !o.Inline && o.Coll == "" {
		return o, mongoerr.New(mongoerr.InvalidNamespace, "Invalid 'out' collection name")
	}
	return o, nil
}

// MapReduceInput is the aggregate command that reads mapReduce's input
// from coll: query, sort (if not empty) and limit (if positive) as
// $match, $sort and $limit stages, and the collation if given (a zero
// Value is absent).
func MapReduceInput(coll string, query, sort bson.Value, limit int64, collation bson.Value) bson.Doc {
	b := bson.NewBuilder(nil)
	b.AppendString("aggregate", coll)
	b.StartArray("pipeline")
	i := 0
	stage := func(op string, v bson.Value) {
		b.StartDocument(bson.Index(i))
		b.AppendValue(op, v)
		b.End()
		i++
	}
	if query.Type != 0 {
		stage("$match", query)
	}
	if sort.Type != 0 && sort.Document().Len() > 0 {
		stage("$sort", sort)
	}
	if limit > 0 {
		b.StartDocument(bson.Index(i))
		b.AppendInt64("$limit", limit)
		b.End()
	}
	b.End()
	b.StartDocument("cursor")
	b.End()
	if collation.Type != 0 {
		b.AppendValue("collation", collation)
	}
	return b.Finish()
}

// MapReduceOutput is the aggregate command that writes the results to
// out: $documents into $out (replace) or into $merge on _id (merge,
// reduce).
func MapReduceOutput(out MapReduceOut, results []bson.Doc) bson.Doc {
	b := bson.NewBuilder(nil)
	b.AppendInt32("aggregate", 1)
	b.StartArray("pipeline")
	b.StartDocument("0")
	b.StartArray("$documents")
	for i, d := range results {
		b.AppendDocument(bson.Index(i), d)
	}
	b.End()
	b.End()
	b.StartDocument("1")
	if out.Mode == "replace" {
		b.StartDocument("$out")
		b.AppendString("db", out.DB)
		b.AppendString("coll", out.Coll)
		b.End()
	} else {
		b.StartDocument("$merge")
		b.StartDocument("into")
		b.AppendString("db", out.DB)
		b.AppendString("coll", out.Coll)
		b.End()
		b.AppendString("on", "_id")
		b.AppendString("whenMatched", "replace")
		b.AppendString("whenNotMatched", "insert")
		b.End()
	}
	b.End()
	b.End()
	b.StartDocument("cursor")
	b.End()
	return b.Finish()
}

// MapReduceExisting is the aggregate command (to run on out.DB) that
// reads the documents of out.Coll whose _id is one of the results'.
func MapReduceExisting(out MapReduceOut, results []bson.Doc) bson.Doc {
	b := bson.NewBuilder(nil)
	b.AppendString("aggregate", out.Coll)
	b.StartArray("pipeline")
	b.StartDocument("0")
	b.StartDocument("$match")
	b.StartDocument("_id")
	b.StartArray("$in")
	for i, d := range results {
		id, _ := d.Lookup("_id")
		b.AppendValue(bson.Index(i), id)
	}
	b.End()
	b.End()
	b.End()
	b.End()
	b.End()
	b.StartDocument("cursor")
	b.End()
	return b.Finish()
}
