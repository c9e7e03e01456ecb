package serverstatus

import (
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
)

// AppendHostInfo appends hostInfo's reply fields to r: the machine (time,
// host name, memory, cores, architecture), its operating system and the
// Go version Cairn runs on.
func AppendHostInfo(r *bson.Builder) {
	host, _ := os.Hostname()
	r.StartDocument("system")
	r.AppendDateTime("currentTime", time.Now().UnixMilli())
	r.AppendString("hostname", host)
	r.AppendInt32("cpuAddrSize", 64)
	r.AppendInt64("memSizeMB", int64(totalMemoryBytes()>>20))
	r.AppendInt32("numCores", int32(runtime.NumCPU()))
	r.AppendString("cpuArch", runtime.GOARCH)
	r.AppendBool("numaEnabled", false)
	r.End()
	r.StartDocument("os")
	r.AppendString("type", strings.ToUpper(runtime.GOOS[:1])+runtime.GOOS[1:])
	r.AppendString("name", runtime.GOOS)
	r.End()
	r.StartDocument("extra")
	r.AppendString("goVersion", runtime.Version())
	r.End()
}

// totalMemoryBytes reads MemTotal from /proc/meminfo (0 if unavailable).
func totalMemoryBytes() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb uint64
			for _, ch := range strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")) {
				if ch >= '0' && ch <= '9' {
					kb = kb*10 + uint64(ch-'0')
				}
			}
			return kb << 10
		}
	}
	return 0
}
