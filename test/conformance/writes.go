package conformance

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"
)

// updateArg returns an update document or an update pipeline.
func updateArg(a *args) (any, error) {
	v := a.raw("update")
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return v.Document(), nil
	case bson.TypeArray:
		return a.docs("update"), nil
	}
	return nil, fmt.Errorf("update must be a document or a pipeline, got %s", v.Type)
}

func arrayFiltersArg(a *args) ([]any, bool) {
	if !a.has("arrayFilters") {
		return nil, false
	}
	docs := a.docs("arrayFilters")
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = d
	}
	return out, true
}

func insertOne(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	doc, _ := a.doc("document")
	opts := options.InsertOne()
	setBypass(opts, a)
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	rawData(a, opts, xoptions.SetInternalInsertOneOptions)
	return insertOneResult(coll.InsertOne(ctx, doc, opts)), nil
}

func insertMany(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	docs := a.docs("documents")
	opts := options.InsertMany()
	ordered := true
	if a.has("ordered") {
		ordered = a.bool("ordered")
		opts.SetOrdered(ordered)
	}
	setBypass(opts, a)
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	rawData(a, opts, xoptions.SetInternalInsertManyOptions)
	res, err := coll.InsertMany(ctx, docs, opts)
	return insertManyResult(res, len(docs), ordered, err), nil
}

func deleteOne(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	return deleteWith(ctx, em, obj, a, options.DeleteOne(), xoptions.SetInternalDeleteOneOptions, (*mongo.Collection).DeleteOne)
}

func deleteMany(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	return deleteWith(ctx, em, obj, a, options.DeleteMany(), xoptions.SetInternalDeleteManyOptions, (*mongo.Collection).DeleteMany)
}

// deleteOptions are the option setters deleteOne and deleteMany share; O
// is the options type the builder B lists.
type deleteOptions[O, B any] interface {
	selectionOptions[B]
	SetLet(any) B
	options.Lister[O]
}

// deleteWith runs deleteOne or deleteMany (del) with the arguments both
// take; internal sets the driver's internal options (rawData).
func deleteWith[O any, B deleteOptions[O, B]](ctx context.Context, em *entityMap, obj string, a *args, opts B,
	internal func(B, string, any) error, del func(*mongo.Collection, context.Context, any, ...options.Lister[O]) (*mongo.DeleteResult, error)) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	setSelectionOptions(opts, a)
	setLet(opts, a)
	rawData(a, opts, internal)
	return deleteResult(del(coll, ctx, filter, opts)), nil
}

func updateOne(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	opts := options.UpdateOne()
	setSort(opts, a)
	return updateWith(ctx, em, obj, a, opts, xoptions.SetInternalUpdateOneOptions, (*mongo.Collection).UpdateOne)
}

func updateMany(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	return updateWith(ctx, em, obj, a, options.UpdateMany(), xoptions.SetInternalUpdateManyOptions, (*mongo.Collection).UpdateMany)
}

// updateOptions are the option setters updateOne and updateMany share; O
// is the options type the builder B lists.
type updateOptions[O, B any] interface {
	deleteOptions[O, B]
	SetArrayFilters([]any) B
	SetBypassDocumentValidation(bool) B
	SetUpsert(bool) B
}

// updateWith runs updateOne or updateMany (upd) with the arguments both
// take; internal sets the driver's internal options (rawData).
func updateWith[O any, B updateOptions[O, B]](ctx context.Context, em *entityMap, obj string, a *args, opts B,
	internal func(B, string, any) error, upd func(*mongo.Collection, context.Context, any, any, ...options.Lister[O]) (*mongo.UpdateResult, error)) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	update, err := updateArg(a)
	if err != nil {
		return opResult{}, err
	}
	setArrayFilters(opts, a)
	setBypass(opts, a)
	setSelectionOptions(opts, a)
	setLet(opts, a)
	setUpsert(opts, a)
	rawData(a, opts, internal)
	return updateResult(upd(coll, ctx, filter, update, opts)), nil
}

func replaceOne(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	replacement, _ := a.doc("replacement")
	opts := options.Replace()
	setBypass(opts, a)
	setSelectionOptions(opts, a)
	setLet(opts, a)
	setSort(opts, a)
	setUpsert(opts, a)
	rawData(a, opts, xoptions.SetInternalReplaceOptions)
	return updateResult(coll.ReplaceOne(ctx, filter, replacement, opts)), nil
}

