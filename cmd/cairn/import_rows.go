package main

import (
	"fmt"
	"strconv"

	"github.com/cairndb/cairn/bson"
)

// rowLayout turns the text fields of a CSV/TSV row into a document: the
// columns' dotted names become nested documents, in first-appearance order.
type rowLayout struct {
	cols        []column
	root        []layoutNode
	grace       parseGrace
	ignoreBlank bool
	nested      bool
}

// layoutNode is a column (col >= 0) or an embedded document (children).
type layoutNode struct {
	key      string
	col      int
	children []layoutNode
}

func newRowLayout(cols []column, grace parseGrace, ignoreBlanks bool) *rowLayout {
	l := &rowLayout{cols: cols, grace: grace, ignoreBlank: ignoreBlanks}
	for i, c := range cols {
		if len(c.path) > 1 {
			l.nested = true
		}
		l.root = insertPath(l.root, c.path, i)
	}
	return l
}

func insertPath(nodes []layoutNode, path []string, col int) []layoutNode {
	if len(path) == 1 {
		return append(nodes, layoutNode{key: path[0], col: col})
	}
	for i := range nodes {
		if nodes[i].key == path[0] && nodes[i].col < 0 {
			nodes[i].children = insertPath(nodes[i].children, path[1:], col)
			return nodes
		}
	}
	return append(nodes, layoutNode{key: path[0], col: -1, children: insertPath(nil, path[1:], col)})
}

// build appends the row's document to b (which must be Reset). Fields past
// the last column are named field<N>, as mongoimport names them.
func (l *rowLayout) build(b *bson.Builder, fields []string) error {
	if err := l.nodes(b, l.root, fields); err != nil {
		return err
	}
	for i := len(l.cols); i < len(fields); i++ {
		if l.ignoreBlank && fields[i] == "" {
			continue
		}
		_ = parseAuto(b, "field"+strconv.Itoa(i), fields[i])
	}
	return nil
}

func (l *rowLayout) nodes(b *bson.Builder, nodes []layoutNode, fields []string) error {
	for i := range nodes {
		n := &nodes[i]
		if n.col < 0 {
			b.StartDocument(n.key)
			if err := l.nodes(b, n.children, fields); err != nil {
				return err
			}
			b.End()
			continue
		}
		if n.col >= len(fields) {
			continue
		}
		s := fields[n.col]
		if l.ignoreBlank && s == "" {
			continue
		}
		c := &l.cols[n.col]
		if err := c.parse(b, n.key, s); err != nil {
			switch l.grace {
			case graceAutoCast:
				_ = parseAuto(b, n.key, s)
			case graceSkipField:
			case graceSkipRow:
				return errSkipRow
			default:
				return fmt.Errorf("field %s: cannot parse %q as %s: %w", c.name, s, c.typ, err)
			}
		}
	}
	return nil
}
