package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$unwind", stageInfo{parse: parseUnwind})
}

// unwindStage outputs one document per element of an array field.
type unwindStage struct {
	path          []string
	indexField    string
	preserveEmpty bool
}

func parseUnwind(_ *Context, v bson.Value) (stage, error) {
	s := &unwindStage{}
	var path string
	switch v.Type {
	case bson.TypeString:
		path = v.StringValue()
	case bson.TypeDocument:
		it := v.Document().Iter()
		found := false
		for it.Next() {
			e := it.Element()
			switch e.Key {
			case "path":
				if e.Value.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.UnwindPathNotString, "expected a string as the path for $unwind stage, got %s", e.Value.Type)
				}
				path, found = e.Value.StringValue(), true
			case "includeArrayIndex":
				if e.Value.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.UnwindIncludeArrayIndexBad, "expected a non-empty string for the includeArrayIndex  option to $unwind stage, got %s", e.Value.Type)
				}
				s.indexField = e.Value.StringValue()
				if s.indexField == "" {
					return nil, mongoerr.New(mongoerr.UnwindIncludeArrayIndexBad, "expected a non-empty string for the includeArrayIndex  option to $unwind stage, got string")
				}
				if strings.HasPrefix(s.indexField, "$") {
					return nil, mongoerr.New(mongoerr.UnwindIncludeArrayIndexDollar, "includeArrayIndex option to $unwind stage should not be prefixed with a '$': %s", s.indexField)
				}
			case "preserveNullAndEmptyArrays":
				if e.Value.Type != bson.TypeBoolean {
					return nil, mongoerr.New(mongoerr.UnwindPreserveNotBool, "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage, got %s", e.Value.Type)
				}
				s.preserveEmpty = e.Value.Boolean()
			default:
				return nil, mongoerr.New(mongoerr.UnwindUnknownOption, "unrecognized option to $unwind stage: %s", e.Key)
			}
		}
		if !found {
			return nil, mongoerr.New(mongoerr.UnwindMissingPath, "no path specified to $unwind stage")
		}
	default:
		return nil, mongoerr.New(mongoerr.UnwindBadSpec, "expected either a string or an object as specification for $unwind stage, got %s", v.Type)
	}
	if path == "" {
		return nil, mongoerr.New(mongoerr.FieldPathEmpty, "FieldPath cannot be constructed with empty string")
	}
	if !strings.HasPrefix(path, "$") {
		return nil, mongoerr.New(mongoerr.UnwindPathNoDollar, "path option to $unwind stage should be prefixed with a '$': %s", path)
	}
	if err := validFieldPath("$unwind", path[1:]); err != nil {
		return nil, err
	}
	s.path = strings.Split(path[1:], ".")
	if s.indexField != "" {
		if err := validFieldPath("$unwind", s.indexField); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// lookupPath finds the value at path through embedded documents only.
func lookupPath(d bson.Doc, path []string) bson.Value {
	v := bson.Value{Type: bson.TypeDocument, Data: d}
	for _, p := range path {
		if v.Type != bson.TypeDocument {
			return bson.Value{}
		}
		nv, ok := v.Document().Lookup(p)
		if !ok {
			return bson.Value{}
		}
		v = nv
	}
	return v
}

func (s *unwindStage) open(in Iterator) (Iterator, error) {
	var cur bson.Doc
	var elems []bson.Value
	pos := 0
	var idxPath []string
	if s.indexField != "" {
		idxPath = strings.Split(s.indexField, ".")
	}
	emit := func(d bson.Doc, v bson.Value, idx bson.Value) bson.Doc {
		out := bson.WithPath(d, s.path, v)
		if idxPath != nil {
			out = bson.WithPath(out, idxPath, idx)
		}
		return out
	}
	null := bson.Value{Type: bson.TypeNull, Data: []byte{}}
	return FuncIterator(func() (bson.Doc, error) {
		for {
			if pos < len(elems) {
				var idx bson.Value
				if idxPath != nil {
					var b bson.Builder
					b.AppendInt64("i", int64(pos))
					idx, _ = b.Finish().Lookup("i")
				}
				d := emit(cur, elems[pos], idx)
				pos++
				return d, nil
			}
			d, err := in.Next()
			if d == nil || err != nil {
				return nil, err
			}
			v := lookupPath(d, s.path)
			switch {
			case v.Type == bson.TypeArray && v.Document().Len() > 0:
				cur = cloneDoc(d)
				v = lookupPath(cur, s.path)
				elems, pos = v.Document().Values(), 0
			case v.Type == bson.TypeArray:
				if s.preserveEmpty {
					out := bson.WithPath(d, s.path, bson.Value{})
					if idxPath != nil {
						out = bson.WithPath(out, idxPath, null)
					}
					return out, nil
				}
			case v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
				if s.preserveEmpty {
					if idxPath == nil {
						return d, nil
					}
					return bson.WithPath(d, idxPath, null), nil
				}
			default:
				if idxPath == nil {
					return d, nil
				}
				return bson.WithPath(d, idxPath, null), nil
			}
		}
	}), nil
}
