package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// defaultCacheSizeGB is mongod's default WiredTiger cache size: the larger
// of half of (RAM − 1 GiB) and 0.25 GiB. RAM is read from /proc/meminfo;
// where it cannot be read, 1 GiB.
func defaultCacheSizeGB() float64 {
	ram := memTotal()
	if ram == 0 {
		return 1
	}
	return max((float64(ram)/(1<<30)-1)/2, 0.25)
}

// memTotal is the memory cairnd may use, in bytes: the machine's RAM from
// /proc/meminfo, or the memory limit of its control group when that is
// lower (as mongod sizes its cache in a container); 0 where neither can be
// read.
func memTotal() int64 {
	return memTotalFrom("/proc/meminfo", "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
}

// memTotalFrom is memTotal reading the given files: meminfo, then the
// first of the cgroup limit files that exists (v2, v1).
func memTotalFrom(meminfo string, cgroupLimits ...string) int64 {
	ram := meminfoTotal(meminfo)
	for _, path := range cgroupLimits {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (ram == 0 || n < ram) {
			ram = n // "max" (no limit) does not parse
		}
		break
	}
	return ram
}

// meminfoTotal is MemTotal from a /proc/meminfo file in bytes (0 where it
// cannot be read).
func meminfoTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
