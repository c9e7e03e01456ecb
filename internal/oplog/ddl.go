package oplog

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/kv"
)

// The command entries of DDL, shaped as mongod 7.0's OpObserver writes
// them, each written in the transaction of the catalog change.

// Create logs the creation of coll: {create: name, <options>, idIndex}
// (a view: {create: name, viewOn, pipeline[, collation]}, without ui or
// idIndex).
func (l *Log) Create(tx *kv.Tx, coll *catalog.Collection) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	var b bson.Builder
	b.AppendString("create", coll.Name)
	it := coll.Options.Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
	if _, _, view := coll.View(); view {
		return l.Command(tx, coll.DB, nil, b.Finish(), nil)
	}
	for _, ix := range coll.Indexes {
		if ix.Name == "_id_" && !coll.Clustered() {
			b.AppendDocument("idIndex", ix.Spec)
		}
	}
	return l.Command(tx, coll.DB, &coll.UUID, b.Finish(), nil)
}

// Drop logs the drop of coll: {drop: name}.
func (l *Log) Drop(tx *kv.Tx, coll *catalog.Collection) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	var b bson.Builder
	b.AppendString("drop", coll.Name)
	return l.Command(tx, coll.DB, &coll.UUID, b.Finish(), nil)
}

// Rename logs renameCollection of src to toNS: {renameCollection, to,
// stayTemp[, dropTarget: <UUID of the dropped target>]}.
func (l *Log) Rename(tx *kv.Tx, src *catalog.Collection, toNS string, stayTemp bool, droppedTarget *[16]byte) error {
	if l == nil || !CollectionLogged(src) {
		return nil
	}
	var b bson.Builder
	b.AppendString("renameCollection", src.Namespace())
	b.AppendString("to", toNS)
	b.AppendBool("stayTemp", stayTemp)
	if droppedTarget != nil {
		b.AppendBinary("dropTarget", 4, droppedTarget[:])
	}
	return l.Command(tx, src.DB, &src.UUID, b.Finish(), nil)
}

// CreateIndex logs an index created at once (on an empty collection):
// {createIndexes: name, <spec fields>}.
func (l *Log) CreateIndex(tx *kv.Tx, coll *catalog.Collection, spec bson.Doc) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	var b bson.Builder
	b.AppendString("createIndexes", coll.Name)
	it := spec.Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
	return l.Command(tx, coll.DB, &coll.UUID, b.Finish(), nil)
}

// IndexBuild logs a step of a two-phase index build, as mongod does for
// a collection that has documents: what is "startIndexBuild",
// "commitIndexBuild" or "abortIndexBuild"; {<what>: name, indexBuildUUID,
// indexes: [specs][, cause: {ok: 0, code, codeName, errmsg}]}.
func (l *Log) IndexBuild(tx *kv.Tx, what string, coll *catalog.Collection, buildUUID [16]byte, specs []bson.Doc, cause bson.Doc) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	var b bson.Builder
	b.AppendString(what, coll.Name)
	b.AppendBinary("indexBuildUUID", 4, buildUUID[:])
	b.StartArray("indexes")
	for i, s := range specs {
		b.AppendDocument(bson.Index(i), s)
	}
	b.End()
	if cause != nil {
		b.AppendDocument("cause", cause)
	}
	return l.Command(tx, coll.DB, &coll.UUID, b.Finish(), nil)
}

// DropIndex logs the drop of coll's index name: {dropIndexes: coll,
// index: name}, o2 the index's specification.
func (l *Log) DropIndex(tx *kv.Tx, coll *catalog.Collection, name string, spec bson.Doc) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	var b bson.Builder
	b.AppendString("dropIndexes", coll.Name)
	b.AppendString("index", name)
	return l.Command(tx, coll.DB, &coll.UUID, b.Finish(), spec)
}

// CollMod logs collMod of coll: {collMod: name, <the changes>}.
func (l *Log) CollMod(tx *kv.Tx, coll *catalog.Collection, changes []bson.Element) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	var b bson.Builder
	b.AppendString("collMod", coll.Name)
	for _, e := range changes {
		b.AppendElement(e)
	}
	return l.Command(tx, coll.DB, &coll.UUID, b.Finish(), nil)
}

// DropDatabase logs {dropDatabase: 1}, after the drops of its collections.
func (l *Log) DropDatabase(tx *kv.Tx, db string) error {
	if l == nil || db == DB {
		return nil
	}
	var b bson.Builder
	b.AppendInt32("dropDatabase", 1)
	return l.Command(tx, db, nil, b.Finish(), nil)
}