func findOneAndDelete(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	opts := options.FindOneAndDelete()
	setSelectionOptions(opts, a)
	setLet(opts, a)
	if p, ok := a.doc("projection"); ok {
		opts.SetProjection(p)
	}
	setSort(opts, a)
	rawData(a, opts, xoptions.SetInternalFindOneAndDeleteOptions)
	return singleDocResult(coll.FindOneAndDelete(ctx, filter, opts)), nil
}

func findOneAndReplace(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	replacement, _ := a.doc("replacement")
	opts := options.FindOneAndReplace()
	if err := setFindAndModifyOptions(opts, a); err != nil {
		return opResult{}, err
	}
	rawData(a, opts, xoptions.SetInternalFindOneAndReplaceOptions)
	return singleDocResult(coll.FindOneAndReplace(ctx, filter, replacement, opts)), nil
}

func findOneAndUpdate(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	coll, err := em.collection(obj)
	if err != nil {
		return opResult{}, err
	}
	filter := filterArg(a)
	update, err := updateArg(a)
	if err != nil {
		return opResult{}, err
	}
	opts := options.FindOneAndUpdate()
	setArrayFilters(opts, a)
	if err := setFindAndModifyOptions(opts, a); err != nil {
		return opResult{}, err
	}
	rawData(a, opts, xoptions.SetInternalFindOneAndUpdateOptions)
	return singleDocResult(coll.FindOneAndUpdate(ctx, filter, update, opts)), nil
}

// findAndModifyOptions is what findOneAndReplace's and findOneAndUpdate's
// option builders share.
type findAndModifyOptions[B any] interface {
	SetBypassDocumentValidation(bool) B
	SetCollation(*options.Collation) B
	SetComment(any) B
	SetHint(any) B
	SetLet(any) B
	SetProjection(any) B
	SetSort(any) B
	SetUpsert(bool) B
	SetReturnDocument(options.ReturnDocument) B
}

// setFindAndModifyOptions applies the arguments both operations take.
func setFindAndModifyOptions[B findAndModifyOptions[B]](opts B, a *args) error {
	setBypass(opts, a)
	setSelectionOptions(opts, a)
	setLet(opts, a)
	if p, ok := a.doc("projection"); ok {
		opts.SetProjection(p)
	}
	setSort(opts, a)
	setUpsert(opts, a)
	rd, ok, err := returnDocumentArg(a)
	if err != nil {
		return err
	}
	if ok {
		opts.SetReturnDocument(rd)
	}
	return nil
}

// selectionOptions are the option setters of every operation that selects
// documents by a filter.
type selectionOptions[B any] interface {
	SetCollation(*options.Collation) B
	SetComment(any) B
	SetHint(any) B
}

// setSelectionOptions applies the collation, comment and hint arguments.
func setSelectionOptions[B selectionOptions[B]](opts B, a *args) {
	if c, ok := collationArg(a); ok {
		opts.SetCollation(c)
	}
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if h, ok := hintArg(a); ok {
		opts.SetHint(h)
	}
}

// setBypass applies bypassDocumentValidation.
func setBypass[B interface{ SetBypassDocumentValidation(bool) B }](opts B, a *args) {
	if a.has("bypassDocumentValidation") {
		opts.SetBypassDocumentValidation(a.bool("bypassDocumentValidation"))
	}
}

// setUpsert applies upsert.
func setUpsert[B interface{ SetUpsert(bool) B }](opts B, a *args) {
	if a.has("upsert") {
		opts.SetUpsert(a.bool("upsert"))
	}
}

// setArrayFilters applies arrayFilters.
func setArrayFilters[B interface{ SetArrayFilters([]any) B }](opts B, a *args) {
	if f, ok := arrayFiltersArg(a); ok {
		opts.SetArrayFilters(f)
	}
}

// setSort applies sort.
func setSort[B interface{ SetSort(any) B }](opts B, a *args) {
	if s, ok := a.doc("sort"); ok {
		opts.SetSort(s)
	}
}

// setLet applies the let argument.
func setLet[B interface{ SetLet(any) B }](opts B, a *args) {
	if l, ok := a.doc("let"); ok {
		opts.SetLet(l)
	}
}
