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
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				break
			}
			return max((kb/(1<<20)-1)/2, 0.25)
		}
	}
	return 1
}
