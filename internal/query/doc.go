// Package query implements MongoDB's query language over raw BSON documents:
// filters (ParseFilter, Filter.Match), projections (ParseProjection), sort
// orders (ParseSort) and update specifications (ParseUpdate), with the
// semantics, error codes and messages of MongoDB 7.0.
//
// Every specification is compiled once into a tree of small matcher or
// action nodes; evaluating it against a document walks the raw bytes in
// place and, for the common equality and range predicates, does not
// allocate.
//
// Paths follow MongoDB's rules: a dotted path descends through embedded
// documents, traverses arrays implicitly (each element that is a document is
// searched for the rest of the path), and a numeric component names both an
// array position and a field called by that number. A missing field compares
// equal to null.
package query
