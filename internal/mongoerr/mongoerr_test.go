package mongoerr

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/kv"
)

func TestAsMapsStorageErrors(t *testing.T) {
	noSpace := &kv.NoSpaceError{Need: 1 << 20, Pages: 128, File: "data", Err: syscall.ENOSPC}
	cases := []struct {
		name string
		err  error
		code int32
	}{
		{"out of disk space", fmt.Errorf("kv: commit 7: %w", noSpace), OutOfDiskSpace},
		{"coded error kept", fmt.Errorf("wrapped: %w", New(DuplicateKey, "dup")), DuplicateKey},
		{"database failed", fmt.Errorf("%w: fdatasync: EIO", kv.ErrDatabaseFailed), InternalError},
		{"other", errors.New("boom"), InternalError},
	}
	for _, c := range cases {
		e := As(c.err)
		if e.Code != c.code || e.Message != c.err.Error() && c.code != DuplicateKey {
			t.Errorf("%s: code %d (%s) message %q, want code %d", c.name, e.Code, e.CodeName(), e.Message, c.code)
		}
	}
	if n := CodeName(OutOfDiskSpace); n != "OutOfDiskSpace" {
		t.Errorf("code name %q", n)
	}
}
