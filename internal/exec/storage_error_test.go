package exec

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

func TestAsMongoErrMapsStorageErrors(t *testing.T) {
	noSpace := &kv.NoSpaceError{Need: 1 << 20, Pages: 128, File: "data", Err: syscall.ENOSPC}
	cases := []struct {
		name string
		err  error
		code int32
	}{
		{"out of disk space", fmt.Errorf("kv: commit 7: %w", noSpace), mongoerr.OutOfDiskSpace},
		{"coded error kept", fmt.Errorf("wrapped: %w", mongoerr.New(mongoerr.DuplicateKey, "dup")), mongoerr.DuplicateKey},
		{"database failed", fmt.Errorf("%w: fdatasync: EIO", kv.ErrDatabaseFailed), mongoerr.InternalError},
		{"other", errors.New("boom"), mongoerr.InternalError},
	}
	for _, c := range cases {
		e := AsMongoErr(c.err)
		if e.Code != c.code || e.Message != c.err.Error() && c.code != mongoerr.DuplicateKey {
			t.Errorf("%s: code %d (%s) message %q, want code %d", c.name, e.Code, e.CodeName(), e.Message, c.code)
		}
	}
	if n := mongoerr.CodeName(mongoerr.OutOfDiskSpace); n != "OutOfDiskSpace" {
		t.Errorf("code name %q", n)
	}
}
