package conformance

import (
	"errors"
	"sort"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// opResult is what an operation produced.
type opResult struct {
	value  bson.RawValue // a single value or document; missing if none
	docs   []bson.Raw    // the documents of an iterated result
	iter   bool          // docs (not value) is the result
	cursor *mongo.Cursor // createFindCursor: saved as an entity
	stream *mongo.ChangeStream
	coll   *mongo.Collection // createCollection: saved as an entity
	err    error
}

// resultValue is the result as one BSON value (iterated results become an
// array).
func (r opResult) resultValue() bson.RawValue {
	if r.iter {
		return arrayValue(r.docs)
	}
	return r.value
}

func mustValue(v any) bson.RawValue {
	t, data, err := bson.MarshalValue(v)
	if err != nil {
		panic(err)
	}
	return bson.RawValue{Type: t, Value: data}
}

func valueResult(v any, err error) opResult {
	return opResult{value: mustValue(v), err: err}
}

// idValue converts an _id returned by the driver into a value for a result
// document.
func idValue(id any) any {
	if id == nil {
		return nil
	}
	return id
}

func insertOneResult(res *mongo.InsertOneResult, err error) opResult {
	if res == nil {
		return opResult{err: err}
	}
	if !res.Acknowledged {
		return valueResult(bson.D{{Key: "acknowledged", Value: false}}, err)
	}
	return valueResult(bson.D{{Key: "insertedId", Value: idValue(res.InsertedID)}}, err)
}

// insertManyResult renders InsertManyResult; on a BulkWriteException it
// renders the BulkWriteResult the CRUD spec puts in the exception, counting
// the inserted documents from the server's write errors.
func insertManyResult(res *mongo.InsertManyResult, n int, ordered bool, err error) opResult {
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) {
		inserted := n - len(bwe.WriteErrors)
		if ordered && len(bwe.WriteErrors) > 0 {
			inserted = bwe.WriteErrors[0].Index
		}
		return valueResult(bson.D{
			{Key: "insertedCount", Value: int64(inserted)},
			{Key: "deletedCount", Value: int64(0)},
			{Key: "matchedCount", Value: int64(0)},
			{Key: "modifiedCount", Value: int64(0)},
			{Key: "upsertedCount", Value: int64(0)},
			{Key: "upsertedIds", Value: bson.D{}},
		}, err)
	}
	if res == nil || err != nil {
		return opResult{err: err}
	}
	if !res.Acknowledged {
		return valueResult(bson.D{{Key: "acknowledged", Value: false}}, nil)
	}
	ids := bson.D{}
	for i, id := range res.InsertedIDs {
		ids = append(ids, bson.E{Key: strconv.Itoa(i), Value: idValue(id)})
	}
	return valueResult(bson.D{{Key: "insertedIds", Value: ids}}, nil)
}

func updateResult(res *mongo.UpdateResult, err error) opResult {
	if res == nil {
		return opResult{err: err}
	}
	if !res.Acknowledged {
		return valueResult(bson.D{{Key: "acknowledged", Value: false}}, err)
	}
	d := bson.D{
		{Key: "matchedCount", Value: res.MatchedCount},
		{Key: "modifiedCount", Value: res.ModifiedCount},
		{Key: "upsertedCount", Value: res.UpsertedCount},
	}
	if res.UpsertedID != nil {
		d = append(d, bson.E{Key: "upsertedId", Value: res.UpsertedID})
	}
	return valueResult(d, err)
}

func deleteResult(res *mongo.DeleteResult, err error) opResult {
	if res == nil {
		return opResult{err: err}
	}
	if !res.Acknowledged {
		return valueResult(bson.D{{Key: "acknowledged", Value: false}}, err)
	}
	return valueResult(bson.D{{Key: "deletedCount", Value: res.DeletedCount}}, err)
}

func bulkWriteResult(res *mongo.BulkWriteResult, err error) opResult {
	if res == nil {
		return opResult{err: err}
	}
	// The driver's result holds the batches that succeeded before a
	// server's error: a write error, a command error or a network error
	// (after the retry), as the Go driver's own runner renders it. A
	// client-side error (an invalid model) carries none.
	var bwe mongo.BulkWriteException
	var se mongo.ServerError
	if err != nil && !errors.As(err, &bwe) && !errors.As(err, &se) && !mongo.IsNetworkError(err) {
		return opResult{err: err}
	}
	if !res.Acknowledged && err == nil {
		return valueResult(bson.D{{Key: "acknowledged", Value: false}}, err)
	}
	idx := make([]int64, 0, len(res.UpsertedIDs))
	for i := range res.UpsertedIDs {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	ups := bson.D{}
	for _, i := range idx {
		ups = append(ups, bson.E{Key: strconv.FormatInt(i, 10), Value: res.UpsertedIDs[i]})
	}
	return valueResult(bson.D{
		{Key: "insertedCount", Value: res.InsertedCount},
		{Key: "deletedCount", Value: res.DeletedCount},
		{Key: "matchedCount", Value: res.MatchedCount},
		{Key: "modifiedCount", Value: res.ModifiedCount},
		{Key: "upsertedCount", Value: res.UpsertedCount},
		{Key: "upsertedIds", Value: ups},
	}, err)
}

func clientBulkWriteResult(res *mongo.ClientBulkWriteResult, err error) opResult {
	var cbe mongo.ClientBulkWriteException
	if errors.As(err, &cbe) {
		res = cbe.PartialResult
	}
	if res == nil {
		return opResult{err: err}
	}
	if !res.Acknowledged {
		return valueResult(bson.D{{Key: "acknowledged", Value: false}}, err)
	}
	ins := bson.D{}
	for _, i := range sortedKeys(res.InsertResults) {
		ins = append(ins, bson.E{Key: strconv.Itoa(i), Value: bson.D{{Key: "insertedId", Value: res.InsertResults[i].InsertedID}}})
	}
	upd := bson.D{}
	for _, i := range sortedKeys(res.UpdateResults) {
		u := res.UpdateResults[i]
		d := bson.D{{Key: "matchedCount", Value: u.MatchedCount}, {Key: "modifiedCount", Value: u.ModifiedCount}}
		if u.UpsertedID != nil {
			d = append(d, bson.E{Key: "upsertedId", Value: u.UpsertedID})
		}
		upd = append(upd, bson.E{Key: strconv.Itoa(i), Value: d})
	}
	del := bson.D{}
	for _, i := range sortedKeys(res.DeleteResults) {
		del = append(del, bson.E{Key: strconv.Itoa(i), Value: bson.D{{Key: "deletedCount", Value: res.DeleteResults[i].DeletedCount}}})
	}
	d := bson.D{
		{Key: "insertedCount", Value: res.InsertedCount},
		{Key: "upsertedCount", Value: res.UpsertedCount},
		{Key: "matchedCount", Value: res.MatchedCount},
		{Key: "modifiedCount", Value: res.ModifiedCount},
		{Key: "deletedCount", Value: res.DeletedCount},
	}
	// Summary-only results carry no per-operation maps.
	if res.HasVerboseResults {
		d = append(d, bson.E{Key: "insertResults", Value: ins}, bson.E{Key: "updateResults", Value: upd},
			bson.E{Key: "deleteResults", Value: del})
	}
	return valueResult(d, err)
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// singleDocResult renders a SingleResult: the document, or null when
// nothing matched.
func singleDocResult(sr *mongo.SingleResult) opResult {
	raw, err := sr.Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return opResult{value: bson.RawValue{Type: bson.TypeNull}}
	}
	if err != nil {
		return opResult{err: err}
	}
	return opResult{value: docValue(raw)}
}
