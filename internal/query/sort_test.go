package query

import (
	"bytes"
	"sort"
	"testing"
)

func TestSortOrder(t *testing.T) {
	docs := []string{
		`{"_id": 1, "a": 5}`,
		`{"_id": 2, "a": [1, 10]}`,
		`{"_id": 3}`,
		`{"_id": 4, "a": null}`,
		`{"_id": 5, "a": "x"}`,
		`{"_id": 6, "a": []}`,
		`{"_id": 7, "a": 3.5}`,
		`{"_id": 8, "a": {"$minKey": 1}}`,
	}
	cases := []struct {
		spec string
		want []int
	}{
		{`{"a": 1, "_id": 1}`, []int{8, 6, 3, 4, 2, 7, 1, 5}},
		{`{"a": -1, "_id": 1}`, []int{5, 2, 1, 7, 3, 4, 6, 8}},
	}
	for _, c := range cases {
		s, err := ParseSort(d(t, c.spec), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, useKey := range []bool{false, true} {
			ds := make([]int, len(docs))
			for i := range ds {
				ds[i] = i
			}
			sort.SliceStable(ds, func(i, j int) bool {
				a, b := d(t, docs[ds[i]]), d(t, docs[ds[j]])
				if useKey {
					return bytes.Compare(s.Key(nil, a), s.Key(nil, b)) < 0
				}
				return s.Compare(a, b) < 0
			})
			var got []int
			for _, i := range ds {
				id, _ := d(t, docs[i]).Lookup("_id")
				got = append(got, int(id.Int32()))
			}
			if !equalInts(got, c.want) {
				t.Errorf("sort %s (key=%v) = %v, want %v", c.spec, useKey, got, c.want)
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSortDotted(t *testing.T) {
	s, _ := ParseSort(d(t, `{"a.b": 1}`), nil)
	x := d(t, `{"a": [{"b": 5}, {"b": 2}]}`)
	y := d(t, `{"a": {"b": 3}}`)
	if s.Compare(x, y) >= 0 {
		t.Errorf("min of [5,2] should sort before 3")
	}
}

func TestSortParse(t *testing.T) {
	for _, c := range []struct {
		spec string
		code int32
	}{
		{`{"a": 1}`, 0},
		{`{"a": -1.0}`, 0},
		{`{"a": {"$numberLong": "1"}}`, 0},
		{`{"a": 2}`, 15975},
		{`{"a": 0}`, 15975},
		{`{"a": "asc"}`, 15974},
		{`{"a": {"$meta": "textScore"}}`, 0},
		{`{"a": {"$meta": "foo"}}`, 31138},
		{`{"a": {"$meta": 0.1}}`, 31138},
		{`{"a": {"$meta": "textScore", "x": 1}}`, 9},
		{`{"a": {"$unknown": "textScore"}}`, 17312},
		{`{"a": {"$meta": "searchScore"}}`, 31218},
		{`{"$natural": 1}`, 0},
		{`{"": 1}`, 40352},
		{`{"a.$b": 1}`, 16410},
	} {
		_, err := ParseSort(d(t, c.spec), nil)
		if errCode(err) != c.code {
			t.Errorf("ParseSort(%s) = %v, want code %d", c.spec, err, c.code)
		}
	}
	s, _ := ParseSort(d(t, `{"$natural": -1}`), nil)
	if s.Natural() != -1 {
		t.Errorf("Natural() = %d", s.Natural())
	}
}

func TestCompoundSortTuples(t *testing.T) {
	s, err := ParseSort(d(t, `{"a.b": 1, "a.c": -1}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	// MongoDB's own example: the best tuple is (0, 3).
	x := d(t, `{"a": [{"b": 1, "c": 0}, {"b": 0, "c": 3}, {"b": 0, "c": 1}]}`)
	vals, err := s.tupleValues(x)
	if err != nil || vals[0].Int32() != 0 || vals[1].Int32() != 3 {
		t.Errorf("tuple = %v %v", vals, err)
	}
	// Keys under one array vary together: (0, 1) beats (1, 5).
	y := d(t, `{"a": [{"b": 0, "c": 1}, {"b": 1, "c": 5}]}`)
	z := d(t, `{"a": [{"b": 0, "c": 2}]}`)
	if s.Compare(z, y) >= 0 {
		t.Errorf("(0, 2) should sort before (0, 1) with c descending")
	}
	if bytes.Compare(s.Key(nil, z), s.Key(nil, y)) >= 0 {
		t.Errorf("keys disagree with Compare")
	}
	p, _ := ParseSort(d(t, `{"a": 1, "b": 1}`), nil)
	if err := p.Check(d(t, `{"a": [1, 2], "b": [3, 4]}`)); errCode(err) != 2 || err.Error() != "cannot sort with keys that are parallel arrays" {
		t.Errorf("parallel arrays: %v", err)
	}
	if err := p.Check(d(t, `{"a": [1, 2], "b": 3}`)); err != nil {
		t.Errorf("one array is fine: %v", err)
	}
}
