package query

import (
	"sync"
	"testing"
)

// TestConcurrentUse runs compiled specifications from many goroutines; run
// with -race.
func TestConcurrentUse(t *testing.T) {
	coll, _ := ParseCollation(d(t, `{"locale": "en", "strength": 2}`))
	opts := &Options{Collation: coll}
	f, err := ParseFilter(d(t, `{"a.b": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, 9]}, "s": {"$regex": "^x", "$options": "i"}, "$expr": {"$gt": ["$n", 1]}}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ParseSort(d(t, `{"s": 1, "n": -1}`), opts)
	p, _ := ParseProjection(d(t, `{"a.$": 1, "s": 1, "t": {"$concat": ["$s", "!"]}}`), opts)
	u, err := ParseUpdate(val(t, `{"$inc": {"n": 1}, "$set": {"a.$[e].c": 1}, "$addToSet": {"tags": "X"}}`), bsonDocs(d(t, `{"e.b": 2}`)), opts)
	if err != nil {
		t.Fatal(err)
	}
	doc := d(t, `{"_id": 1, "a": [{"b": 2}, {"b": 5}], "s": "Xy", "n": 3, "tags": ["x"]}`)
	other := d(t, `{"_id": 2, "s": "xz", "n": 1}`)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				var md MatchDetails
				if !f.MatchDetails(doc, &md) {
					t.Error("no match")
					return
				}
				if _, err := p.Apply(nil, doc, &md); err != nil {
					t.Error(err)
					return
				}
				if _, _, err := u.Apply(nil, doc, &md, false); err != nil {
					t.Error(err)
					return
				}
				s.Compare(doc, other)
				s.Key(nil, doc)
			}
		}()
	}
	wg.Wait()
}
