package cairndproc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPU returns the CPU time (user + system) process pid has used so far.
// It sums the nanosecond run times of the process's threads
// (/proc/PID/task/*/schedstat), which are precise enough to time one
// index build or one query; where schedstat is unavailable it falls back
// to the process's utime+stime from /proc/PID/stat (10 ms clock ticks,
// including threads that have exited). It returns 0 when pid is unknown.
func CPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	root := filepath.Join("/proc", strconv.Itoa(pid))
	if tasks, err := os.ReadDir(filepath.Join(root, "task")); err == nil {
		var ns int64
		ok := len(tasks) > 0
		for _, t := range tasks {
			b, err := os.ReadFile(filepath.Join(root, "task", t.Name(), "schedstat"))
			f := strings.Fields(string(b))
			if err != nil || len(f) == 0 {
				ok = false
				break
			}
			v, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				ok = false
				break
			}
			ns += v
		}
		if ok {
			return time.Duration(ns)
		}
	}
	return StatCPU(pid)
}

// StatCPU returns process pid's utime+stime from /proc/PID/stat (clock
// ticks of 10 ms, threads that exited included); 0 when unknown.
func StatCPU(pid int) time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// Fields after the command name (which ends with ')'): utime and
	// stime are the 14th and 15th fields of the line.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * (time.Second / 100)
}
