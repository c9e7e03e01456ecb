package bson

// setPath appends to b the elements of d with path set to v (creating
// documents along the way, replacing non-documents; a zero v removes
// the field).
func setPath(b *Builder, d Doc, path []string, v Value) {
	done := false
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != path[0] {
			b.AppendElement(e)
			continue
		}
		if done {
			continue
		}
		done = true
		if len(path) == 1 {
			if v.Type != 0 {
				b.AppendValue(e.Key, v)
			}
			continue
		}
		b.StartDocument(e.Key)
		sub := EmptyDoc
		if e.Value.Type == TypeDocument {
			sub = e.Value.Document()
		}
		setPath(b, sub, path[1:], v)
		b.End()
	}
	if !done && v.Type != 0 {
		if len(path) == 1 {
			b.AppendValue(path[0], v)
			return
		}
		b.StartDocument(path[0])
		setPath(b, EmptyDoc, path[1:], v)
		b.End()
	}
}

// WithPath returns a copy of d with the dotted path (split into its
// components) set to v, creating embedded documents along the way and
// replacing values that are not documents; a zero v removes the field.
func WithPath(d Doc, path []string, v Value) Doc {
	var b Builder
	setPath(&b, d, path, v)
	return b.Finish()
}
