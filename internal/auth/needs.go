package auth

import "github.com/cairndb/cairn/bson"

// What a command needs under access control. Every command declares the
// actions it requires on the request's database (or the cluster); a few
// whose needs depend on their arguments (aggregate with $out or $merge,
// explain, renameCollection, dataSize, create and collMod of views, the
// write commands with upserts) are refined here, from the request's parts
// the command layer hands in (Request).

// Request is a command as access control reads it.
type Request struct {
	// Name is the command's canonical name, DB the request's database,
	// Body the request, Needs the actions the command declares (0: every
	// action, so that a command without a declaration fails closed).
	Name  string
	DB    string
	Body  bson.Doc
	Needs Action
	// Statements returns the documents of a write command's statements
	// in body (an array field or an OP_MSG document sequence; nil if
	// unreadable).
	Statements func(body bson.Doc, field string) []bson.Doc
	// DataSizeNS is the namespace dataSize's body names (ok false:
	// unreadable).
	DataSizeNS func(body bson.Doc) (db, coll string, ok bool)
	// Lookup finds a command by the name a client used: its canonical
	// name and declared needs (explain's inner command).
	Lookup func(name string) (canonical string, needs Action, ok bool)
}

// NeedsRefined lists the commands declared Authenticated whose real
// requirement depends on their arguments.
func NeedsRefined(name string) bool { return name == "explain" }

// Requirements is what the command r, with its arguments, needs.
func Requirements(r Request) []Need {
	actions := r.Needs
	if actions == 0 {
		actions = AllActions
	}
	db, coll := r.DB, r.collection()
	switch r.Name {
	case "explain":
		inner, ok := r.Body.Lookup("explain")
		if !ok || inner.Type != bson.TypeDocument {
			return nil // the command answers the bad argument
		}
		it := inner.Document().Iter()
		if !it.Next() {
			return nil
		}
		name, needs, ok := r.Lookup(it.Element().Key)
		if !ok || name == "explain" {
			return nil
		}
		ir := r
		ir.Name, ir.Needs, ir.Body = name, needs, inner.Document()
		return Requirements(ir)
	case "aggregate":
		// find on the database, and everything the pipeline involves at
		// any depth (pipeline.go).
		fr := r
		fr.Needs = Find
		out := []Need{{DB: r.DB, Coll: fr.collection(), Actions: Find}}
		p, _ := r.Body.Lookup("pipeline")
		return append(out, PipelineNeeds(r.DB, p)...)
	case "update":
		if r.upserts("updates") {
			actions |= Insert
		}
	case "findAndModify":
		if v, ok := r.Body.Lookup("remove"); ok && v.Truthy() {
			actions = Find | Remove
		} else if v, ok := r.Body.Lookup("upsert"); ok && v.Truthy() {
			actions |= Insert
		}
	case "renameCollection":
		from, _ := r.Body.Lookup("renameCollection")
		to, _ := r.Body.Lookup("to")
		return RenameNeeds(r.DB, from, to)
	case "dataSize":
		// find on the namespace named, whatever the request's database.
		if d, cl, ok := r.DataSizeNS(r.Body); ok {
			db, coll = d, cl
		}
	case "create", "collMod":
		return append([]Need{{DB: db, Coll: coll, Actions: actions}}, ViewNeeds(r.DB, r.Body)...)
	}
	return []Need{{DB: db, Coll: coll, Actions: actions}}
}

// collection is the collection the command acts on when its first field
// names one (user and role management name a user or role there), so
// that a privilege on that collection alone grants it.
func (r Request) collection() string {
	const names = CreateUser | DropUser | CreateRole | DropRole
	if r.Needs&names != 0 || r.Needs&DBActions == 0 {
		return ""
	}
	if it := r.Body.Iter(); it.Next() && it.Element().Value.Type == bson.TypeString {
		return it.Element().Value.StringValue()
	}
	return ""
}

// upserts reports whether any statement of a write command upserts.
func (r Request) upserts(field string) bool {
	for _, s := range r.Statements(r.Body, field) {
		if v, ok := s.Lookup("upsert"); ok && v.Truthy() {
			return true
		}
	}
	return false
}
