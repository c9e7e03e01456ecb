package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// measureFloor times floorWrites bare write(keySize+valueSize bytes) +
// fdatasync calls at consecutive offsets of a file in dir that was
// preallocated by writing zeros and syncing (so no write changes its size or
// its extent map: fdatasync flushes data only). It is the least a durable
// commit of one small record can cost on this disk.
func measureFloor(dir string) (time.Duration, error) {
	path := filepath.Join(dir, "floor")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, fmt.Errorf("floor: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	size := int64(floorWrites*floorRecordSize+4095) &^ 4095
	if _, err := f.Write(make([]byte, size)); err != nil {
		return 0, fmt.Errorf("floor: preallocate: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("floor: sync: %w", err)
	}
	rec := make([]byte, floorRecordSize)
	for i := range rec {
		rec[i] = byte(i*7 + 1)
	}
	fd := int(f.Fd())
	start := time.Now()
	for i := range floorWrites {
		if _, err := unix.Pwrite(fd, rec, int64(i*floorRecordSize)); err != nil {
			return 0, fmt.Errorf("floor: write: %w", err)
		}
		if err := unix.Fdatasync(fd); err != nil {
			return 0, fmt.Errorf("floor: fdatasync: %w", err)
		}
	}
	return time.Since(start), nil
}
