package agg

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$fill", stageInfo{parse: parseFill})
}

// parseFill expands $fill as MongoDB does: methods ("locf", "linear")
// become a $setWindowFields with $locf/$linearFill, values become an
// $addFields with $ifNull.
func parseFill(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "the $fill stage specification must be an object, found %s", v.Type)
	}
	var partitionBy, partitionByFields, sortBy, output bson.Value
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "partitionBy":
			partitionBy = e.Value
		case "partitionByFields":
			if e.Value.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.partitionByFields' is the wrong type '%s', expected type 'array'", e.Value.Type)
			}
			partitionByFields = e.Value
		case "sortBy":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.sortBy' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			sortBy = e.Value
		case "output":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.output' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			output = e.Value
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$fill.%s' is an unknown field.", e.Key)
		}
	}
	if output.Type == 0 {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$fill.output' is missing but a required field")
	}
	if partitionBy.Type != 0 && partitionByFields.Type != 0 {
		return nil, mongoerr.New(mongoerr.FillPartitionTwice, "Maximum one of 'partitionBy' and 'partitionByFields can be specified in '$fill'")
	}
	var win, add bson.Builder
	nwin, nadd := 0, 0
	oit := output.Document().Iter()
	for oit.Next() {
		e := oit.Element()
		if e.Value.Type != bson.TypeDocument || e.Value.Document().Len() != 1 {
			return nil, mongoerr.New(mongoerr.FillValueOrMethod, "Exactly one of 'value' or 'method' must be specified in $fill output field '%s'", e.Key)
		}
		f := e.Value.Document().Iter()
		f.Next()
		spec := f.Element()
		switch spec.Key {
		case "value":
			add.StartDocument(e.Key)
			add.StartArray("$ifNull")
			add.AppendString("0", "$"+e.Key)
			add.AppendValue("1", spec.Value)
			add.End()
			add.End()
			nadd++
		case "method":
			if spec.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.output.method' is the wrong type '%s', expected type 'string'", spec.Value.Type)
			}
			fn := ""
			switch spec.Value.StringValue() {
			case "locf":
				fn = "$locf"
			case "linear":
				fn = "$linearFill"
			default:
				return nil, mongoerr.New(mongoerr.FillUnknownMethod, "Method must be either locf or linear")
			}
			if sortBy.Type == 0 && fn == "$linearFill" {
				return nil, mongoerr.New(mongoerr.FillLinearRequiresSortBy, "'sortBy' field must be specified when using 'linear' fill method")
			}
			win.StartDocument(e.Key)
			win.AppendString(fn, "$"+e.Key)
			win.End()
			nwin++
		default:
			return nil, mongoerr.New(mongoerr.FillValueOrMethod, "Exactly one of 'value' or 'method' must be specified in $fill output field '%s'", e.Key)
		}
	}
	var stages chain
	if nwin > 0 {
		var b bson.Builder
		switch {
		case partitionBy.Type != 0:
			b.AppendValue("partitionBy", partitionBy)
		case partitionByFields.Type != 0:
			b.StartDocument("partitionBy")
			pit := partitionByFields.Document().Iter()
			for i := 0; pit.Next(); i++ {
				pv := pit.Element().Value
				if pv.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "partitionByFields must be an array of strings")
				}
				if err := validFieldPath("$fill", pv.StringValue()); err != nil {
					return nil, err
				}
				b.AppendString("p"+bson.Index(i), "$"+pv.StringValue())
			}
			b.End()
		}
		if sortBy.Type != 0 {
			b.AppendValue("sortBy", sortBy)
		}
		b.AppendDocument("output", win.Finish())
		st, err := parseSetWindowFields(c, bson.Value{Type: bson.TypeDocument, Data: b.Finish()})
		if err != nil {
			return nil, err
		}
		stages = append(stages, st)
	} else if sortBy.Type != 0 {
		st, err := newSort(c, sortBy, nil)
		if err != nil {
			return nil, err
		}
		stages = append(stages, st)
	}
	if nadd > 0 {
		st, err := parseAddFields(c, bson.Value{Type: bson.TypeDocument, Data: add.Finish()}, "$fill")
		if err != nil {
			return nil, err
		}
		stages = append(stages, st)
	}
	return stages, nil
}
