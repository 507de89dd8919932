package bench

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// deviceReads reads a block device's completed reads and the time they
// took from /sys/class/block/DEV/stat; ok is false where it cannot.
func deviceReads(dev string) (reads, bool) {
	if dev == "" || strings.ContainsAny(dev, "/.") {
		return reads{}, false
	}
	f, err := os.Open(filepath.Join("/sys/class/block", dev, "stat"))
	if err != nil {
		return reads{}, false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1024)) // 17 numbers
	return parseDiskStat(string(b))
}

// parseDiskStat takes the reads and their milliseconds (the first and
// fourth fields) from a block device's stat.
func parseDiskStat(s string) (reads, bool) {
	f := strings.Fields(s)
	if len(f) < 4 {
		return reads{}, false
	}
	ios, err1 := strconv.ParseInt(f[0], 10, 64)
	ms, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || ios < 0 || ms < 0 {
		return reads{}, false
	}
	return reads{ios: ios, ms: float64(ms)}, true
}

// threadRunDelay is how long the calling thread has waited on a run
// queue, runnable but not running (µs): the second field of
// /proc/thread-self/schedstat. ok is false where it cannot be read.
func threadRunDelay() (us float64, ok bool) {
	f, err := os.Open("/proc/thread-self/schedstat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 256)) // three numbers
	return parseRunDelay(string(b))
}

// parseRunDelay takes the run-queue wait (ns, given in µs) from a
// schedstat line: time on the CPU, time waiting for it, timeslices.
func parseRunDelay(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || ns < 0 {
		return 0, false
	}
	return float64(ns) / 1e3, true
}
