package e2e

// An Elle-style checker of list-append transaction histories (Kingsbury
// and Alvaro, "Elle: Inferring Isolation Anomalies from Experimental
// Observations"), for TestTransactionAnomalies.
//
// Every transaction appends unique values to some keys' lists and reads
// others. Because values are unique and lists only grow, the final lists
// give each key's version order, and every read (a list) names the
// version it saw: its last element's writer. From that the checker
// builds the dependency graph of the committed transactions:
//
//   - ww: the writer of a key's element i-1 → the writer of element i;
//   - wr: the writer of the last element a read saw → the reader;
//   - rw: a reader → the writer of the element after what it saw (the
//     reader did not see that write: an anti-dependency).
//
// and looks for the cycles Adya's anomalies are: G0 (ww only), G1c (ww
// and wr), G-single (exactly one rw edge: read skew, a lost update's
// shape). A cycle with two or more rw edges (G2, write skew) is what
// snapshot isolation permits, and is counted, not reported. Besides the
// cycles: an acknowledged commit whose values are missing (lost commit),
// a value of an aborted transaction read or present (G1a), a value
// present twice, and a read that is not a prefix of its key's final list
// (no single version order: lost or dirty writes).

import (
	"fmt"
	"slices"
	"testing"
)

// Attempt outcomes.
const (
	outcomeOK      = iota // the commit was acknowledged
	outcomeAborted        // the driver learnt it aborted (and retried, or gave up)
	outcomeUnknown        // the commit's fate is unknown (network error)
)

var outcomeNames = []string{"committed", "aborted", "unknown"}

type laOp struct {
	read bool
	key  int
	val  int64   // append
	list []int64 // read
}

type laAttempt struct {
	ops     []laOp
	outcome int
}

type elleReport struct {
	checked   int // committed transactions in the graph
	anomalies []string
	g2        int // cycles with two or more rw edges (permitted)
}

func (r *elleReport) add(format string, a ...any) {
	if len(r.anomalies) < 50 {
		r.anomalies = append(r.anomalies, fmt.Sprintf(format, a...))
	}
}

