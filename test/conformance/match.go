package conformance

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// missing is the RawValue used for "no such field / no result". Its Type is 0,
// which no real BSON value has.
var missing = bson.RawValue{}

func isMissing(v bson.RawValue) bool { return v.Type == 0 }

// entityLookup gives the matcher access to the test's entity map for
// $$matchesEntity and $$sessionLsid.
type entityLookup interface {
	bsonEntity(name string) (bson.RawValue, error)
	sessionLsid(name string) (bson.Raw, error)
}

// matcher implements the unified test format's "Evaluating Matches" rules.
type matcher struct {
	entities entityLookup
}

// matchRoot matches expected against actual, actual being a root-level value:
// a root document may carry fields the expectation does not mention.
func (m matcher) matchRoot(expected, actual bson.RawValue) error {
	return m.match("", expected, actual, true)
}

// matchNested matches with no extra fields allowed at any level (used for
// values such as distinct results and scalar results).
func (m matcher) matchNested(expected, actual bson.RawValue) error {
	return m.match("", expected, actual, false)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describePath(path string) string {
	if path == "" {
		return "at top level"
	}
	return "at " + path
}

// specialOperator reports whether doc is a single-key document whose key
// starts with "$$", and returns the operator and its argument.
func specialOperator(doc bson.Raw) (string, bson.RawValue, bool) {
	elems, err := doc.Elements()
	if err != nil || len(elems) != 1 || !strings.HasPrefix(elems[0].Key(), "$$") {
		return "", missing, false
	}
	return elems[0].Key(), elems[0].Value(), true
}

func (m matcher) match(path string, expected, actual bson.RawValue, root bool) error {
	switch expected.Type {
	case bson.TypeEmbeddedDocument:
		exp := expected.Document()
		if op, arg, ok := specialOperator(exp); ok {
			return m.special(path, op, arg, actual, root)
		}
		if actual.Type != bson.TypeEmbeddedDocument {
			return fmt.Errorf("%s: expected a document %s, got %s", describePath(path), exp, show(actual))
		}
		act := actual.Document()
		elems, err := exp.Elements()
		if err != nil {
			return err
		}
		for _, e := range elems {
			key, ev := e.Key(), e.Value()
			p := joinPath(path, key)
			av, lerr := act.LookupErr(key)
			if lerr != nil {
				av = missing
			}
			if sub, ok := ev.DocumentOK(); ok {
				if op, arg, ok := specialOperator(sub); ok {
					if err := m.special(p, op, arg, av, false); err != nil {
						return err
					}
					continue
				}
			}
			if isMissing(av) {
				return fmt.Errorf("%s: field missing in actual document %s", describePath(p), act)
			}
			if err := m.match(p, ev, av, false); err != nil {
				return err
			}
		}
		if !root {
			aelems, err := act.Elements()
			if err != nil {
				return err
			}
			for _, a := range aelems {
				if _, err := exp.LookupErr(a.Key()); err != nil {
					return fmt.Errorf("%s: unexpected extra field %q in %s", describePath(path), a.Key(), act)
				}
			}
		}
		return nil
	case bson.TypeArray:
		if actual.Type != bson.TypeArray {
			return fmt.Errorf("%s: expected an array %s, got %s", describePath(path), expected, show(actual))
		}
		ev, err := expected.Array().Values()
		if err != nil {
			return err
		}
		av, err := actual.Array().Values()
		if err != nil {
			return err
		}
		if len(ev) != len(av) {
			return fmt.Errorf("%s: expected %d array elements, got %d: %s", describePath(path), len(ev), len(av), actual)
		}
		for i := range ev {
			if err := m.match(joinPath(path, strconv.Itoa(i)), ev[i], av[i], false); err != nil {
				return err
			}
		}
		return nil
	}
	if isMissing(actual) {
		return fmt.Errorf("%s: expected %s, got nothing", describePath(path), expected)
	}
	if !scalarsEqual(expected, actual) {
		return fmt.Errorf("%s: expected %s (%s), got %s (%s)", describePath(path), expected, expected.Type, actual, actual.Type)
	}
	return nil
}

func show(v bson.RawValue) string {
	if isMissing(v) {
		return "nothing"
	}
	return fmt.Sprintf("%s (%s)", v, v.Type)
}

func (m matcher) special(path, op string, arg, actual bson.RawValue, root bool) error {
	switch op {
	case "$$exists":
		want, ok := arg.BooleanOK()
		if !ok {
			return fmt.Errorf("%s: $$exists needs a boolean, got %s", describePath(path), arg)
		}
		if want == isMissing(actual) {
			return fmt.Errorf("%s: expected field to exist: %v, got %s", describePath(path), want, show(actual))
		}
		return nil
	case "$$type":
		if isMissing(actual) {
			return fmt.Errorf("%s: expected a value of type %s, got nothing", describePath(path), arg)
		}
		names, err := typeNames(arg)
		if err != nil {
			return fmt.Errorf("%s: %v", describePath(path), err)
		}
		for _, n := range names {
			ok, err := hasTypeName(actual.Type, n)
			if err != nil {
				return fmt.Errorf("%s: %v", describePath(path), err)
			}
			if ok {
				return nil
			}
		}
		return fmt.Errorf("%s: expected type %s, got %s", describePath(path), arg, show(actual))
	case "$$unsetOrMatches":
		if isMissing(actual) {
			return nil
		}
		return m.match(path, arg, actual, root)
	case "$$matchesEntity":
		name, ok := arg.StringValueOK()
		if !ok {
			return fmt.Errorf("%s: $$matchesEntity needs a string", describePath(path))
		}
		if m.entities == nil {
			return fmt.Errorf("%s: no entity map for $$matchesEntity", describePath(path))
		}
		v, err := m.entities.bsonEntity(name)
		if err != nil {
			return fmt.Errorf("%s: %v", describePath(path), err)
		}
		return m.match(path, v, actual, root)
	case "$$sessionLsid":
		name, ok := arg.StringValueOK()
		if !ok || m.entities == nil {
			return fmt.Errorf("%s: bad $$sessionLsid %s", describePath(path), arg)
		}
		lsid, err := m.entities.sessionLsid(name)
		if err != nil {
			return fmt.Errorf("%s: %v", describePath(path), err)
		}
		if actual.Type != bson.TypeEmbeddedDocument || !bytes.Equal(actual.Document(), lsid) {
			return fmt.Errorf("%s: expected lsid of %s %s, got %s", describePath(path), name, lsid, show(actual))
		}
		return nil
	case "$$lte":
		if !isNumber(arg) {
			return fmt.Errorf("%s: $$lte needs a number, got %s", describePath(path), arg)
		}
		if !isNumber(actual) {
			return fmt.Errorf("%s: expected a number <= %s, got %s", describePath(path), arg, show(actual))
		}
		if compareNumbers(actual, arg) > 0 {
			return fmt.Errorf("%s: expected a number <= %s, got %s", describePath(path), arg, actual)
		}
		return nil
	case "$$matchAsDocument":
		s, ok := actual.StringValueOK()
		if !ok {
			return fmt.Errorf("%s: $$matchAsDocument needs a string actual value, got %s", describePath(path), show(actual))
		}
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(s), false, &doc); err != nil {
			return fmt.Errorf("%s: actual value is not an Extended JSON document: %v", describePath(path), err)
		}
		return m.match(path, arg, docValue(doc), false)
	case "$$matchAsRoot":
		return m.match(path, arg, actual, true)
	case "$$matchesHexBytes":
		hs, ok := arg.StringValueOK()
		if !ok {
			return fmt.Errorf("%s: $$matchesHexBytes needs a string", describePath(path))
		}
		want, err := hex.DecodeString(hs)
		if err != nil {
			return fmt.Errorf("%s: bad hex in $$matchesHexBytes: %v", describePath(path), err)
		}
		var got []byte
		switch actual.Type {
		case bson.TypeBinary:
			_, got = actual.Binary()
		case bson.TypeString:
			got = []byte(actual.StringValue())
		default:
			return fmt.Errorf("%s: $$matchesHexBytes needs binary data, got %s", describePath(path), show(actual))
		}
		if !bytes.Equal(want, got) {
			return fmt.Errorf("%s: expected bytes %x, got %x", describePath(path), want, got)
		}
		return nil
	}
	return fmt.Errorf("%s: unsupported special operator %s", describePath(path), op)
}

