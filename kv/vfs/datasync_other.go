//go:build !linux

package vfs

import "os"

func datasync(f *os.File) error { return f.Sync() }
