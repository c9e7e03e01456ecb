package command

// setClusterParameter and getClusterParameter for the one cluster
// parameter Cairn has, changeStreamOptions ({preAndPostImages:
// {expireAfterSeconds: <seconds> | "off"}}): how long pre-images are kept
// (internal/oplog/preimage.go). It is stored with the oplog, so it
// survives restarts, as mongod's config.clusterParameters document.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
)

const changeStreamOptions = "changeStreamOptions"

func setClusterParameter(c *Ctx) error {
	a := newArgs(c)
	if err := a.check(); err != nil {
		return err
	}
	if c.Env.Oplog == nil {
		return mongoerr.New(mongoerr.IllegalOperation, "setClusterParameter cannot be run on standalones")
	}
	first := a.first()
	if first.Type != bson.TypeDocument {
		return a.wrongType("setClusterParameter", first, "object")
	}
	param := first.Document()
	el, ok := firstElementOf(param)
	if !ok || param.Len() != 1 {
		return mongoerr.New(mongoerr.IllegalOperation, "Cluster parameter value must be a document with exactly one field, the parameter's name")
	}
	if el.Key != changeStreamOptions {
		return mongoerr.New(mongoerr.NoSuchKey, "Unknown Cluster Parameter %s", el.Key)
	}
	if el.Value.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'changeStreamOptions' is the wrong type '%s', expected type 'object'", el.Value.Type)
	}
	opts, err := parseChangeStreamOptions(el.Value.Document())
	if err != nil {
		return err
	}
	l := c.Env.Oplog
	if err := c.writeTx(exec.Sync, func(tx *exec.Tx) error { return l.SaveChangeStreamOptions(tx, opts) }); err != nil {
		return err
	}
	l.SetPreImageExpiry(oplog.ExpiryOf(opts))
	return nil
}

// parseChangeStreamOptions checks changeStreamOptions and returns it as
// stored: {preAndPostImages: {expireAfterSeconds: <long> | "off"}}.
func parseChangeStreamOptions(d bson.Doc) (bson.Doc, error) {
	var b bson.Builder
	b.StartDocument("preAndPostImages")
	expire := false
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != "preAndPostImages" {
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'changeStreamOptions.%s' is an unknown field.", e.Key)
		}
		if e.Value.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'changeStreamOptions.preAndPostImages' is the wrong type '%s', expected type 'object'", e.Value.Type)
		}
		pit := e.Value.Document().Iter()
		for pit.Next() {
			pe := pit.Element()
			if pe.Key != "expireAfterSeconds" {
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'changeStreamOptions.preAndPostImages.%s' is an unknown field.", pe.Key)
			}
			switch n, isNum := pe.Value.AsInt64(); {
			case pe.Value.Type == bson.TypeString && pe.Value.StringValue() == "off":
				b.AppendString("expireAfterSeconds", "off")
			case pe.Value.IsNumber() && isNum && n > 0:
				b.AppendInt64("expireAfterSeconds", n)
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "Expected 'expireAfterSeconds' to be either 'off' or a positive number, but found %s", pe.Value.String())
			}
			expire = true
		}
	}
	if !expire {
		b.AppendString("expireAfterSeconds", "off")
	}
	b.End()
	return b.Finish(), nil
}

func getClusterParameter(c *Ctx) error {
	a := newArgs(c)
	if err := a.check(); err != nil {
		return err
	}
	if c.Env.Oplog == nil {
		return mongoerr.New(mongoerr.IllegalOperation, "getClusterParameter cannot be run on standalones")
	}
	var names []string
	switch first := a.first(); first.Type {
	case bson.TypeString:
		names = []string{first.StringValue()}
	case bson.TypeArray:
		it := first.Document().Iter()
		for it.Next() {
			if it.Element().Value.Type != bson.TypeString {
				return a.wrongType("getClusterParameter", first, "string or array of strings")
			}
			names = append(names, it.Element().Value.StringValue())
		}
	default:
		return a.wrongType("getClusterParameter", first, "string or array of strings")
	}
	for _, n := range names {
		if n != "*" && n != changeStreamOptions {
			return mongoerr.New(mongoerr.NoSuchKey, "Unknown Cluster Parameter %s", n)
		}
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	opts, err := c.Env.Oplog.LoadChangeStreamOptions(tx)
	if err != nil {
		return err
	}
	if opts == nil {
		opts, _ = parseChangeStreamOptions(nil)
	}
	r := c.Reply
	r.StartArray("clusterParameters")
	r.StartDocument("0")
	r.AppendString("_id", changeStreamOptions)
	it := opts.Iter()
	for it.Next() {
		r.AppendElement(it.Element())
	}
	r.End()
	r.End()
	return nil
}

func firstElementOf(d bson.Doc) (bson.Element, bool) {
	it := d.Iter()
	if !it.Next() {
		return bson.Element{}, false
	}
	return it.Element(), true
}
