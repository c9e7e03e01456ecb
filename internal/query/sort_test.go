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
