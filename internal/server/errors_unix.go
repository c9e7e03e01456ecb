package server

import "syscall"

// errTooManyFiles is what accept returns when the process is out of file
// descriptors; the listener backs off and retries instead of exiting.
var errTooManyFiles = syscall.EMFILE
