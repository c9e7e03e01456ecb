package command

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// writeCmd is what insert, update and delete share: the target
// collection, the write concern, ordered, and the statements (from the
// command body or an OP_MSG document sequence).
type writeCmd struct {
	name    string
	wc      writeConcern
	ordered bool
	stmts   []bson.Doc
	cancel  context.CancelFunc // releases maxTimeMS; always call
}

// parseWriteCmd reads a write command whose statements are in field,
// accepting the extra top-level fields given, and checks every statement's
// shape against spec (nil: documents to insert, checked on insert).
func parseWriteCmd(c *Ctx, field string, spec map[string]stmtField, extra ...string) (*writeCmd, error) {
	a := newArgs(c)
	if err := a.Check(append([]string{field, "ordered"}, extra...)...); err != nil {
		return nil, err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return nil, err
	}
	if err := catalog.ValidateCollectionName(c.DB, name); err != nil {
		return nil, err
	}
	w := &writeCmd{name: name, ordered: true}
	if w.wc, err = parseWriteConcern(c); err != nil {
		return nil, err
	}
	if v, ok, err := a.Boolean("ordered"); err != nil {
		return nil, err
	} else if ok {
		w.ordered = v
	}
	stmts, ok, err := c.Docs(field)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.%s' is missing but a required field", c.Name, field)
	}
	if n := len(stmts); n == 0 || n > MaxWriteBatchSize {
		return nil, mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", MaxWriteBatchSize, n)
	}
	if spec != nil {
		if err := checkStatements(c.Name, field, stmts, spec); err != nil {
			return nil, err
		}
	}
	w.stmts = stmts
	if w.cancel, err = withMaxTime(c); err != nil {
		return nil, err
	}
	return w, nil
}

// run applies each statement with apply, collecting per-statement errors
// (an ordered command stops at the first); engine failures and
// interruptions (killOp, maxTimeMS) end the command, as mongod's
// interruptions fail the whole batch, and its transaction is then rolled
// back: an interrupted write command writes none of its statements.
func (w *writeCmd) run(apply func(i int, st bson.Doc) error) ([]writeError, error) {
	var errs []writeError
	for i, st := range w.stmts {
		if err := apply(i, st); err != nil {
			if isFatal(err) || mongoerr.IsInterruption(err) {
				return nil, err
			}
			errs = append(errs, writeError{index: i, err: asMongoErr(err)})
			if w.ordered {
				break
			}
		}
	}
	return errs, nil
}

// copyValue detaches v from the buffer it points into.
func copyValue(v bson.Value) bson.Value {
	return bson.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)}
}

// fatal makes a statement's error end the whole command (w.run treats
// only bare *mongoerr.Error as a statement's error).
func fatal(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w", err)
}
