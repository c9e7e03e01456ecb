package main

// The oracle's answers to the queries that need more than a count
// (oracle.go holds the table and the shared counting helpers).

import (
	"cmp"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func q2(o *oracle) *expectation {
	var sum, rw int64
	for i := range o.hits {
		sum += int64(o.hits[i].AdvEngineID)
		rw += int64(o.hits[i].ResolutionWidth)
	}
	n := int64(len(o.hits))
	r := row{"_id": nil, "sum_AdvEngineID": sum, "c": n, "avg_ResolutionWidth": nil}
	if n > 0 {
		r["avg_ResolutionWidth"] = float64(rw) / float64(n)
	}
	return &expectation{all: []row{r}}
}

func q3(o *oracle) *expectation {
	sum := new(big.Int)
	for i := range o.hits {
		sum.Add(sum, big.NewInt(o.hits[i].UserID))
	}
	avg := new(big.Float).SetPrec(200).SetInt(sum)
	avg.Quo(avg, new(big.Float).SetPrec(200).SetInt64(int64(len(o.hits))))
	return &expectation{all: []row{{"_id": nil, "a": avg}}}
}

func q6(o *oracle) *expectation {
	lo, hi := o.hits[0].EventDate, o.hits[0].EventDate
	for i := range o.hits {
		lo, hi = min(lo, o.hits[i].EventDate), max(hi, o.hits[i].EventDate)
	}
	return &expectation{all: []row{{"_id": nil, "min": dateMs(lo * 1000), "max": dateMs(hi * 1000)}}}
}

func q7(o *oracle) *expectation {
	e := o.countBy(func(h *hit) (any, bool) { return h.AdvEngineID, h.AdvEngineID != 0 }, "c", 0, 0)
	return e
}

func q8(o *oracle) *expectation {
	return o.distinctUsersBy(func(h *hit) (any, bool) { return h.RegionID, true })
}

func q9(o *oracle) *expectation {
	type agg struct{ sum, rw, c int64 }
	groups := map[int32]*agg{}
	users := map[int32]map[int64]bool{}
	for i := range o.hits {
		h := &o.hits[i]
		a := groups[h.RegionID]
		if a == nil {
			a = &agg{}
			groups[h.RegionID] = a
			users[h.RegionID] = map[int64]bool{}
		}
		a.sum += int64(h.AdvEngineID)
		a.rw += int64(h.ResolutionWidth)
		a.c++
		users[h.RegionID][h.UserID] = true
	}
	e := &expectation{key: fieldKey("c"), limit: 10}
	for k, a := range groups {
		e.all = append(e.all, row{"_id": int64(k), "sum_AdvEngineID": a.sum, "avg_ResolutionWidth": float64(a.rw) / float64(a.c),
			"c": a.c, "count_distinct_UserID": int64(len(users[k]))})
	}
	slices.SortStableFunc(e.all, byIntDesc("c"))
	return e
}

func q14(o *oracle) *expectation {
	type g struct {
		p  string
		se int32
		c  int64
	}
	groups := map[string]*g{}
	for i := range o.hits {
		h := &o.hits[i]
		if h.SearchPhrase == "" {
			continue
		}
		k := h.SearchPhrase + "|" + itoa(int64(h.SearchEngineID))
		if groups[k] == nil {
			groups[k] = &g{p: h.SearchPhrase, se: h.SearchEngineID}
		}
		groups[k].c++
	}
	e := &expectation{key: fieldKey("c"), limit: 10}
	for k, v := range groups {
		e.all = append(e.all, row{"_id": k, "SearchPhrase": v.p, "SearchEngineID": int64(v.se), "c": v.c})
	}
	slices.SortStableFunc(e.all, byIntDesc("c"))
	return e
}

func q16(o *oracle, sorted bool) *expectation {
	type g struct {
		p string
		u int64
		c int64
	}
	groups := map[string]*g{}
	for i := range o.hits {
		h := &o.hits[i]
		k := h.SearchPhrase + "|" + itoa(h.UserID)
		if groups[k] == nil {
			groups[k] = &g{p: h.SearchPhrase, u: h.UserID}
		}
		groups[k].c++
	}
	e := &expectation{limit: 10}
	for k, v := range groups {
		e.all = append(e.all, row{"_id": k, "SearchPhrase": v.p, "UserID": v.u, "c": v.c})
	}
	if sorted {
		e.key = fieldKey("c")
		slices.SortStableFunc(e.all, byIntDesc("c"))
	}
	return e
}

func q18(o *oracle) *expectation {
	type k struct {
		u int64
		p string
		m int
	}
	counts := map[k]int64{}
	for i := range o.hits {
		h := &o.hits[i]
		counts[k{h.UserID, h.SearchPhrase, int(h.EventTime/60) % 60}]++
	}
	e := &expectation{key: fieldKey("c"), limit: 10}
	for kk, n := range counts {
		e.all = append(e.all, row{"_id": row{"UserID": kk.u, "SearchPhrase": kk.p, "m": int64(kk.m)}, "c": n})
	}
	slices.SortStableFunc(e.all, byIntDesc("c"))
	return e
}

func q19(o *oracle) *expectation {
	e := &expectation{ident: func(row) string { return "" }}
	for i := range o.hits {
		if o.hits[i].UserID == litUserID {
			e.all = append(e.all, row{"_id": anyValue{}, "UserID": litUserID})
		}
	}
	return e
}

func q21(o *oracle) *expectation {
	type g struct {
		min string
		c   int64
	}
	groups := map[string]*g{}
	for i := range o.hits {
		h := &o.hits[i]
		if !strings.Contains(h.URL, "google") || h.SearchPhrase == "" {
			continue
		}
		a := groups[h.SearchPhrase]
		if a == nil {
			a = &g{min: h.URL}
			groups[h.SearchPhrase] = a
		}
		a.min = min(a.min, h.URL)
		a.c++
	}
	e := &expectation{key: fieldKey("c"), limit: 10}
	for k, v := range groups {
		e.all = append(e.all, row{"_id": k, "min_URL": v.min, "c": v.c})
	}
	slices.SortStableFunc(e.all, byIntDesc("c"))
	return e
}

func q22(o *oracle) *expectation {
	type g struct {
		users      map[int64]bool
		minT, minU string
		c          int64
	}
	groups := map[string]*g{}
	for i := range o.hits {
		h := &o.hits[i]
		if !strings.Contains(h.Title, "Google") || strings.Contains(h.URL, ".google.") || h.SearchPhrase == "" {
			continue
		}
		a := groups[h.SearchPhrase]
		if a == nil {
			a = &g{users: map[int64]bool{}, minT: h.Title, minU: h.URL}
			groups[h.SearchPhrase] = a
		}
		a.users[h.UserID] = true
		a.minT, a.minU = min(a.minT, h.Title), min(a.minU, h.URL)
		a.c++
	}
	e := &expectation{key: fieldKey("c"), limit: 10}
	for k, v := range groups {
		e.all = append(e.all, row{"_id": k, "count_distinct_UserID": int64(len(v.users)), "min_Title": v.minT, "min_URL": v.minU, "c": v.c})
	}
	slices.SortStableFunc(e.all, byIntDesc("c"))
	return e
}

func q23(o *oracle) *expectation {
	e := &expectation{key: fieldKey("EventTime"), limit: 10, partial: true,
		ident: func(r row) string { return itoa(r["WatchID"].(int64)) }}
	for i := range o.hits {
		h := &o.hits[i]
		if strings.Contains(h.URL, "google") {
			e.all = append(e.all, row{"WatchID": h.WatchID, "URL": h.URL, "EventTime": dateMs(h.EventTime * 1000),
				"UserID": h.UserID, "CounterID": int64(h.CounterID), "SearchPhrase": h.SearchPhrase, "Title": h.Title})
		}
	}
	slices.SortStableFunc(e.all, func(a, b row) int { return cmp.Compare(a["EventTime"].(dateMs), b["EventTime"].(dateMs)) })
	return e
}

func q24(o *oracle) *expectation {
	// EventTime is projected away before the sort: every key is missing,
	// so any 10 phrases answer.
	e := &expectation{limit: 10, ident: func(r row) string { return r["SearchPhrase"].(string) }}
	for i := range o.hits {
		if p := o.hits[i].SearchPhrase; p != "" {
			e.all = append(e.all, row{"SearchPhrase": p})
		}
	}
	return e
}

func q25(o *oracle) *expectation {
	e := &expectation{key: fieldKey("SearchPhrase"), limit: 10, ident: func(r row) string { return r["SearchPhrase"].(string) }}
	for i := range o.hits {
		if p := o.hits[i].SearchPhrase; p != "" {
			e.all = append(e.all, row{"_id": anyValue{}, "SearchPhrase": p})
		}
	}
	slices.SortStableFunc(e.all, func(a, b row) int { return strings.Compare(a["SearchPhrase"].(string), b["SearchPhrase"].(string)) })
	return e
}

func q26(o *oracle) *expectation {
	e := &expectation{key: fieldKey("EventTime", "SearchPhrase"), limit: 10, ident: func(r row) string { return showRow(r) }}
	for i := range o.hits {
		if h := &o.hits[i]; h.SearchPhrase != "" {
			e.all = append(e.all, row{"EventTime": dateMs(h.EventTime * 1000), "SearchPhrase": h.SearchPhrase})
		}
	}
	slices.SortStableFunc(e.all, func(a, b row) int {
		return cmp.Or(cmp.Compare(a["EventTime"].(dateMs), b["EventTime"].(dateMs)),
			strings.Compare(a["SearchPhrase"].(string), b["SearchPhrase"].(string)))
	})
	return e
}

// lenGroups groups by key, averaging the byte length of s; groups of more
// than 100,000 rows, sorted by the average descending, top 25.
func lenGroups(rows []row) *expectation {
	e := &expectation{key: fieldKey("l"), limit: 25}
	for _, r := range rows {
		if r["c"].(int64) > 100000 {
			e.all = append(e.all, r)
		}
	}
	slices.SortStableFunc(e.all, func(a, b row) int { return cmp.Compare(b["l"].(float64), a["l"].(float64)) })
	return e
}

func q27(o *oracle) *expectation {
	type g struct{ n, c int64 }
	groups := map[int32]*g{}
	for i := range o.hits {
		h := &o.hits[i]
		if h.URL == "" {
			continue
		}
		a := groups[h.CounterID]
		if a == nil {
			a = &g{}
			groups[h.CounterID] = a
		}
		a.n += int64(len(h.URL))
		a.c++
	}
	var rows []row
	for k, v := range groups {
		rows = append(rows, row{"_id": int64(k), "l": float64(v.n) / float64(v.c), "c": v.c})
	}
	return lenGroups(rows)
}

var refererDomain = regexp.MustCompile(`^https?://(?:www\.)?([^/]+)/.*$`)

func q28(o *oracle) *expectation {
	type g struct {
		n, c int64
		min  string
	}
	groups := map[string]*g{}
	for i := range o.hits {
		h := &o.hits[i]
		if h.Referer == "" {
			continue
		}
		k := h.Referer
		if m := refererDomain.FindStringSubmatch(h.Referer); m != nil {
			k = m[1]
		}
		a := groups[k]
		if a == nil {
			a = &g{min: h.Referer}
			groups[k] = a
		}
		a.n += int64(len(h.Referer))
		a.c++
		a.min = min(a.min, h.Referer)
	}
	var rows []row
	for k, v := range groups {
		rows = append(rows, row{"_id": k, "l": float64(v.n) / float64(v.c), "c": v.c, "min_Referer": v.min})
	}
	return lenGroups(rows)
}

func q29(o *oracle) *expectation {
	var sum int64
	for i := range o.hits {
		sum += int64(o.hits[i].ResolutionWidth)
	}
	r := row{"_id": nil}
	for k := 0; k < 90; k++ {
		r["srw_plus_"+strconv.Itoa(k)] = sum + int64(k)*int64(len(o.hits))
	}
	return &expectation{all: []row{r}}
}

// clientGroups is Q30-Q32: groups by a string key with the first values of
// two columns, the average ResolutionWidth, the sum of IsRefresh and a count.
func (o *oracle) clientGroups(sel func(*hit) bool, key func(*hit) string, firstField string) *expectation {
	type g struct {
		first     int64
		ip        int32
		rw, rf, c int64
	}
	groups := map[string]*g{}
	for i := range o.hits {
		h := &o.hits[i]
		if !sel(h) {
			continue
		}
		k := key(h)
		a := groups[k]
		if a == nil {
			a = &g{ip: h.ClientIP}
			if firstField == "WatchID" {
				a.first = h.WatchID
			} else {
				a.first = int64(h.SearchEngineID)
			}
			groups[k] = a
		}
		a.rw += int64(h.ResolutionWidth)
		if o.isRefresh {
			a.rf += int64(h.Refresh)
		}
		a.c++
	}
	e := &expectation{key: fieldKey("c"), limit: 10}
	for k, v := range groups {
		e.all = append(e.all, row{"_id": k, firstField: v.first, "ClientIP": int64(v.ip),
			"avg_ResolutionWidth": float64(v.rw) / float64(v.c), "sum_IsRefresh": v.rf, "c": v.c})
	}
	slices.SortStableFunc(e.all, byIntDesc("c"))
	return e
}

func q39(o *oracle) *expectation {
	type k struct {
		ts, se, adv int32
		src, dst    string
	}
	counts := map[k]int64{}
	for i := range o.hits {
		h := &o.hits[i]
		if !o.counter62(h, 1, 31) || !o.notRefresh(h) {
			continue
		}
		src := ""
		if h.SearchEngineID == 0 && h.AdvEngineID == 0 {
			src = h.Referer
		}
		counts[k{h.TraficSourceID, h.SearchEngineID, h.AdvEngineID, src, h.URL}]++
	}
	e := &expectation{key: fieldKey("pageViews"), skip: 1000, limit: 10}
	for kk, n := range counts {
		e.all = append(e.all, row{"_id": row{"TraficSourceID": int64(kk.ts), "SearchEngineID": int64(kk.se),
			"AdvEngineID": int64(kk.adv), "Src": kk.src, "Dst": kk.dst}, "pageViews": n})
	}
	slices.SortStableFunc(e.all, byIntDesc("pageViews"))
	return e
}

func q40(o *oracle) *expectation {
	type k struct{ u, d int64 }
	counts := map[k]int64{}
	for i := range o.hits {
		h := &o.hits[i]
		if o.counter62(h, 1, 31) && o.notRefresh(h) && (h.TraficSourceID == -1 || h.TraficSourceID == 6) && h.RefererHash == litRefererHash {
			counts[k{h.URLHash, h.EventDate}]++
		}
	}
	e := &expectation{key: fieldKey("pageViews"), skip: 100, limit: 10}
	for kk, n := range counts {
		e.all = append(e.all, row{"_id": row{"URLHash": kk.u, "EventDate": dateMs(kk.d * 1000)}, "pageViews": n})
	}
	slices.SortStableFunc(e.all, byIntDesc("pageViews"))
	return e
}

func q41(o *oracle) *expectation {
	type k struct{ w, h int32 }
	counts := map[k]int64{}
	for i := range o.hits {
		h := &o.hits[i]
		if o.counter62(h, 1, 31) && o.notRefresh(h) && h.DontCountHits == 0 && h.URLHash == litURLHash {
			counts[k{h.WindowClientWidth, h.WindowClientHeight}]++
		}
	}
	e := &expectation{key: fieldKey("pageViews"), skip: 10000, limit: 10}
	for kk, n := range counts {
		e.all = append(e.all, row{"_id": row{"WindowClientWidth": int64(kk.w), "WindowClientHeight": int64(kk.h)}, "pageViews": n})
	}
	slices.SortStableFunc(e.all, byIntDesc("pageViews"))
	return e
}

func q42(o *oracle) *expectation {
	counts := map[int64]int64{}
	for i := range o.hits {
		h := &o.hits[i]
		if o.counter62(h, 14, 15) && o.notRefresh(h) && h.DontCountHits == 0 {
			counts[h.EventTime/60*60]++
		}
	}
	e := &expectation{key: fieldKey("_id"), skip: 1000, limit: 10}
	for m, n := range counts {
		e.all = append(e.all, row{"_id": dateMs(m * 1000), "pageViews": n})
	}
	slices.SortFunc(e.all, func(a, b row) int { return cmp.Compare(a["_id"].(dateMs), b["_id"].(dateMs)) })
	return e
}
