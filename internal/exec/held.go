package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// HeldHits holds the answers of a query computed at once, in one read
// snapshot, on first use ($text, $near, $geoNear): they are kept in
// memory and handed on in order, by Fills or to a pipeline.
type HeldHits[H any] struct {
	Env      *Engine
	DB, Coll string
	// Load computes the answers in tx; coll is nil when the collection
	// does not exist.
	Load func(ctx context.Context, tx *kv.Tx, coll *catalog.Collection) ([]H, error)
	ran  bool
	hits []H
	pos  int
	buf  []byte
}

func (s *HeldHits[H]) Close() { s.hits = nil }

// ensure computes the answers once.
func (s *HeldHits[H]) ensure(ctx context.Context) error {
	if s.ran {
		return nil
	}
	tx, err := SnapshotOf(ctx, s.Env)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, s.DB, s.Coll)
	if err != nil {
		return err
	}
	if s.hits, err = s.Load(ctx, tx, coll); err != nil {
		return err
	}
	s.ran = true
	return nil
}

// NextHit returns the next answer, or nil after the last.
func (s *HeldHits[H]) NextHit(ctx context.Context) (*H, error) {
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	if s.pos >= len(s.hits) {
		return nil, nil
	}
	h := s.hits[s.pos]
	var zero H
	s.hits[s.pos] = zero
	s.pos++
	return &h, nil
}

// fill hands the answers on as a find's documents (Source.Fill): doc gives
// an answer's document and match details, which spec's projection
// applies to unless raw. An answer emit refuses is offered again by the
// next fill.
func (s *HeldHits[H]) fill(ctx context.Context, spec *FindSpec, raw bool, doc func(*H) (bson.Doc, *query.MatchDetails), emit func(bson.Doc) bool) (bool, error) {
	if err := s.ensure(ctx); err != nil {
		return false, err
	}
	for s.pos < len(s.hits) {
		out, md := doc(&s.hits[s.pos])
		if spec.Proj != nil && !raw {
			var err error
			if out, err = spec.Proj.Apply(s.buf[:0], out, md); err != nil {
				return false, err
			}
			s.buf = out
		}
		if !emit(out) {
			return false, nil
		}
		var zero H
		s.hits[s.pos] = zero
		s.pos++
	}
	return true, nil
}

// Matches applies filter to d, turning an expression that failed while
// evaluating ($expr) into the operation's error, as MongoDB fails the
// whole operation.
func Matches(filter *query.Filter, d bson.Doc, md *query.MatchDetails) (bool, error) {
	if filter.MatchDetails(d, md) {
		return true, nil
	}
	return false, md.Err
}
