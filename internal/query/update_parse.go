package query

import (
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Update is a compiled update: operators, a replacement document, or (with
// an expression evaluator) a pipeline. It is safe for concurrent use.
type Update struct {
	replacement   bson.Doc
	isReplacement bool
	pipeline      *updatePipeline
	root          *updNode
	spec          bson.Value
	coll          bson.StringComparer
	opts          *Options
	arrayFilters  map[string]*Filter
	hasPositional bool
	filterOrder   []string
	used          map[string]bool
	// idPath is the first update path that touches _id, for the message
	// of an immutable field error.
	idPath string
	// topDollar lists the top-level $-prefixed fields the operators
	// write ($set: {$a: 1}, $rename to $a): MongoDB 5.0+ stores nested
	// $-prefixed fields but refuses to write a top-level one except when
	// an upsert inserts.
	topDollar []string
}

// updNode is a node of the update tree: one path component. Leaves carry
// the operator; interior nodes hold children sorted in MongoDB's order
// (numeric components numerically, others bytewise), which is also the
// order new fields are appended in.
type updNode struct {
	name     string
	children []*updNode
	byName   map[string]*updNode
	op       leafOp
	// dynamic children, resolved per array element: "$", "$[]", "$[id]".
	positional bool
	allElems   bool
	filterID   string
	// arrayNode marks an interior node whose children are $[] / $[id]
	// (MongoDB's UpdateArrayNode); other children cannot join it.
	arrayNode bool
}

func isArrayIdentifier(c string) bool {
	return strings.HasPrefix(c, "$[") && strings.HasSuffix(c, "]")
}

func (n *updNode) child(name string) *updNode {
	if n.byName == nil {
		return nil
	}
	return n.byName[name]
}

// IsReplacement reports whether the update replaces whole documents.
func (u *Update) IsReplacement() bool { return u.isReplacement }

// IsPipeline reports whether the update is an aggregation pipeline.
func (u *Update) IsPipeline() bool { return u.pipeline != nil }

// ParseUpdate compiles an update: a document of update operators, a
// replacement document, or an array (a pipeline). arrayFilters bind the
// $[<identifier>] placeholders.
func ParseUpdate(spec bson.Value, arrayFilters []bson.Doc, opts *Options) (*Update, error) {
	u := &Update{spec: spec, coll: opts.comparer(), opts: opts, root: &updNode{}}
	switch spec.Type {
	case bson.TypeArray:
		if len(arrayFilters) > 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "arrayFilters may not be specified for pipeline-style updates")
		}
		p, err := parseUpdatePipeline(bson.Doc(spec.Data), opts)
		if err != nil {
			return nil, err
		}
		u.pipeline = p
		return u, nil
	case bson.TypeDocument:
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
	}
	doc := bson.Doc(spec.Data)
	if err := u.parseArrayFilters(arrayFilters); err != nil {
		return nil, err
	}
	first := firstKey(doc)
	if !strings.HasPrefix(first, "$") {
		if err := validateReplacement(doc); err != nil {
			return nil, err
		}
		u.isReplacement, u.replacement = true, doc
		return u, u.checkFiltersUsed()
	}
	it := doc.Iter()
	for it.Next() {
		e := it.Element()
		if err := u.parseOperator(e); err != nil {
			return nil, err
		}
	}
	sortTree(u.root)
	return u, u.checkFiltersUsed()
}

// validateReplacement rejects $-prefixed top-level fields in a replacement.
func validateReplacement(doc bson.Doc) error {
	it := doc.Iter()
	for it.Next() {
		k := it.Element().Key
		if strings.HasPrefix(k, "$") {
			return mongoerr.New(mongoerr.DollarPrefixedFieldName, "The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.", k, k)
		}
	}
	return nil
}

func (u *Update) parseOperator(e bson.Element) error {
	op := e.Key
	if !isUpdateOperator(op) {
		return mongoerr.New(mongoerr.FailedToParse, "Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", op)
	}
	if e.Value.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.FailedToParse, "Modifiers operate on fields but we found type %s instead. For example: {$mod: {<field>: ...}} not {%s}", typeNameForMessage(e.Value.Type), elemString(e))
	}
	it := bson.Doc(e.Value.Data).Iter()
	for it.Next() {
		f := it.Element()
		if err := u.parseField(op, f); err != nil {
			return err
		}
	}
	return nil
}

func isUpdateOperator(op string) bool {
	switch op {
	case "$set", "$unset", "$inc", "$mul", "$min", "$max", "$rename", "$setOnInsert", "$currentDate",
		"$push", "$addToSet", "$pop", "$pull", "$pullAll", "$bit":
		return true
	}
	return false
}

