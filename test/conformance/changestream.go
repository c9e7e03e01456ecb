package conformance

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var changeStreamOps = map[string]opFunc{
	"iterateUntilDocumentOrError": iterateChangeStream(false),
	"iterateOnce":                 iterateChangeStream(true),
	"close":                       closeChangeStream,
}

// createChangeStream opens a change stream on a client, database or
// collection entity.
func createChangeStream(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	pipeline := pipelineArg(a)
	opts := options.ChangeStream()
	if a.has("batchSize") {
		opts.SetBatchSize(int32(a.int("batchSize")))
	}
	if c, ok := commentArg(a); ok {
		opts.SetComment(c)
	}
	if a.has("fullDocument") {
		opts.SetFullDocument(options.FullDocument(a.str("fullDocument")))
	}
	if a.has("fullDocumentBeforeChange") {
		opts.SetFullDocumentBeforeChange(options.FullDocument(a.str("fullDocumentBeforeChange")))
	}
	if a.has("showExpandedEvents") {
		opts.SetShowExpandedEvents(a.bool("showExpandedEvents"))
	}
	if d, ok := a.doc("resumeAfter"); ok {
		opts.SetResumeAfter(d)
	}
	if d, ok := a.doc("startAfter"); ok {
		opts.SetStartAfter(d)
	}
	if v := a.raw("startAtOperationTime"); !isMissing(v) {
		t, i, ok := v.TimestampOK()
		if !ok {
			return opResult{}, fmt.Errorf("startAtOperationTime: want a timestamp, got %s", v.Type)
		}
		opts.SetStartAtOperationTime(&bson.Timestamp{T: t, I: i})
	}
	if a.has("maxAwaitTimeMS") {
		opts.SetMaxAwaitTime(time.Duration(a.int("maxAwaitTimeMS")) * time.Millisecond)
	}
	var (
		cs  *mongo.ChangeStream
		err error
	)
	switch em.kind(obj) {
	case "client":
		c, _ := em.client(obj)
		cs, err = c.client.Watch(ctx, pipeline, opts)
	case "database":
		cs, err = em.dbs[obj].Watch(ctx, pipeline, opts)
	case "collection":
		cs, err = em.colls[obj].Watch(ctx, pipeline, opts)
	default:
		return opResult{}, fmt.Errorf("createChangeStream on a %s", em.kind(obj))
	}
	if err != nil {
		return opResult{err: err}, nil
	}
	return opResult{stream: cs}, nil
}

// iterateChangeStream returns the next change: iterateOnce tries one
// getMore (a missing document is no error), iterateUntilDocumentOrError
// waits for one.
func iterateChangeStream(once bool) opFunc {
	return func(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
		cs, ok := em.streams[obj]
		if !ok {
			return opResult{}, fmt.Errorf("no change stream entity %q", obj)
		}
		var got bool
		if once {
			got = cs.TryNext(ctx)
		} else {
			got = cs.Next(ctx)
		}
		if got {
			return opResult{value: docValue(cloneRaw(cs.Current))}, nil
		}
		if err := cs.Err(); err != nil {
			return opResult{err: err}, nil
		}
		if once {
			return opResult{}, nil
		}
		return opResult{err: fmt.Errorf("change stream closed")}, nil
	}
}

func closeChangeStream(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	cs, ok := em.streams[obj]
	if !ok {
		return opResult{}, fmt.Errorf("no change stream entity %q", obj)
	}
	_ = cs.Close(ctx)
	return opResult{}, nil
}
