package exec

import (
	"strconv"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// RequestShape describes a command body by its field names and value
// types, never its values: what a panic's log line may show without
// leaking data (as MongoDB logs a query's shape).
func RequestShape(d bson.Doc) string {
	var sb strings.Builder
	appendShape(&sb, d, false, 0)
	return sb.String()
}

func appendShape(sb *strings.Builder, d bson.Doc, array bool, depth int) {
	if depth > 8 {
		sb.WriteString("...")
		return
	}
	if array {
		n := 0
		var first bson.Value
		it := d.Iter()
		for it.Next() {
			if n == 0 {
				first = it.Element().Value
			}
			n++
		}
		sb.WriteString("[")
		if n > 0 {
			sb.WriteString(" ")
			appendValueShape(sb, first, depth)
			if n > 1 {
				sb.WriteString(" x" + strconv.Itoa(n))
			}
			sb.WriteString(" ")
		}
		sb.WriteString("]")
		return
	}
	sb.WriteString("{")
	it := d.Iter()
	for i := 0; it.Next(); i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(" ")
		sb.WriteString(it.Element().Key)
		sb.WriteString(": ")
		appendValueShape(sb, it.Element().Value, depth)
	}
	sb.WriteString(" }")
}

func appendValueShape(sb *strings.Builder, v bson.Value, depth int) {
	switch v.Type {
	case bson.TypeDocument:
		appendShape(sb, v.Document(), false, depth+1)
	case bson.TypeArray:
		appendShape(sb, v.Document(), true, depth+1)
	default:
		sb.WriteString(v.Type.String())
	}
}