// typeNameForMessage spells types as MongoDB's typeName() does in update
// messages.
func typeNameForMessage(t bson.Type) string {
	switch t {
	case bson.TypeDouble:
		return "double"
	case bson.TypeString:
		return "string"
	case bson.TypeDocument:
		return "object"
	case bson.TypeArray:
		return "array"
	case bson.TypeBoolean:
		return "bool"
	case bson.TypeNull:
		return "null"
	case bson.TypeInt32:
		return "int"
	case bson.TypeInt64:
		return "long"
	case bson.TypeDecimal128:
		return "decimal"
	case bson.TypeDateTime:
		return "date"
	}
	return t.String()
}

// validateUpdatePath checks a path of an update operator and reports
// whether it holds a positional component.
func (u *Update) validateUpdatePath(path string) ([]string, error) {
	if path == "" {
		return nil, mongoerr.New(mongoerr.EmptyFieldName, "An empty update path is not valid.")
	}
	parts := splitPath(path)
	positional := 0
	for i, c := range parts {
		if c == "" {
			return nil, mongoerr.New(mongoerr.EmptyFieldName, "The update path '%s' contains an empty field name, which is not allowed.", path)
		}
		if !strings.HasPrefix(c, "$") {
			continue
		}
		switch {
		case c == "$":
			if i == 0 {
				return nil, badValue("Cannot have positional (i.e. '$') element in the first position in path '%s'", path)
			}
			positional++
			if positional > 1 {
				return nil, badValue("Too many positional (i.e. '$') elements found in path '%s'", path)
			}
			u.hasPositional = true
		case c == "$[]":
			if i == 0 {
				return nil, badValue("Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '%s'", path)
			}
		case strings.HasPrefix(c, "$[") && strings.HasSuffix(c, "]"):
			if i == 0 {
				return nil, badValue("Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '%s'", path)
			}
			id := c[2 : len(c)-1]
			if _, ok := u.arrayFilters[id]; !ok {
				return nil, badValue("No array filter found for identifier '%s' in path '%s'", id, path)
			}
			u.usedFilters()[id] = true
		case i == 0:
			// A top-level $-prefixed field may be written only by an
			// upsert's insert (checked when the update is applied, as
			// mongod's storage validation checks the fields it changed).
			u.topDollar = append(u.topDollar, c)
		}
	}
	return parts, nil
}

// isDynamicComponent reports whether a path component is positional
// ("$") or an array filter ("$[]", "$[id]"), not a field name.
func isDynamicComponent(c string) bool {
	return c == "$" || strings.HasPrefix(c, "$[") && strings.HasSuffix(c, "]")
}

func (u *Update) usedFilters() map[string]bool {
	if u.used == nil {
		u.used = map[string]bool{}
	}
	return u.used
}

// insert adds a leaf for path, reporting conflicts (code 40) with paths
// already in the tree.
func (u *Update) insert(path string, parts []string, op leafOp) error {
	cur := u.root
	for i, c := range parts {
		last := i == len(parts)-1
		existing := cur.child(c)
		if existing != nil {
			if last || existing.op != nil || existing.arrayNode != isArrayIdentifier(parts[i+1]) {
				return mongoerr.New(mongoerr.ConflictingUpdateOperators, "Updating the path '%s' would create a conflict at '%s'", path, strings.Join(parts[:i+1], "."))
			}
			cur = existing
			continue
		}
		n := &updNode{name: c}
		if !last {
			n.arrayNode = isArrayIdentifier(parts[i+1])
		}
		switch {
		case c == "$":
			n.positional = true
		case c == "$[]":
			n.allElems = true
		case strings.HasPrefix(c, "$[") && strings.HasSuffix(c, "]"):
			n.filterID = c[2 : len(c)-1]
		}
		if last {
			n.op = op
		}
		if cur.byName == nil {
			cur.byName = map[string]*updNode{}
		}
		cur.byName[c] = n
		cur.children = append(cur.children, n)
		cur = n
	}
	if parts[0] == "_id" && u.idPath == "" {
		u.idPath = path
	}
	return nil
}

// sortTree orders every node's children as MongoDB applies them.
func sortTree(n *updNode) {
	sort.SliceStable(n.children, func(i, j int) bool {
		return comparePathComponents(n.children[i].name, n.children[j].name) < 0
	})
	for _, c := range n.children {
		sortTree(c)
	}
}

