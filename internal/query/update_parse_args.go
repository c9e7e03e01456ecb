package query

// The arguments of the update operators that take more than a value:
// $currentDate, $rename, $push (with $each, $slice, $sort, $position),
// $addToSet, $pull and $bit (update_parse.go dispatches to them).

import (
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func parseCurrentDate(f bson.Element) (leafOp, error) {
	v := f.Value
	switch v.Type {
	case bson.TypeBoolean:
		return currentDateOp{}, nil
	case bson.TypeDocument:
		var op leafOp
		it := bson.Doc(v.Data).Iter()
		for it.Next() {
			e := it.Element()
			if e.Key != "$type" {
				return nil, badValue("Unrecognized $currentDate option: %s", e.Key)
			}
			if e.Value.Type == bson.TypeString {
				switch e.Value.StringValue() {
				case "date":
					op = currentDateOp{}
				case "timestamp":
					op = currentDateOp{timestamp: true}
				}
			}
		}
		if op == nil {
			return nil, badValue("The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
		}
		return op, nil
	}
	return nil, badValue("%s is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).", typeNameForMessage(v.Type))
}

func (u *Update) parseRename(f bson.Element, from []string) error {
	v := f.Value
	if v.Type != bson.TypeString {
		return badValue("The 'to' field for $rename must be a string: %s", elemString(f))
	}
	to := v.StringValue()
	for _, c := range from {
		if isDynamicComponent(c) {
			return badValue("The source field for $rename may not be dynamic: %s", f.Key)
		}
	}
	if to == f.Key {
		return badValue("The source and target field for $rename must differ: %s", elemString(f))
	}
	if strings.HasPrefix(to, f.Key+".") || strings.HasPrefix(f.Key, to+".") {
		return badValue("The source and target field for $rename must not be on the same path: %s", elemString(f))
	}
	toParts, err := u.validateUpdatePath(to)
	if err != nil {
		return err
	}
	for _, c := range toParts {
		if isDynamicComponent(c) {
			return badValue("The destination field for $rename may not be dynamic: %s", to)
		}
	}
	if err := u.insert(f.Key, from, renameSrcOp{}); err != nil {
		return err
	}
	return u.insert(to, toParts, &renameDstOp{from: from, to: toParts})
}

func integral(v bson.Value) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble, bson.TypeDecimal128:
		f, _ := v.AsFloat64()
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

func (u *Update) parsePush(f bson.Element) (leafOp, error) {
	v := f.Value
	p := &pushOp{}
	if v.Type == bson.TypeDocument {
		d := bson.Doc(v.Data)
		if each, ok := d.Lookup("$each"); ok {
			if each.Type != bson.TypeArray {
				return nil, badValue("The argument to $each in $push must be an array but it was of type: %s", typeNameForMessage(each.Type))
			}
			p.each = bson.Doc(each.Data).Values()
			it := d.Iter()
			for it.Next() {
				m := it.Element()
				switch m.Key {
				case "$each":
				case "$slice":
					n, ok := integral(m.Value)
					if !m.Value.IsNumber() {
						return nil, badValue("The value for $slice must be a numeric value but was given type: %s", typeNameForMessage(m.Value.Type))
					}
					if !ok {
						return nil, badValue("The value for $slice must be an integer value but was given type: %s", typeNameForMessage(m.Value.Type))
					}
					p.slice, p.hasSlice = n, true
				case "$position":
					n, ok := integral(m.Value)
					if !m.Value.IsNumber() || !ok {
						return nil, badValue("The value for $position must be an integer value, not of type: %s", typeNameForMessage(m.Value.Type))
					}
					p.position, p.hasPosition = n, true
				case "$sort":
					s, err := u.parsePushSort(m.Value)
					if err != nil {
						return nil, err
					}
					p.sort = s
				default:
					return nil, mongoerr.New(mongoerr.FailedToParse, "Unrecognized clause in $push: %s", m.Key)
				}
			}
			return p, nil
		}
	}
	p.each = []bson.Value{v}
	return p, nil
}

func (u *Update) parsePushSort(v bson.Value) (*pushSort, error) {
	if v.IsNumber() {
		n, _ := v.AsFloat64()
		if n != 1 && n != -1 {
			return nil, badValue("The $sort element value must be either 1 or -1")
		}
		return &pushSort{whole: true, desc: n < 0, coll: u.coll}, nil
	}
	if v.Type != bson.TypeDocument {
		return nil, badValue("The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields")
	}
	d := bson.Doc(v.Data)
	if d.Len() == 0 {
		return nil, badValue("The $sort pattern is empty when it should be a set of fields.")
	}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "" || strings.HasPrefix(e.Key, ".") || strings.HasSuffix(e.Key, ".") || strings.Contains(e.Key, "..") {
			return nil, badValue("The $sort field is a dotted field but has an empty part: %s", e.Key)
		}
		if _, ok := sortDirection(e.Value); !ok || !e.Value.IsNumber() {
			return nil, badValue("The $sort element value must be either 1 or -1")
		}
	}
	s, err := ParseSort(d, u.opts)
	if err != nil {
		return nil, err
	}
	return &pushSort{pattern: s}, nil
}

func (u *Update) parseAddToSet(f bson.Element) (leafOp, error) {
	v := f.Value
	a := &addToSetOp{coll: u.coll}
	if v.Type == bson.TypeDocument && firstKey(bson.Doc(v.Data)) == "$each" {
		d := bson.Doc(v.Data)
		if d.Len() > 1 {
			return nil, badValue("Found unexpected fields after $each in $addToSet: %s", d.String())
		}
		each, _ := d.Lookup("$each")
		if each.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "The argument to $each in $addToSet must be an array but it was of type %s", typeNameForMessage(each.Type))
		}
		a.each = bson.Doc(each.Data).Values()
		return a, nil
	}
	a.each = []bson.Value{v}
	return a, nil
}

