package main

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Results are compared in a normalized form: integers of any width are
// int64, doubles float64 (compared with a relative tolerance), dates
// dateMs, Decimal128 *big.Float, documents row, null nil.
type (
	row    map[string]any
	dateMs int64
	// anyValue in an expected row accepts any value (an ObjectId _id).
	anyValue struct{}
)

// normalize converts a driver value into the normalized form.
func normalize(v bson.RawValue) any {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32())
	case bson.TypeInt64:
		return v.Int64()
	case bson.TypeDouble:
		return v.Double()
	case bson.TypeString:
		return v.StringValue()
	case bson.TypeDateTime:
		return dateMs(v.DateTime())
	case bson.TypeNull:
		return nil
	case bson.TypeDecimal128:
		f, _, err := big.ParseFloat(v.Decimal128().String(), 10, 200, big.ToNearestEven)
		if err != nil {
			return v.Decimal128().String()
		}
		return f
	case bson.TypeEmbeddedDocument:
		return normalizeDoc(v.Document())
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		out := make([]any, len(vals))
		for i, e := range vals {
			out[i] = normalize(e)
		}
		return out
	default:
		return fmt.Sprintf("%s:%s", v.Type, v.String())
	}
}

func normalizeDoc(d bson.Raw) row {
	els, _ := d.Elements()
	r := make(row, len(els))
	for _, e := range els {
		r[e.Key()] = normalize(e.Value())
	}
	return r
}

// same reports whether got matches the expected value want.
func same(want, got any) bool {
	switch w := want.(type) {
	case anyValue:
		return true
	case float64:
		g, ok := got.(float64)
		if !ok {
			return false
		}
		return w == g || math.Abs(w-g) <= 1e-9*math.Max(math.Abs(w), math.Abs(g))
	case *big.Float:
		g, ok := got.(*big.Float)
		if !ok {
			return false
		}
		diff := new(big.Float).Sub(w, g)
		diff.Abs(diff)
		tol := new(big.Float).Abs(w)
		tol.Mul(tol, big.NewFloat(1e-30))
		return diff.Cmp(tol) <= 0
	case row:
		g, ok := got.(row)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !same(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !same(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		return want == got
	}
}

// expectation is the oracle's answer to one query: every candidate result
// document in the pipeline's order (ties in any order), and how to read
// the sort key and the identity of a result document. The query's answer
// is the window all[skip : skip+limit]; because ties may be broken either
// way, a result is accepted when its sort keys equal the window's, position
// by position, and every returned document equals the candidate of the
// same identity (each candidate used at most its multiplicity).
type expectation struct {
	all         []row
	key         func(row) []any // nil: the order is unspecified
	ident       func(row) string
	skip, limit int
	// partial accepts fields in the result that the expected rows do not
	// list (whole hits documents).
	partial bool
}

func idOf(r row) string { return fmt.Sprint(r["_id"]) }

// check compares got with the expectation; it returns "" when they match.
func (e *expectation) check(got []row) string {
	lo := min(e.skip, len(e.all))
	hi := len(e.all)
	if e.limit > 0 {
		hi = min(lo+e.limit, len(e.all))
	}
	window := e.all[lo:hi]
	if len(got) != len(window) {
		return fmt.Sprintf("%d documents, want %d", len(got), len(window))
	}
	ident := e.ident
	if ident == nil {
		ident = idOf
	}
	cands := map[string][]row{}
	for _, r := range e.all {
		cands[ident(r)] = append(cands[ident(r)], r)
	}
	for j, g := range got {
		if e.key != nil {
			if wk, gk := e.key(window[j]), e.key(g); !same(wk, gk) {
				return fmt.Sprintf("document %d: sort key %v, want %v", j, gk, wk)
			}
		}
		id := ident(g)
		list := cands[id]
		found := -1
		for i, c := range list {
			if e.partial {
				if sameSubset(c, g) {
					found = i
					break
				}
			} else if same(c, g) {
				found = i
				break
			}
		}
		if found < 0 {
			if len(list) > 0 {
				return fmt.Sprintf("document %d: %v, want %v", j, showRow(g), showRow(list[0]))
			}
			return fmt.Sprintf("document %d: %v is not an expected result", j, showRow(g))
		}
		cands[id] = slices.Delete(list, found, found+1)
	}
	return ""
}

// sameSubset compares the fields of want present in want only.
func sameSubset(want, got row) bool {
	for k, wv := range want {
		gv, ok := got[k]
		if !ok || !same(wv, gv) {
			return false
		}
	}
	return true
}

func showRow(r row) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		v := r[k]
		if f, ok := v.(*big.Float); ok {
			v = f.Text('g', 36)
		}
		fmt.Fprintf(&b, "%s: %v", k, v)
	}
	b.WriteByte('}')
	return b.String()
}