func checkListAppend(atts []*laAttempt, final map[int][]int64) *elleReport {
	rep := &elleReport{}
	writer := map[int64]*laAttempt{}
	for _, a := range atts {
		for _, op := range a.ops {
			if !op.read {
				writer[op.val] = a
			}
		}
	}
	// Position of every value in its final list; duplicates.
	pos := map[int64]int{}
	for k, list := range final {
		for i, v := range list {
			if _, dup := pos[v]; dup {
				rep.add("value %d twice in key %d", v, k)
			}
			pos[v] = i
			if writer[v] == nil {
				rep.add("value %d in key %d written by no transaction", v, k)
			}
		}
	}
	committed := map[*laAttempt]bool{}
	for _, a := range atts {
		switch a.outcome {
		case outcomeOK:
			committed[a] = true
		case outcomeUnknown:
			for _, op := range a.ops {
				if _, ok := pos[op.val]; !op.read && ok {
					committed[a] = true
				}
			}
		}
	}
	for _, a := range atts {
		for _, op := range a.ops {
			if op.read {
				continue
			}
			_, present := pos[op.val]
			if a.outcome == outcomeOK && !present {
				rep.add("lost commit: value %d of an acknowledged transaction missing from key %d", op.val, op.key)
			}
			if a.outcome == outcomeAborted && present {
				rep.add("G1a: value %d of an aborted transaction present in key %d", op.val, op.key)
			}
		}
	}
	// Reads: prefixes of the final lists, of committed values only. A
	// transaction reads its own appends at the end of a list: they are
	// checked and set aside (its view of the others' writes remains).
	for _, a := range atts {
		for j, op := range a.ops {
			if !op.read {
				continue
			}
			var own []int64
			for _, prev := range a.ops[:j] {
				if !prev.read && prev.key == op.key {
					own = append(own, prev.val)
				}
			}
			if n := len(op.list) - len(own); n < 0 || !slices.Equal(op.list[n:], own) {
				rep.add("read of key %d does not end with the transaction's own %d appends", op.key, len(own))
				continue
			} else {
				op.list = op.list[:n]
				a.ops[j].list = op.list
			}
			fl := final[op.key]
			if len(op.list) > len(fl) || !slices.Equal(fl[:len(op.list)], op.list) {
				i := 0
				for i < len(op.list) && i < len(fl) && op.list[i] == fl[i] {
					i++
				}
				v := op.list[i]
				what := "written by no transaction"
				if w := writer[v]; w != nil {
					what = fmt.Sprintf("written by a transaction of outcome %s", outcomeNames[w.outcome])
				}
				_, present := pos[v]
				rep.add("read of key %d (%d values) is not a prefix of its final list (%d values): element %d, %d, %s, present in the final lists: %v",
					op.key, len(op.list), len(fl), i, v, what, present)
				continue
			}
			for _, v := range op.list {
				if w := writer[v]; w != nil && w.outcome == outcomeAborted {
					rep.add("G1a: read of value %d of an aborted transaction", v)
				}
			}
		}
	}
	// The dependency graph of committed transactions.
	ids := map[*laAttempt]int{}
	var nodes []*laAttempt
	for _, a := range atts {
		if committed[a] {
			ids[a] = len(nodes)
			nodes = append(nodes, a)
		}
	}
	rep.checked = len(nodes)
	type edge struct {
		to int
		rw bool
	}
	g := make([][]edge, len(nodes))
	addEdge := func(from, to *laAttempt, rw bool) {
		f, ok1 := ids[from]
		t, ok2 := ids[to]
		if ok1 && ok2 && f != t {
			g[f] = append(g[f], edge{t, rw})
		}
	}
	for _, list := range final {
		for i := 1; i < len(list); i++ {
			addEdge(writer[list[i-1]], writer[list[i]], false)
		}
	}
	for _, a := range nodes {
		for _, op := range a.ops {
			if !op.read {
				continue
			}
			fl := final[op.key]
			if len(op.list) > len(fl) {
				continue
			}
			if n := len(op.list); n > 0 {
				addEdge(writer[op.list[n-1]], a, false)
			}
			if n := len(op.list); n < len(fl) {
				addEdge(a, writer[fl[n]], true)
			}
		}
	}
	// Cycles lie within strongly connected components: G0/G1c is a
	// component of the ww/wr subgraph with more than one transaction; a
	// G-single is an rw edge inside a component of the whole graph whose
	// head reaches its tail over ww/wr edges within that component.
	wwwr := func(e edge) bool { return !e.rw }
	all := func(edge) bool { return true }
	adj := func(ok func(edge) bool) [][]int {
		out := make([][]int, len(g))
		for f, es := range g {
			for _, e := range es {
				if ok(e) {
					out[f] = append(out[f], e.to)
				}
			}
		}
		return out
	}
	sccWR := components(adj(wwwr))
	size := map[int]int{}
	for _, c := range sccWR {
		size[c]++
	}
	for c, n := range size {
		if n > 1 {
			rep.add("G0/G1c: %d transactions in a cycle of ww/wr dependencies (component %d)", n, c)
		}
	}
	scc := components(adj(all))
	reach := func(from, to int) bool {
		seen := map[int]bool{from: true}
		stack := []int{from}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n == to {
				return true
			}
			for _, e := range g[n] {
				if !e.rw && !seen[e.to] && scc[e.to] == scc[from] {
					seen[e.to] = true
					stack = append(stack, e.to)
				}
			}
		}
		return false
	}
	for f := range g {
		for _, e := range g[f] {
			if !e.rw || scc[f] != scc[e.to] {
				continue
			}
			if reach(e.to, f) {
				rep.add("G-single: an anti-dependency %d → %d closed by ww/wr dependencies", f, e.to)
			} else {
				rep.g2++
			}
		}
	}
	return rep
}

func app(k int, v int64) laOp             { return laOp{key: k, val: v} }
func rd(k int, list ...int64) laOp        { return laOp{read: true, key: k, list: list} }
func att(out int, ops ...laOp) *laAttempt { return &laAttempt{ops: ops, outcome: out} }

