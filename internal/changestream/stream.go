package changestream

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// Scope is what a stream watches: a collection (DB and Coll), a database
// (Coll "") or the deployment (Cluster).
type Scope struct {
	DB, Coll string
	Cluster  bool
}

// Stream is a change stream: an exec.Source whose documents are the
// events of the oplog after its position, passed through the pipeline's
// later stages. It holds no transaction between batches.
type Stream struct {
	kv  *kv.DB
	log *oplog.Log
	hub *Hub // nil: no sharing
	// shape (nil: none) holds the outputs this stream shares with the
	// identical streams of the hub (shape.go).
	shape *shape
	// committed is the commit point the stream delivers up to
	// (commit.go): the hub's, or the oplog's durable point.
	committed CommitPoint
	spec      *Spec
	db        string
	coll      string
	cluster   bool
	pipe      *agg.Pipeline
	// pos is the position the stream has delivered up to: every event
	// whose token is not after it has been returned or filtered out.
	pos Token
	// posDoc is pos's {_data} when known (the shared event's _id it came
	// from), nil otherwise.
	posDoc bson.Doc
	// ops (nil: any) and docID (nil: any) are the pushed-down parts of
	// the pipeline's leading $match.
	ops    map[string]bool
	docID  *bson.Value
	done   bool
	closed atomic.Bool // Close may race a getMore at shutdown (KillAll)
	b      bson.Builder
	own    builtEvent // the last event built into b
	// fillWall is the wall time (ms) of the first event the last Fill
	// returned (0: none or unknown): Linger holds a batch longer only
	// while that event is young.
	fillWall int64
	// Examined counts the oplog entries read (the pushdown's effect is
	// visible in it against the events returned).
	Examined int64
}

// Open starts a stream on scope at the spec's start (the end of the oplog
// when it has none), checking that the start is still in the oplog. hub
// (nil: none) is the server's shared cache and watch (hub.go). pipe (nil:
// none) is the pipeline's later stages and stages their specifications,
// whose leading $match is pushed down. Close the stream when done.
func Open(kvdb *kv.DB, log *oplog.Log, hub *Hub, scope Scope, spec *Spec, pipe *agg.Pipeline, stages []bson.Doc) (*Stream, error) {
	s, err := open(kvdb, log, scope, spec, pipe, stages)
	if err != nil {
		return nil, err
	}
	s.committed = log.Durable
	if hub != nil {
		s.hub, s.committed = hub, hub.opts.CommitPoint
		if key := s.shapeKey(stages); key != "" {
			s.shape = hub.joinShape(key)
		}
	}
	return s, nil
}

func open(kvdb *kv.DB, log *oplog.Log, scope Scope, spec *Spec, pipe *agg.Pipeline, stages []bson.Doc) (*Stream, error) {
	s := &Stream{kv: kvdb, log: log, spec: spec, db: scope.DB, coll: scope.Coll, cluster: scope.Cluster, pipe: pipe}
	if len(stages) > 0 {
		s.pushDown(stages[0])
	}
	tx, err := kvdb.BeginRead()
	if err != nil {
		return nil, fmt.Errorf("change stream: %w", err)
	}
	defer tx.Rollback()
	t, err := tx.Tree(log.TreeName())
	if err != nil {
		return nil, fmt.Errorf("change stream: %w", err)
	}
	first, last := repl.Timestamp(0), repl.Timestamp(0)
	if k, _ := t.Cursor().First(); k != nil {
		first = repl.Timestamp(binary.BigEndian.Uint64(k))
	}
	if k, _ := t.Cursor().Last(); k != nil {
		last = repl.Timestamp(binary.BigEndian.Uint64(k))
	}
	var start *Token
	switch {
	case spec.ResumeAfter != nil:
		start = spec.ResumeAfter
	case spec.StartAfter != nil:
		start = spec.StartAfter
	case spec.StartAtOperationTime != 0:
		h := hwm(spec.StartAtOperationTime)
		start = &h
	}
	if start == nil {
		s.pos = hwm(last + 1)
		return s, nil
	}
	if first == 0 || start.TS < first {
		return nil, mongoerr.New(mongoerr.ChangeStreamHistoryLost, "Resume of change stream was not possible, as the resume point may no longer be in the oplog.")
	}
	s.pos = *start
	return s, nil
}

