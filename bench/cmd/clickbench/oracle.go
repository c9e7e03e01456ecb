package main

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// oracle computes what each pipeline must return, in plain Go over the
// generated rows (independently of Cairn). isRefresh says whether the
// documents carry the IsRefresh column.
type oracle struct {
	hits      []hit
	isRefresh bool
}

// expect returns the expectation of query q.
func (o *oracle) expect(q int) *expectation {
	return oracleFuncs[q](o)
}

var oracleFuncs = []func(*oracle) *expectation{
	0: func(o *oracle) *expectation { return countRows(o.count(func(*hit) bool { return true })) },
	1: func(o *oracle) *expectation {
		return countRows(o.count(func(h *hit) bool { return h.AdvEngineID != 0 }))
	},
	2: q2,
	3: q3,
	4: func(o *oracle) *expectation { return countRows(o.distinct(func(h *hit) any { return h.UserID })) },
	5: func(o *oracle) *expectation { return countRows(o.distinct(func(h *hit) any { return h.SearchPhrase })) },
	6: q6,
	7: q7,
	8: q8,
	9: q9,
	10: func(o *oracle) *expectation {
		return o.distinctUsersBy(func(h *hit) (any, bool) { return h.MobilePhoneModel, h.MobilePhoneModel != "" })
	},
	11: func(o *oracle) *expectation {
		type k struct {
			p int32
			m string
		}
		e := o.distinctUsersBy(func(h *hit) (any, bool) { return k{h.MobilePhone, h.MobilePhoneModel}, h.MobilePhoneModel != "" })
		for _, r := range e.all {
			kk := r["_id"].(k)
			r["_id"] = row{"MobilePhone": int64(kk.p), "MobilePhoneModel": kk.m}
		}
		return e
	},
	12: func(o *oracle) *expectation {
		return o.countBy(func(h *hit) (any, bool) { return h.SearchPhrase, h.SearchPhrase != "" }, "c", 0, 10)
	},
	13: func(o *oracle) *expectation {
		return o.distinctUsersBy(func(h *hit) (any, bool) { return h.SearchPhrase, h.SearchPhrase != "" })
	},
	14: q14,
	15: func(o *oracle) *expectation {
		return o.countBy(func(h *hit) (any, bool) { return h.UserID, true }, "c", 0, 10)
	},
	16: func(o *oracle) *expectation { return q16(o, true) },
	17: func(o *oracle) *expectation { return q16(o, false) },
	18: q18,
	19: q19,
	20: func(o *oracle) *expectation {
		return countRows(o.count(func(h *hit) bool { return strings.Contains(h.URL, "google") }))
	},
	21: q21,
	22: q22,
	23: q23,
	24: q24,
	25: q25,
	26: q26,
	27: q27,
	28: q28,
	29: q29,
	30: func(o *oracle) *expectation {
		return o.clientGroups(func(h *hit) bool { return h.SearchPhrase != "" }, func(h *hit) string {
			return itoa(int64(h.SearchEngineID)) + "|" + itoa(int64(h.ClientIP))
		}, "SearchEngineID")
	},
	31: func(o *oracle) *expectation {
		return o.clientGroups(func(h *hit) bool { return h.SearchPhrase != "" }, func(h *hit) string {
			return itoa(h.WatchID) + "|" + itoa(int64(h.ClientIP))
		}, "WatchID")
	},
	32: func(o *oracle) *expectation {
		return o.clientGroups(func(h *hit) bool { return true }, func(h *hit) string {
			return itoa(int64(h.ClientIP)) + "|" + itoa(h.WatchID)
		}, "WatchID")
	},
	33: func(o *oracle) *expectation {
		return o.countBy(func(h *hit) (any, bool) { return h.URL, true }, "c", 0, 10)
	},
	34: func(o *oracle) *expectation {
		e := o.countBy(func(h *hit) (any, bool) { return h.URL, true }, "c", 0, 10)
		for _, r := range e.all {
			r["one"] = int64(1)
		}
		return e
	},
	35: func(o *oracle) *expectation {
		e := o.countBy(func(h *hit) (any, bool) { return int64(h.ClientIP), true }, "c", 0, 10)
		for _, r := range e.all {
			ip := r["_id"].(int64)
			r["ClientIP_0"], r["ClientIP_1"], r["ClientIP_2"], r["ClientIP_3"] = ip, ip-1, ip-2, ip-3
		}
		return e
	},
	36: func(o *oracle) *expectation {
		return o.countBy(func(h *hit) (any, bool) {
			return h.URL, o.counter62(h, 1, 31) && h.DontCountHits == 0 && o.notRefresh(h) && h.URL != ""
		}, "pageViews", 0, 10)
	},
	37: func(o *oracle) *expectation {
		return o.countBy(func(h *hit) (any, bool) {
			return h.Title, o.counter62(h, 1, 31) && h.DontCountHits == 0 && o.notRefresh(h) && h.Title != ""
		}, "pageViews", 0, 10)
	},
	38: func(o *oracle) *expectation {
		return o.countBy(func(h *hit) (any, bool) {
			return h.Title, o.counter62(h, 1, 31) && o.notRefresh(h) && h.IsLink != 0 && h.IsDownload == 0 && h.URL != ""
		}, "pageViews", 1000, 10)
	},
	39: q39,
	40: q40,
	41: q41,
	42: q42,
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// notRefresh is the pipelines' {IsRefresh: 0}: false for every document
// when the column is absent.
func (o *oracle) notRefresh(h *hit) bool { return o.isRefresh && h.Refresh == 0 }

// counter62 is "CounterID 62, EventDate within July from..to (days)".
func (o *oracle) counter62(h *hit, from, to int) bool {
	return h.CounterID == 62 && h.EventDate >= july2013+int64(from-1)*86400 && h.EventDate <= july2013+int64(to-1)*86400
}

func (o *oracle) count(f func(*hit) bool) int64 {
	var n int64
	for i := range o.hits {
		if f(&o.hits[i]) {
			n++
		}
	}
	return n
}

func (o *oracle) distinct(key func(*hit) any) int64 {
	seen := map[any]bool{}
	for i := range o.hits {
		seen[key(&o.hits[i])] = true
	}
	return int64(len(seen))
}

// countRows is the answer of a pipeline ending in {$count: "c"}: nothing
// when the count is 0.
func countRows(n int64) *expectation {
	e := &expectation{ident: func(row) string { return "" }}
	if n > 0 {
		e.all = []row{{"c": n}}
	}
	return e
}

// byIntDesc orders rows by an integer field, largest first.
func byIntDesc(field string) func(a, b row) int {
	return func(a, b row) int { return cmp.Compare(b[field].(int64), a[field].(int64)) }
}

func fieldKey(fields ...string) func(row) []any {
	return func(r row) []any {
		k := make([]any, len(fields))
		for i, f := range fields {
			k[i] = r[f]
		}
		return k
	}
}

// countBy groups the rows f selects by its key and counts them into
// field, sorted by the count descending.
func (o *oracle) countBy(f func(*hit) (any, bool), field string, skip, limit int) *expectation {
	counts := map[any]int64{}
	for i := range o.hits {
		if k, ok := f(&o.hits[i]); ok {
			counts[k]++
		}
	}
	e := &expectation{key: fieldKey(field), skip: skip, limit: limit}
	for k, n := range counts {
		e.all = append(e.all, row{"_id": normKey(k), field: n})
	}
	slices.SortStableFunc(e.all, byIntDesc(field))
	return e
}

// normKey converts an oracle group key to its normalized form.
func normKey(k any) any {
	switch v := k.(type) {
	case int32:
		return int64(v)
	case time.Time:
		return dateMs(v.UnixMilli())
	}
	return k
}

// distinctUsersBy counts distinct UserIDs per group, top 10 by count.
func (o *oracle) distinctUsersBy(f func(*hit) (any, bool)) *expectation {
	type pair struct {
		k any
		u int64
	}
	seen := map[pair]bool{}
	users := map[any]int64{}
	for i := range o.hits {
		h := &o.hits[i]
		k, ok := f(h)
		if !ok {
			continue
		}
		if p := (pair{k, h.UserID}); !seen[p] {
			seen[p] = true
			users[k]++
		}
	}
	e := &expectation{key: fieldKey("u"), limit: 10}
	for k, n := range users {
		e.all = append(e.all, row{"_id": normKey(k), "u": n})
	}
	slices.SortStableFunc(e.all, byIntDesc("u"))
	return e
}
