package oplog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// ApplyDiff applies a doc_diff to pre as mongod's $v: 2 applier does
// (doc_diff_applier.cpp): fields in order, deletes dropped, updates in
// place, sub-diffs applied to objects and arrays, inserted fields (moved
// when present) appended at the end. (What a secondary applying the
// oplog will need; the tests replay the oplog with it.)
func ApplyDiff(pre, diff bson.Doc) (bson.Doc, error) {
	var b bson.Builder
	if err := applyDoc(&b, pre, diff); err != nil {
		return nil, err
	}
	return b.Finish(), nil
}

func applyDoc(b *bson.Builder, pre, diff bson.Doc) error {
	del := map[string]bool{}
	upd := map[string]bson.Value{}
	ins := map[string]bool{}
	var inserts []bson.Element
	subs := map[string]bson.Doc{}
	it := diff.Iter()
	for it.Next() {
		e := it.Element()
		switch {
		case e.Key == "d" || e.Key == "u" || e.Key == "i":
			sit := e.Value.Document().Iter()
			for sit.Next() {
				f := sit.Element()
				switch e.Key {
				case "d":
					del[f.Key] = true
				case "u":
					upd[f.Key] = f.Value
				case "i":
					ins[f.Key] = true
					inserts = append(inserts, f)
				}
			}
		case strings.HasPrefix(e.Key, "s"):
			subs[e.Key[1:]] = e.Value.Document()
		default:
			return fmt.Errorf("oplog: bad diff section %q", e.Key)
		}
	}
	pit := pre.Iter()
	for pit.Next() {
		e := pit.Element()
		switch {
		case ins[e.Key], del[e.Key]:
		case upd[e.Key].Type != 0:
			b.AppendValue(e.Key, upd[e.Key])
		case subs[e.Key] != nil:
			if err := applySub(b, e.Key, e.Value, subs[e.Key]); err != nil {
				return err
			}
		default:
			b.AppendElement(e)
		}
	}
	for _, e := range inserts {
		b.AppendElement(e)
	}
	return nil
}

func applySub(b *bson.Builder, key string, v bson.Value, sub bson.Doc) error {
	if a, _ := sub.Lookup("a"); a.Type == bson.TypeBoolean {
		if v.Type != bson.TypeArray {
			return fmt.Errorf("oplog: array diff on a %s", v.Type)
		}
		vals := v.Document().Values()
		subs := map[int]bson.Doc{}
		it := sub.Iter()
		for it.Next() {
			e := it.Element()
			switch {
			case e.Key == "a":
			case e.Key == "l":
				n := int(e.Value.Int32())
				for len(vals) < n {
					vals = append(vals, bson.Value{Type: bson.TypeNull})
				}
				vals = vals[:n]
			case e.Key[0] == 'u' || e.Key[0] == 's':
				i, err := strconv.Atoi(e.Key[1:])
				if err != nil {
					return fmt.Errorf("oplog: bad array diff key %q", e.Key)
				}
				for len(vals) <= i {
					vals = append(vals, bson.Value{Type: bson.TypeNull})
				}
				if e.Key[0] == 'u' {
					vals[i] = e.Value
				} else {
					subs[i] = e.Value.Document()
				}
			default:
				return fmt.Errorf("oplog: bad array diff key %q", e.Key)
			}
		}
		b.StartArray(key)
		for i, x := range vals {
			if s, ok := subs[i]; ok {
				if err := applySub(b, bson.Index(i), x, s); err != nil {
					return err
				}
			} else {
				b.AppendValue(bson.Index(i), x)
			}
		}
		b.End()
		return nil
	}
	if v.Type != bson.TypeDocument {
		return fmt.Errorf("oplog: object diff on a %s", v.Type)
	}
	b.StartDocument(key)
	if err := applyDoc(b, v.Document(), sub); err != nil {
		return err
	}
	b.End()
	return nil
}