// comparePathComponents orders field names numerically when both are
// numbers, bytewise otherwise.
func comparePathComponents(a, b string) int {
	if isAllDigits(a) && isAllDigits(b) {
		ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(ta) != len(tb) {
			if len(ta) < len(tb) {
				return -1
			}
			return 1
		}
		if c := strings.Compare(ta, tb); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

func (u *Update) parseField(op string, f bson.Element) error {
	parts, err := u.validateUpdatePath(f.Key)
	if err != nil {
		return err
	}
	v := f.Value
	var lop leafOp
	switch op {
	case "$set":
		lop = &setOp{v: v}
	case "$setOnInsert":
		lop = &setOp{v: v, onInsert: true}
	case "$unset":
		lop = unsetOp{}
	case "$inc", "$mul":
		if !v.IsNumber() {
			verb := "increment"
			if op == "$mul" {
				verb = "multiply"
			}
			return mongoerr.New(mongoerr.TypeMismatch, "Cannot %s with non-numeric argument: {%s}", verb, elemString(f))
		}
		lop = &arithOp{v: v, mul: op == "$mul"}
	case "$min", "$max":
		lop = &minMaxOp{v: v, max: op == "$max", coll: u.coll}
	case "$currentDate":
		c, err := parseCurrentDate(f)
		if err != nil {
			return err
		}
		lop = c
	case "$rename":
		return u.parseRename(f, parts)
	case "$push":
		p, err := u.parsePush(f)
		if err != nil {
			return err
		}
		lop = p
	case "$addToSet":
		a, err := u.parseAddToSet(f)
		if err != nil {
			return err
		}
		lop = a
	case "$pop":
		if !v.IsNumber() {
			return mongoerr.New(mongoerr.FailedToParse, "Expected a number in: %s", elemString(f))
		}
		n, _ := v.AsFloat64()
		if n != 1 && n != -1 {
			return badValue("$pop expects 1 or -1, found: %s", v.String())
		}
		lop = popOp{first: n < 0}
	case "$pull":
		p, err := u.parsePull(v)
		if err != nil {
			return err
		}
		lop = p
	case "$pullAll":
		if v.Type != bson.TypeArray {
			return badValue("$pullAll requires an array argument but was given a %s", typeNameForMessage(v.Type))
		}
		lop = &pullAllOp{vals: bson.Doc(v.Data).Values(), coll: u.coll}
	case "$bit":
		b, err := parseBit(f)
		if err != nil {
			return err
		}
		lop = b
	}
	return u.insert(f.Key, parts, lop)
}

// ---- array filters ----

func (u *Update) parseArrayFilters(filters []bson.Doc) error {
	for _, fd := range filters {
		ids := map[string]bool{}
		var order []string
		if err := collectFilterIDs(fd, ids, &order); err != nil {
			return err
		}
		if len(order) == 0 {
			return mongoerr.New(mongoerr.FailedToParse, "Cannot use an expression without a top-level field name in arrayFilters")
		}
		if len(order) > 1 {
			return mongoerr.New(mongoerr.FailedToParse, "Error parsing array filter :: caused by :: Expected a single top-level field name, found '%s' and '%s'", order[0], order[1])
		}
		id := order[0]
		if !validFilterID(id) {
			return mongoerr.New(mongoerr.FailedToParse, "Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '%s'", id)
		}
		if _, dup := u.arrayFilters[id]; dup {
			return mongoerr.New(mongoerr.FailedToParse, "Found multiple array filters with the same top-level field name %s", id)
		}
		f, err := ParseFilter(fd, u.opts)
		if err != nil {
			return err
		}
		if u.arrayFilters == nil {
			u.arrayFilters = map[string]*Filter{}
		}
		u.arrayFilters[id] = f
		u.filterOrder = append(u.filterOrder, id)
	}
	return nil
}

func collectFilterIDs(d bson.Doc, ids map[string]bool, order *[]string) error {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "$and", "$or", "$nor":
			if e.Value.Type == bson.TypeArray {
				sub := bson.Doc(e.Value.Data).Iter()
				for sub.Next() {
					if x := sub.Element().Value; x.Type == bson.TypeDocument {
						if err := collectFilterIDs(bson.Doc(x.Data), ids, order); err != nil {
							return err
						}
					}
				}
			}
			continue
		case "$comment":
			continue
		}
		if strings.HasPrefix(e.Key, "$") {
			continue
		}
		id := strings.SplitN(e.Key, ".", 2)[0]
		if !ids[id] {
			ids[id] = true
			*order = append(*order, id)
		}
	}
	return nil
}

func validFilterID(id string) bool {
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (u *Update) checkFiltersUsed() error {
	for _, id := range u.filterOrder {
		if !u.used[id] {
			return mongoerr.New(mongoerr.FailedToParse, "The array filter for identifier '%s' was not used in the update %s", id, u.spec.String())
		}
	}
	return nil
}
