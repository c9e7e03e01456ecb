package kv

import (
	"bytes"
	"os"
	"slices"
	"syscall"
)

func sortSlice(keys [][]byte) { slices.SortFunc(keys, bytes.Compare) }

func datasyncFile(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