// pushDown reads what the leading $match asks of operationType and
// documentKey._id when it asks for equality (or $in of strings for
// operationType): entries that cannot match are skipped unbuilt.
func (s *Stream) pushDown(stage bson.Doc) {
	first, ok := firstElement(stage)
	if !ok || first.Key != "$match" || first.Value.Type != bson.TypeDocument {
		return
	}
	it := first.Value.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "operationType":
			switch e.Value.Type {
			case bson.TypeString:
				s.ops = map[string]bool{e.Value.StringValue(): true}
			case bson.TypeDocument:
				d := e.Value.Document()
				in, ok := d.Lookup("$in")
				if d.Len() != 1 || !ok || in.Type != bson.TypeArray {
					continue
				}
				ops := map[string]bool{}
				ai := in.Document().Iter()
				for ai.Next() {
					if ai.Element().Value.Type != bson.TypeString {
						ops = nil
						break
					}
					ops[ai.Element().Value.StringValue()] = true
				}
				if ops != nil {
					s.ops = ops
				}
			}
		case "documentKey._id":
			switch e.Value.Type {
			case bson.TypeDocument, bson.TypeArray, bson.TypeRegex:
				// an operator, a document or array match, a regex: not
				// a plain equality
			default:
				v := bson.Value{Type: e.Value.Type, Data: append([]byte(nil), e.Value.Data...)}
				s.docID = &v
			}
		}
	}
}

// WatchTree is the kv tree whose commits wake the stream's awaiting
// getMore (the oplog's).
func (s *Stream) WatchTree() string { return s.log.TreeName() }

// PostBatchResumeToken is the token of the stream's position: the last
// event returned, or a high-water mark past every entry read.
func (s *Stream) PostBatchResumeToken() bson.Doc {
	if s.posDoc != nil {
		return s.posDoc
	}
	if s.hub != nil && s.pos.Type == highWaterMark {
		return s.hub.hwmDoc(s.pos.TS)
	}
	return s.pos.Doc()
}

// Changed returns the channel the next advance of the commit point closes
// (commit.go), shared by every stream of the server; nil once the stream
// is closed. Load it before Fill, wait on it after.
func (s *Stream) Changed() <-chan struct{} {
	if s.closed.Load() {
		return nil
	}
	_, ch := s.committed()
	return ch
}

// DefaultLingerEvents is the events a read must bring for its getMore to
// linger at all, DefaultLinger how long a getMore woken by an advance of
// the commit point lingers at least, and DefaultLingerAge how old the
// first event of a batch may grow while its getMore lingers
// (HubOptions.LingerEvents, Linger, LingerAge).
//
// A read that brings four events or more finds writers faster than the
// stream's round trips: four writes grouped in one journal flush or Raft
// commit, or a backlog that built up while the previous reply travelled.
// Each round trip costs the server and the client tens of microseconds
// of CPU whatever it carries, so such a getMore waits and reads once more
// before it answers: a woken one for DefaultLinger (its events are one
// flush old), or longer while its first event is younger than
// DefaultLingerAge; one that found the events waiting only while the
// first of them is younger than DefaultLingerAge. A stream already behind
// by more than that age is answered at once, which keeps the tail of the
// latency where it was; a paced writer whose writes each get their own
// flush (1,000 writes/s against a sub-millisecond fdatasync) brings one
// or two events per read and is answered at once.
const (
	DefaultLingerEvents = 4
	DefaultLinger       = 2 * time.Millisecond
	DefaultLingerAge    = 5 * time.Millisecond
)

// Linger implements exec.Lingerer: the policy of DefaultLinger above,
// with the hub's options; the first event's age is from its entry's wall
// time. Streams without a hub never linger, nor do any when the hub's
// Linger is negative.
func (s *Stream) Linger(n int64, woken bool) time.Duration {
	if s.hub == nil || s.hub.opts.Linger < 0 || n < s.hub.opts.LingerEvents {
		return 0
	}
	var d time.Duration
	if age := s.hub.opts.LingerAge; age > 0 && s.fillWall != 0 {
		d = min(max(time.Until(time.UnixMilli(s.fillWall).Add(age)), 0), age)
	}
	if woken {
		d = max(d, s.hub.opts.Linger)
	}
	return d
}

// Close implements exec.Source; it may be called more than once.
func (s *Stream) Close() {
	if !s.closed.Swap(true) && s.shape != nil {
		s.hub.leaveShape(s.shape)
	}
}