func (u *Update) parsePull(v bson.Value) (leafOp, error) {
	p := &pullOp{coll: u.coll}
	fp := &filterParser{coll: u.coll, opts: u.opts}
	switch {
	case v.Type == bson.TypeDocument && isExpressionDoc(v, false) && !pathlessOperators[firstKey(bson.Doc(v.Data))]:
		ps, err := fp.parseSub("", bson.Doc(v.Data), levelSub)
		if err != nil {
			return nil, err
		}
		p.preds = ps
		p.mode = pullValue
	case v.Type == bson.TypeDocument:
		n, err := fp.parse(bson.Doc(v.Data), levelSub)
		if err != nil {
			return nil, err
		}
		p.object = n
		p.mode = pullObject
	case v.Type == bson.TypeRegex:
		m, err := newRegexMatcher(v.Regex())
		if err != nil {
			return nil, err
		}
		p.preds = []pred{&leafPred{m: m}}
		p.mode = pullValue
	default:
		p.eq = v
		p.mode = pullEqual
	}
	return p, nil
}

func parseBit(f bson.Element) (leafOp, error) {
	v := f.Value
	if v.Type != bson.TypeDocument {
		return nil, badValue("The $bit modifier is not compatible with a %s. You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}.", typeNameForMessage(v.Type))
	}
	op := &bitOp{}
	it := bson.Doc(v.Data).Iter()
	for it.Next() {
		e := it.Element()
		var kind byte
		switch e.Key {
		case "and":
			kind = '&'
		case "or":
			kind = '|'
		case "xor":
			kind = '^'
		default:
			return nil, badValue("The $bit modifier only supports 'and', 'or', and 'xor', not '%s' which is an unknown operator: {%s}", e.Key, elemString(e))
		}
		if e.Value.Type != bson.TypeInt32 && e.Value.Type != bson.TypeInt64 {
			return nil, badValue("The $bit modifier field must be an Integer(32/64 bit); a '%s' is not supported here: {%s}", typeNameForMessage(e.Value.Type), elemString(e))
		}
		op.ops = append(op.ops, bitStep{kind: kind, v: e.Value})
	}
	if len(op.ops) == 0 {
		return nil, badValue("You must pass in at least one bitwise operation. The format is: {$bit: {field: {and/or/xor: #}}")
	}
	return op, nil
}
