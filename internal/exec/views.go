package exec

import (
	"errors"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The view graph. A view depends on the namespace it is defined on and on
// every namespace its pipeline reads ($lookup, $graphLookup, $unionWith,
// at any depth: auth.PipelineRefs). As mongod's ViewGraph does, a new view is
// refused at creation when it would close a cycle (GraphContainsCycle, 5)
// or make a chain of views longer than MaxViewDepth
// (ViewDepthLimitExceeded, 165) — counting both the views it rests on and
// the views already resting on it, since a view named before it existed
// starts to resolve once it does.

// viewGraph answers, within one transaction, what each namespace depends
// on; proposed holds the view being created.
type viewGraph struct {
	tx       *Tx
	proposed string   // "db.name" of the new view
	refs     []string // what the new view depends on
	height   map[string]int
	parents  map[string][]string // built on demand from every view
}

// viewDeps lists the namespaces a view over viewOn with pipeline, in db,
// depends on.
func viewDeps(db, viewOn string, pipeline bson.Doc) []string {
	deps := []string{db + "." + viewOn}
	for _, r := range auth.PipelineRefs(db, bson.Value{Type: bson.TypeArray, Data: pipeline}) {
		if r.Coll != "" && r.Actions&auth.Find != 0 {
			deps = append(deps, r.DB+"."+r.Coll)
		}
	}
	return deps
}

// CheckViewGraph refuses the view db.name over viewOn with pipeline if it
// would make a cycle or a chain too deep.
func CheckViewGraph(tx *Tx, db, name, viewOn string, pipeline bson.Doc) error {
	g := &viewGraph{tx: tx, proposed: db + "." + name, refs: viewDeps(db, viewOn, pipeline), height: map[string]int{}}
	var cycle []string
	h, err := g.childrenHeight(g.proposed, 0, &cycle)
	if err != nil {
		if err == errViewCycle {
			var b strings.Builder
			b.WriteString("View cycle detected: ")
			for i := len(cycle) - 1; i >= 0; i-- {
				b.WriteString(cycle[i] + " => ")
			}
			b.WriteString(g.proposed)
			return mongoerr.New(mongoerr.GraphContainsCycle, "%s", b.String())
		}
		return err
	}
	ph, err := g.parentsHeight(g.proposed, 0, map[string]int{})
	if err != nil {
		return err
	}
	// h counts the collections at the bottom, ph the new view itself.
	if ph+(h-1)-1 > MaxViewDepth {
		return errViewDepth()
	}
	return nil
}

// errViewCycle is childrenHeight's report of a path back to the new view
// (checkViewGraph names the path in the error it answers).
var errViewCycle = errors.New("view cycle")

func errViewDepth() error {
	return mongoerr.New(mongoerr.ViewDepthLimitExceeded, "View depth limit exceeded; maximum depth is %d", MaxViewDepth)
}

// deps returns what ns depends on: the proposed view's references, a
// stored view's, or nothing for a collection (or a namespace that does
// not exist yet).
func (g *viewGraph) deps(ns string) ([]string, error) {
	if ns == g.proposed {
		return g.refs, nil
	}
	db, coll, _ := strings.Cut(ns, ".")
	c, err := catalog.Get(g.tx, db, coll)
	if err != nil || c == nil {
		return nil, err
	}
	viewOn, pipeline, ok := c.View()
	if !ok {
		return nil, nil
	}
	return viewDeps(db, viewOn, pipeline), nil
}

// childrenHeight is the height of ns over its dependencies (1 for a
// collection), failing on a path back to the proposed view; cycle
// collects the path's namespaces from the far end.
func (g *viewGraph) childrenHeight(ns string, depth int, cycle *[]string) (int, error) {
	if depth > 0 && ns == g.proposed {
		return 0, errViewCycle
	}
	if depth > MaxViewDepth {
		return 0, errViewDepth()
	}
	if h, ok := g.height[ns]; ok {
		return h, nil
	}
	deps, err := g.deps(ns)
	if err != nil {
		return 0, err
	}
	most := 0
	for _, d := range deps {
		h, err := g.childrenHeight(d, depth+1, cycle)
		if err != nil {
			if err == errViewCycle {
				*cycle = append(*cycle, ns)
			}
			return 0, err
		}
		most = max(most, h)
	}
	g.height[ns] = most + 1
	return most + 1, nil
}

// parentsHeight is the height of the views resting on ns, ns included.
func (g *viewGraph) parentsHeight(ns string, depth int, memo map[string]int) (int, error) {
	if depth > MaxViewDepth {
		return 0, errViewDepth()
	}
	if h, ok := memo[ns]; ok {
		return h, nil
	}
	if g.parents == nil {
		if err := g.loadParents(); err != nil {
			return 0, err
		}
	}
	most := 0
	for _, p := range g.parents[ns] {
		h, err := g.parentsHeight(p, depth+1, memo)
		if err != nil {
			return 0, err
		}
		most = max(most, h)
	}
	memo[ns] = most + 1
	return most + 1, nil
}

// loadParents builds the reverse edges of every stored view.
func (g *viewGraph) loadParents() error {
	g.parents = map[string][]string{}
	all, err := catalog.List(g.tx, "")
	if err != nil {
		return err
	}
	for _, c := range all {
		viewOn, pipeline, ok := c.View()
		if !ok || c.Namespace() == g.proposed {
			continue
		}
		for _, d := range viewDeps(c.DB, viewOn, pipeline) {
			g.parents[d] = append(g.parents[d], c.Namespace())
		}
	}
	return nil
}

// MaxViewDepth bounds chains of views, as MongoDB's ViewGraph::kMaxViewDepth
// (checked at creation by CheckViewGraph, and again when a view resolves).
const MaxViewDepth = 20

// ResolveView follows db.name through views down to a collection and
// returns its name and the views' pipelines, innermost first.
func ResolveView(tx *Tx, db, name string) (source string, stages []bson.Doc, isView bool, err error) {
	source = name
	for depth := 0; ; depth++ {
		coll, err := catalog.Get(tx, db, source)
		if err != nil || coll == nil {
			return source, stages, isView, err
		}
		viewOn, pipeline, ok := coll.View()
		if !ok {
			return source, stages, isView, nil
		}
		if depth >= MaxViewDepth {
			return "", nil, false, mongoerr.New(mongoerr.ViewDepthLimitExceeded, "View depth too deep or view cycle detected; maximum depth is %d", MaxViewDepth)
		}
		isView = true
		var own []bson.Doc
		it := pipeline.Iter()
		for it.Next() {
			own = append(own, append(bson.Doc(nil), it.Element().Value.Data...))
		}
		stages = append(own, stages...)
		source = viewOn
	}
}