// Fill implements exec.Source: it reads the oplog from the stream's
// position in a new snapshot, emitting the events after the position
// until emit refuses one (which the next Fill derives again) or the
// entries up to the commit point (commit.go) are all read. It is
// exhausted once it has returned an invalidate.
func (s *Stream) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	s.fillWall = 0
	if s.done {
		return true, nil
	}
	commit, _ := s.committed() // before the snapshot: it holds every entry up to commit
	if commit < s.pos.TS {
		return false, nil // nothing committed after the position yet
	}
	tx, err := s.kv.BeginRead()
	if err != nil {
		return false, fmt.Errorf("change stream: %w", err)
	}
	defer tx.Rollback()
	t, err := tx.Tree(s.log.TreeName())
	if err != nil {
		return false, fmt.Errorf("change stream: %w", err)
	}
	cur := t.Cursor()
	var seek [8]byte
	binary.BigEndian.PutUint64(seek[:], uint64(s.pos.TS))
	k, v := cur.Seek(seek[:])
	if k == nil && s.pos.TS != 0 {
		// Nothing at or after the position; the position is kept.
		return false, cur.Err()
	}
	if s.pos.Type == eventToken && (k == nil || binary.BigEndian.Uint64(k) != uint64(s.pos.TS)) {
		if first, _ := cur.First(); first == nil || binary.BigEndian.Uint64(first) > uint64(s.pos.TS) {
			return false, mongoerr.New(mongoerr.ChangeStreamHistoryLost, "Resume of change stream was not possible, as the resume point may no longer be in the oplog.")
		}
	}
	stopped := false
	out := func(be *builtEvent) (bool, error) {
		tok := be.tok
		if tok.Compare(s.pos) <= 0 {
			return true, nil // delivered before
		}
		doc := be.doc
		if s.pipe != nil {
			var err error
			if s.shape != nil && be.shared {
				doc, err = s.sharedTransform(be)
			} else {
				doc, err = s.transform(be.doc, tok)
			}
			if err != nil {
				return false, err
			}
		}
		if doc != nil {
			if !emit(doc) {
				stopped = true
				return false, nil
			}
			if s.fillWall == 0 {
				s.fillWall = be.wall
			}
		}
		s.pos, s.posDoc = tok, be.tokDoc
		if tok.FromInvalidate {
			s.done = true
			return false, nil
		}
		return true, nil
	}
	for n := 0; k != nil; k, v = cur.Next() {
		if n++; n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return false, mongoerr.FromContext(err)
			}
		}
		ts := repl.Timestamp(binary.BigEndian.Uint64(k))
		if ts > commit {
			break // not majority-committed yet: a later batch reads it
		}
		s.Examined++
		var e *entry
		if s.hub != nil {
			e = s.hub.entry(ts, bson.Doc(v))
		} else {
			e = decodeEntry(ts, bson.Doc(v), false)
		}
		cont, err := s.entryEvents(tx, e, out)
		if err != nil {
			return false, err
		}
		if !cont {
			return s.done && !stopped, nil
		}
		if next := hwm(ts + 1); next.Compare(s.pos) > 0 {
			s.pos, s.posDoc = next, nil
		}
	}
	if err := cur.Err(); err != nil {
		return false, fmt.Errorf("change stream: reading the oplog: %w", err)
	}
	if next := hwm(commit + 1); next.Compare(s.pos) > 0 {
		// Every entry at or before the commit point has been read: the
		// post-batch token advances with it, matching or not.
		s.pos, s.posDoc = next, nil
	}
	return false, nil
}

// transform runs the pipeline's later stages over one event: nil when
// they filter it out. An event whose _id the stages changed fails the
// stream (ChangeStreamFatalError, not resumable), as mongod.
func (s *Stream) transform(ev bson.Doc, tok Token) (bson.Doc, error) {
	it, err := s.pipe.Run(&agg.SliceIterator{Docs: []bson.Doc{ev}})
	if err != nil {
		return nil, err
	}
	doc, err := it.Next()
	if err != nil || doc == nil {
		return nil, err
	}
	id, ok := doc.Lookup("_id")
	want := tok.Doc()
	if !ok || id.Type != bson.TypeDocument || string(id.Document()) != string(want) {
		found := "nothing"
		if ok {
			found = id.String()
		}
		e := mongoerr.New(mongoerr.ChangeStreamFatalError, "Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed. Expected: %s but found: %s", want.String(), found)
		e.Extra = nonResumableLabel
		return nil, e
	}
	return doc, nil
}

var nonResumableLabel = func() []byte {
	var b bson.Builder
	b.StartArray("errorLabels")
	b.AppendString("0", "NonResumableChangeStreamError")
	b.End()
	return b.Finish()
}()

// Resumable reports whether a getMore's error on a change stream gets the
// ResumableChangeStreamError label (mongod's ErrorLabelBuilder): network,
// retriable and retargeting errors, RetryChangeStream and
// FailedToSatisfyReadPreference.
func Resumable(code int32) bool {
	return mongoerr.InCategory(code, mongoerr.CategoryRetriableError) ||
		mongoerr.InCategory(code, mongoerr.CategoryNetworkError) ||
		mongoerr.InCategory(code, mongoerr.CategoryNeedRetargettingError) ||
		code == mongoerr.RetryChangeStream || code == mongoerr.FailedToSatisfyReadPreference
}

// ResumableLabel returns err with the ResumableChangeStreamError label
// when Resumable says so (err itself otherwise).
func ResumableLabel(err error) error {
	e := mongoerr.As(err)
	if e == nil || !Resumable(e.Code) || len(e.Extra) > 0 {
		return err
	}
	var b bson.Builder
	b.StartArray("errorLabels")
	b.AppendString("0", "ResumableChangeStreamError")
	b.End()
	return &mongoerr.Error{Code: e.Code, Message: e.Message, Extra: b.Finish()}
}

var (
	_ exec.Source   = (*Stream)(nil)
	_ exec.Lingerer = (*Stream)(nil)
)
