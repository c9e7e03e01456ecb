package conformance

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"
)

func bulkWrite(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	var models []mongo.WriteModel
	for i, r := range a.docs("requests") {
		m, err := writeModel(r)
		if err != nil {
			return opResult{}, fmt.Errorf("request %d: %w", i, err)
		}
		models = append(models, m)
	}
	opts := options.BulkWrite()
	if a.has("ordered") {
		opts.SetOrdered(a.bool("ordered"))
	}
	setBypass(opts, a)
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if l, ok := a.doc("let"); ok {
		opts.SetLet(l)
	}
	rawData(a, opts, xoptions.SetInternalBulkWriteOptions)
	return bulkWriteResult(coll.BulkWrite(ctx, models, opts)), nil
}

// singleKey splits a {kind: {...}} request document.
func singleKey(d bson.Raw) (string, *args, error) {
	elems, err := d.Elements()
	if err != nil || len(elems) != 1 {
		return "", nil, fmt.Errorf("model must have exactly one key: %s", d)
	}
	body, ok := elems[0].Value().DocumentOK()
	if !ok {
		return "", nil, fmt.Errorf("model %s is not a document", elems[0].Key())
	}
	return elems[0].Key(), newArgs(body), nil
}

func writeModel(r bson.Raw) (mongo.WriteModel, error) {
	kind, a, err := singleKey(r)
	if err != nil {
		return nil, err
	}
	var m mongo.WriteModel
	switch kind {
	case "insertOne":
		d, _ := a.doc("document")
		m = mongo.NewInsertOneModel().SetDocument(d)
	case "deleteOne":
		dm := mongo.NewDeleteOneModel().SetFilter(filterArg(a))
		setModelCollationHint(dm, a)
		m = dm
	case "deleteMany":
		dm := mongo.NewDeleteManyModel().SetFilter(filterArg(a))
		setModelCollationHint(dm, a)
		m = dm
	case "replaceOne":
		rep, _ := a.doc("replacement")
		rm := mongo.NewReplaceOneModel().SetFilter(filterArg(a)).SetReplacement(rep)
		setModelCollationHint(rm, a)
		setSort(rm, a)
		setUpsert(rm, a)
		m = rm
	case "updateOne":
		u, err := updateArg(a)
		if err != nil {
			return nil, err
		}
		um := mongo.NewUpdateOneModel().SetFilter(filterArg(a)).SetUpdate(u)
		setArrayFilters(um, a)
		setModelCollationHint(um, a)
		setSort(um, a)
		setUpsert(um, a)
		m = um
	case "updateMany":
		u, err := updateArg(a)
		if err != nil {
			return nil, err
		}
		um := mongo.NewUpdateManyModel().SetFilter(filterArg(a)).SetUpdate(u)
		setArrayFilters(um, a)
		setModelCollationHint(um, a)
		setUpsert(um, a)
		m = um
	default:
		return nil, fmt.Errorf("unknown write model %s", kind)
	}
	if err := a.done(); err != nil {
		return nil, skipf("%s model: %v", kind, err)
	}
	return m, nil
}

func clientBulkWrite(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	c, err := em.client(obj)
	if err != nil {
		return opResult{}, err
	}
	var writes []mongo.ClientBulkWrite
	for i, r := range a.docs("models") {
		w, err := clientWriteModel(r)
		if err != nil {
			return opResult{}, fmt.Errorf("model %d: %w", i, err)
		}
		writes = append(writes, w)
	}
	opts := options.ClientBulkWrite()
	if a.has("ordered") {
		opts.SetOrdered(a.bool("ordered"))
	}
	if a.has("verboseResults") {
		opts.SetVerboseResults(a.bool("verboseResults"))
	}
	setBypass(opts, a)
	if cm, ok := commentArg(a); ok {
		opts.SetComment(cm)
	}
	if l, ok := a.doc("let"); ok {
		opts.SetLet(l)
	}
	if d, ok := a.doc("writeConcern"); ok {
		wc, err := parseWriteConcern(d)
		if err != nil {
			return opResult{}, err
		}
		opts.SetWriteConcern(wc)
	}
	rawData(a, opts, xoptions.SetInternalClientBulkWriteOptions)
	return clientBulkWriteResult(c.client.BulkWrite(ctx, writes, opts)), nil
}

func clientWriteModel(r bson.Raw) (mongo.ClientBulkWrite, error) {
	kind, a, err := singleKey(r)
	if err != nil {
		return mongo.ClientBulkWrite{}, err
	}
	ns := a.str("namespace")
	db, coll, ok := strings.Cut(ns, ".")
	if !ok {
		return mongo.ClientBulkWrite{}, fmt.Errorf("bad namespace %q", ns)
	}
	upsert := func() *bool {
		if !a.has("upsert") {
			return nil
		}
		u := a.bool("upsert")
		return &u
	}
	collation := func() *options.Collation {
		c, _ := collationArg(a)
		return c
	}
	hint := func() any {
		h, _ := hintArg(a)
		return h
	}
	sort := func() any {
		if s, ok := a.doc("sort"); ok {
			return s
		}
		return nil
	}
	var m mongo.ClientWriteModel
	switch kind {
	case "insertOne":
		d, _ := a.doc("document")
		m = &mongo.ClientInsertOneModel{Document: d}
	case "deleteOne":
		m = &mongo.ClientDeleteOneModel{Filter: filterArg(a), Collation: collation(), Hint: hint()}
	case "deleteMany":
		m = &mongo.ClientDeleteManyModel{Filter: filterArg(a), Collation: collation(), Hint: hint()}
	case "replaceOne":
		rep, _ := a.doc("replacement")
		m = &mongo.ClientReplaceOneModel{Filter: filterArg(a), Replacement: rep, Collation: collation(),
			Hint: hint(), Upsert: upsert(), Sort: sort()}
	case "updateOne", "updateMany":
		u, err := updateArg(a)
		if err != nil {
			return mongo.ClientBulkWrite{}, err
		}
		af, _ := arrayFiltersArg(a)
		if kind == "updateOne" {
			m = &mongo.ClientUpdateOneModel{Filter: filterArg(a), Update: u, ArrayFilters: af,
				Collation: collation(), Hint: hint(), Upsert: upsert(), Sort: sort()}
		} else {
			m = &mongo.ClientUpdateManyModel{Filter: filterArg(a), Update: u, ArrayFilters: af,
				Collation: collation(), Hint: hint(), Upsert: upsert()}
		}
	default:
		return mongo.ClientBulkWrite{}, fmt.Errorf("unknown client write model %s", kind)
	}
	if err := a.done(); err != nil {
		return mongo.ClientBulkWrite{}, skipf("%s model: %v", kind, err)
	}
	return mongo.ClientBulkWrite{Database: db, Collection: coll, Model: m}, nil
}

// setModelCollationHint applies collation and hint to a write model.
func setModelCollationHint[M interface {
	SetCollation(*options.Collation) M
	SetHint(any) M
}](m M, a *args) {
	if c, ok := collationArg(a); ok {
		m.SetCollation(c)
	}
	if h, ok := hintArg(a); ok {
		m.SetHint(h)
	}
}