func typeNames(arg bson.RawValue) ([]string, error) {
	if s, ok := arg.StringValueOK(); ok {
		return []string{s}, nil
	}
	if arr, ok := arg.ArrayOK(); ok {
		vals, err := arr.Values()
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(vals))
		for _, v := range vals {
			s, ok := v.StringValueOK()
			if !ok {
				return nil, fmt.Errorf("$$type array holds a non-string %s", v)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("$$type needs a string or an array of strings, got %s", arg)
}

var bsonTypeNames = map[string]bson.Type{
	"double":              bson.TypeDouble,
	"string":              bson.TypeString,
	"object":              bson.TypeEmbeddedDocument,
	"array":               bson.TypeArray,
	"binData":             bson.TypeBinary,
	"undefined":           bson.TypeUndefined,
	"objectId":            bson.TypeObjectID,
	"bool":                bson.TypeBoolean,
	"date":                bson.TypeDateTime,
	"null":                bson.TypeNull,
	"regex":               bson.TypeRegex,
	"dbPointer":           bson.TypeDBPointer,
	"javascript":          bson.TypeJavaScript,
	"symbol":              bson.TypeSymbol,
	"javascriptWithScope": bson.TypeCodeWithScope,
	"int":                 bson.TypeInt32,
	"timestamp":           bson.TypeTimestamp,
	"long":                bson.TypeInt64,
	"decimal":             bson.TypeDecimal128,
	"minKey":              bson.TypeMinKey,
	"maxKey":              bson.TypeMaxKey,
}

func hasTypeName(t bson.Type, name string) (bool, error) {
	if name == "number" {
		return t == bson.TypeInt32 || t == bson.TypeInt64 || t == bson.TypeDouble || t == bson.TypeDecimal128, nil
	}
	want, ok := bsonTypeNames[name]
	if !ok {
		return false, fmt.Errorf("unknown $$type name %q", name)
	}
	return t == want, nil
}

func isNumber(v bson.RawValue) bool {
	return v.Type == bson.TypeInt32 || v.Type == bson.TypeInt64 || v.Type == bson.TypeDouble
}

// compareNumbers compares two int32/int64/double values by value: -1, 0, 1.
// NaN equals NaN and sorts below every other number, as in MongoDB.
func compareNumbers(a, b bson.RawValue) int {
	if a.Type != bson.TypeDouble && b.Type != bson.TypeDouble {
		x, y := a.AsInt64(), b.AsInt64()
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	if a.Type == bson.TypeDouble && b.Type == bson.TypeDouble {
		return compareFloats(a.Double(), b.Double())
	}
	// One double, one integer: compare without losing int64 precision.
	if a.Type == bson.TypeDouble {
		return compareFloatInt(a.Double(), b.AsInt64())
	}
	return -compareFloatInt(b.Double(), a.AsInt64())
}

func compareFloats(x, y float64) int {
	switch {
	case math.IsNaN(x) && math.IsNaN(y):
		return 0
	case math.IsNaN(x):
		return -1
	case math.IsNaN(y):
		return 1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func compareFloatInt(f float64, i int64) int {
	if math.IsNaN(f) {
		return -1
	}
	// Every int64 lies in [-2^63, 2^63).
	if f >= 9223372036854775808.0 {
		return 1
	}
	if f < -9223372036854775808.0 {
		return -1
	}
	t := math.Trunc(f)
	ti := int64(t)
	switch {
	case ti < i:
		return -1
	case ti > i:
		return 1
	case f > t:
		return 1
	case f < t:
		return -1
	}
	return 0
}

// scalarsEqual compares two non-document, non-array values: numbers by value
// across int32, int64 and double, everything else by type and bytes.
func scalarsEqual(expected, actual bson.RawValue) bool {
	if isNumber(expected) && isNumber(actual) {
		return compareNumbers(expected, actual) == 0
	}
	return expected.Type == actual.Type && bytes.Equal(expected.Value, actual.Value)
}

func docValue(d bson.Raw) bson.RawValue {
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
}

func arrayValue(docs []bson.Raw) bson.RawValue {
	arr := bson.A{}
	for _, d := range docs {
		arr = append(arr, d)
	}
	t, data, err := bson.MarshalValue(arr)
	if err != nil {
		panic(err) // marshalling raw documents cannot fail
	}
	return bson.RawValue{Type: t, Value: data}
}

// exactEqual compares collection contents: documents must have the same
// fields (in any order) and the same values, numbers compared by value.
func exactEqual(expected, actual bson.Raw) error {
	return matcher{}.match("", docValue(expected), docValue(actual), false)
}

// numericTypeDiff reports the first place where two documents that match
// with flexible numerics hold numbers of different BSON types ("" if none).
// MongoDB preserves numeric types through most updates, so a difference in
// collection contents usually means the server changed a type.
func numericTypeDiff(path string, expected, actual bson.RawValue) string {
	switch expected.Type {
	case bson.TypeEmbeddedDocument:
		if actual.Type != bson.TypeEmbeddedDocument {
			return ""
		}
		elems, _ := expected.Document().Elements()
		for _, e := range elems {
			av, err := actual.Document().LookupErr(e.Key())
			if err != nil {
				continue
			}
			if d := numericTypeDiff(joinPath(path, e.Key()), e.Value(), av); d != "" {
				return d
			}
		}
	case bson.TypeArray:
		if actual.Type != bson.TypeArray {
			return ""
		}
		ev, _ := expected.Array().Values()
		av, _ := actual.Array().Values()
		for i := range min(len(ev), len(av)) {
			if d := numericTypeDiff(joinPath(path, strconv.Itoa(i)), ev[i], av[i]); d != "" {
				return d
			}
		}
	default:
		if isNumber(expected) && isNumber(actual) && expected.Type != actual.Type {
			return fmt.Sprintf("%s: expected %s %s, found %s %s", path, expected.Type, expected, actual.Type, actual)
		}
	}
	return ""
}