// TestElleChecker: the checker finds each anomaly it claims to and
// permits write skew.
func TestElleChecker(t *testing.T) {
	cases := []struct {
		name    string
		atts    []*laAttempt
		final   map[int][]int64
		bad, g2 bool
	}{
		{"serial", []*laAttempt{att(outcomeOK, app(0, 1), app(1, 2)), att(outcomeOK, rd(0, 1), rd(1, 2), app(0, 3))},
			map[int][]int64{0: {1, 3}, 1: {2}}, false, false},
		{"read skew (G-single)", []*laAttempt{att(outcomeOK, app(0, 1), app(1, 2)), att(outcomeOK, rd(0, 1), rd(1))},
			map[int][]int64{0: {1}, 1: {2}}, true, false},
		{"write skew (G2, permitted)", []*laAttempt{att(outcomeOK, rd(0), app(1, 1)), att(outcomeOK, rd(1), app(0, 2))},
			map[int][]int64{0: {2}, 1: {1}}, false, true},
		{"circular information flow (G1c)", []*laAttempt{att(outcomeOK, app(0, 1), rd(1, 2)), att(outcomeOK, app(1, 2), rd(0, 1))},
			map[int][]int64{0: {1}, 1: {2}}, true, false},
		{"lost commit", []*laAttempt{att(outcomeOK, app(0, 1))}, map[int][]int64{0: {}}, true, false},
		{"aborted write present (G1a)", []*laAttempt{att(outcomeAborted, app(0, 1))}, map[int][]int64{0: {1}}, true, false},
		{"aborted write read (G1a)", []*laAttempt{att(outcomeAborted, app(0, 1)), att(outcomeOK, rd(0, 1))}, map[int][]int64{0: {}}, true, false},
		{"read not a prefix", []*laAttempt{att(outcomeOK, app(0, 1)), att(outcomeOK, app(0, 2)), att(outcomeOK, rd(0, 2))},
			map[int][]int64{0: {1, 2}}, true, false},
		{"unknown outcome, present: committed", []*laAttempt{att(outcomeUnknown, app(0, 1)), att(outcomeOK, rd(0, 1))},
			map[int][]int64{0: {1}}, false, false},
	}
	for _, tc := range cases {
		rep := checkListAppend(tc.atts, tc.final)
		if got := len(rep.anomalies) > 0; got != tc.bad {
			t.Errorf("%s: anomalies %v, want any: %v", tc.name, rep.anomalies, tc.bad)
		}
		if got := rep.g2 > 0; got != tc.g2 {
			t.Errorf("%s: G2 cycles %d, want any: %v", tc.name, rep.g2, tc.g2)
		}
	}
}

// TestElleCheckerOwnWrites: a transaction's read of a key it appended to
// ends with its own values, which are not the others' versions.
func TestElleCheckerOwnWrites(t *testing.T) {
	own := att(outcomeAborted, app(0, 5), rd(0, 1, 5))
	rep := checkListAppend([]*laAttempt{att(outcomeOK, app(0, 1)), own}, map[int][]int64{0: {1}})
	if len(rep.anomalies) != 0 {
		t.Errorf("own append read back: %v", rep.anomalies)
	}
	bad := att(outcomeOK, app(0, 5), rd(0, 1))
	if rep := checkListAppend([]*laAttempt{att(outcomeOK, app(0, 1)), bad}, map[int][]int64{0: {1, 5}}); len(rep.anomalies) == 0 {
		t.Error("a read missing its own append passed")
	}
}

// components returns the strongly connected component of each node of
// the graph adj (Tarjan's algorithm, iterative).
func components(adj [][]int) []int {
	n := len(adj)
	index, low, comp := make([]int, n), make([]int, n), make([]int, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	onStack := make([]bool, n)
	var stack []int
	next, ncomp := 0, 0
	type frame struct{ v, i int }
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			fr := &call[len(call)-1]
			v := fr.v
			if fr.i < len(adj[v]) {
				w := adj[v][fr.i]
				fr.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
		}
	}
	return comp
}
