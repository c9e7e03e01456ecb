package expr

import "testing"

func BenchmarkLookup(b *testing.B) {
	d := doc(b, `{"_id": 1, "name": "abc", "a": {"b": 42, "c": [1, 2, 3]}, "price": 12.5, "qty": 7, "tax": 0.2}`)
	b.Run("expr", func(b *testing.B) {
		for b.Loop() {
			if _, ok := lookup(d, "tax"); !ok {
				b.Fatal()
			}
		}
	})
	b.Run("bson", func(b *testing.B) {
		for b.Loop() {
			if _, ok := d.Lookup("tax"); !ok {
				b.Fatal()
			}
		}
	})
}
