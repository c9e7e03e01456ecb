package oplog

import (
	"syscall"
)

// The default size, as mongod's: 5 % of the free disk space of the data
// directory's file system, at least 990 MB and at most 50 GB.
const (
	MB             = 1 << 20
	MinDefaultSize = 990 * MB
	MaxDefaultSize = 50 * 1024 * MB
	// MinResizeMB and MaxResizeMB bound replSetResizeOplog's size.
	MinResizeMB = 990
	MaxResizeMB = 1 << 30 // 1 PB
)

// DefaultSize returns mongod's default oplog size for a data directory.
func DefaultSize(dir string) int64 {
	var st syscall.Statfs_t
	free := int64(0)
	if err := syscall.Statfs(dir, &st); err == nil {
		free = int64(st.Bavail) * int64(st.Bsize)
	}
	return min(max(free/20, MinDefaultSize), MaxDefaultSize)
}
