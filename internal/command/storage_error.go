package command

import (
	"errors"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// asMongoErr is mongoerr.As for errors that may come from the storage
// engine: a write refused for lack of disk space (kv.ErrNoSpace) is
// OutOfDiskSpace (14031), as mongod reports it (the write may be retried
// once space is freed); other engine errors are InternalError.
func asMongoErr(err error) *mongoerr.Error {
	var e *mongoerr.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, kv.ErrNoSpace) {
		return &mongoerr.Error{Code: mongoerr.OutOfDiskSpace, Message: err.Error()}
	}
	return mongoerr.As(err)
}
