package command

// Atlas Search index management: createSearchIndexes, updateSearchIndex and
// dropSearchIndex (and the $listSearchIndexes stage, refused in agg) exist
// in mongod 7.0 only to be passed on to Atlas's search index manager
// (searchIndexManagementHostAndPort). Without one, mongod parses the request
// and then answers CommandNotSupported (115) "Search index commands are
// only supported with Atlas."; Cairn has no search index manager, so it
// answers the same after the same checks of the request.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// errSearchIndexes is mongod 7.0's answer without a search index manager.
func errSearchIndexes() error {
	return mongoerr.New(mongoerr.CommandNotSupported, "Search index commands are only supported with Atlas.")
}

// searchIndexCommand checks a search index command's request as mongod's
// IDL does (the collection, the fields it takes and their types) and
// answers that Atlas is needed.
func searchIndexCommand(c *Ctx) error {
	a := newArgs(c)
	if _, err := c.CollectionArg(); err != nil {
		return err
	}
	switch c.Name {
	case "createSearchIndexes":
		if err := a.Check("indexes"); err != nil {
			return err
		}
		idx, ok, err := a.Array("indexes")
		if err != nil {
			return err
		}
		if !ok {
			return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'createSearchIndexes.indexes' is missing but a required field")
		}
		it := idx.Iter()
		for it.Next() {
			if err := checkSearchIndexSpec(it.Element().Value); err != nil {
				return err
			}
		}
	case "updateSearchIndex":
		if err := a.Check("id", "name", "definition"); err != nil {
			return err
		}
		if err := searchIndexTarget(a); err != nil {
			return err
		}
		if _, ok, err := a.Doc("definition"); err != nil {
			return err
		} else if !ok {
			return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'updateSearchIndex.definition' is missing but a required field")
		}
	case "dropSearchIndex":
		if err := a.Check("id", "name"); err != nil {
			return err
		}
		if err := searchIndexTarget(a); err != nil {
			return err
		}
	}
	return errSearchIndexes()
}

// searchIndexTarget checks id and name, the index a command names.
func searchIndexTarget(a args) error {
	for _, f := range []string{"id", "name"} {
		if _, _, err := a.Str(f); err != nil {
			return err
		}
	}
	return nil
}

// checkSearchIndexSpec checks one of createSearchIndexes' indexes:
// {name?: string, type?: string, definition: object}.
func checkSearchIndexSpec(v bson.Value) error {
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'createSearchIndexes.indexes' is the wrong type '%s', expected type 'object'", v.Type)
	}
	spec := args{Cmd: "createSearchIndexes.indexes", Body: v.Document()}
	hasDef := false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "name", "type":
			if e.Value.Type != bson.TypeString {
				return spec.WrongType(e.Key, e.Value, "string")
			}
		case "definition":
			if e.Value.Type != bson.TypeDocument {
				return spec.WrongType(e.Key, e.Value, "object")
			}
			hasDef = true
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'createSearchIndexes.indexes.%s' is an unknown field.", e.Key)
		}
	}
	if !hasDef {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'createSearchIndexes.indexes.definition' is missing but a required field")
	}
	return nil
}
