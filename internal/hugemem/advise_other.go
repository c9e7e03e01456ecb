//go:build !linux

package hugemem

import "unsafe"

func adviseHuge(p unsafe.Pointer, n uintptr) {}
