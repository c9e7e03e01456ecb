package command

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// heldHits holds the answers of a query computed at once, in one read
// snapshot, on first use ($text, $near, $geoNear): they are kept in
// memory and handed on in order, by Fills or to a pipeline.
type heldHits[H any] struct {
	env      *Env
	db, coll string
	// load computes the answers in tx; coll is nil when the collection
	// does not exist.
	load func(ctx context.Context, tx *kv.Tx, coll *catalog.Collection) ([]H, error)
	ran  bool
	hits []H
	pos  int
	buf  []byte
}

func (s *heldHits[H]) Close() { s.hits = nil }

// ensure computes the answers once.
func (s *heldHits[H]) ensure(ctx context.Context) error {
	if s.ran {
		return nil
	}
	tx, err := snapshotOf(ctx, s.env)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, s.db, s.coll)
	if err != nil {
		return err
	}
	if s.hits, err = s.load(ctx, tx, coll); err != nil {
		return err
	}
	s.ran = true
	return nil
}

// next returns the next answer, or nil after the last.
func (s *heldHits[H]) next(ctx context.Context) (*H, error) {
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
func (s *heldHits[H]) fill(ctx context.Context, spec *exec.FindSpec, raw bool, doc func(*H) (bson.Doc, *query.MatchDetails), emit func(bson.Doc) bool) (bool, error) {
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
