package bpftrace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

const tracefsDir = "/sys/kernel/tracing"

// ensureTracefs mounts tracefs if the kernel has it but nobody mounted it
// (as on some minimal VMs): bpftrace needs it for tracepoints.
func ensureTracefs() error {
	if _, err := os.Stat(filepath.Join(tracefsDir, "events")); err == nil {
		return nil
	}
	if _, err := os.Stat("/sys/kernel/debug/tracing/events"); err == nil {
		return nil
	}
	if err := unix.Mount("nodev", tracefsDir, "tracefs", 0, ""); err != nil {
		return fmt.Errorf("the kernel's tracing file system is not mounted and mounting it failed (%w): run 'mount -t tracefs nodev %s'", err, tracefsDir)
	}
	return nil
}

func missingTracepoints() []string {
	base := filepath.Join(tracefsDir, "events")
	if _, err := os.Stat(base); err != nil {
		base = "/sys/kernel/debug/tracing/events"
	}
	return missingTracepointsIn(base)
}

// probeMisses sums the kernel's recursion_misses over the BPF programs a
// process holds: firings the kernel skipped because another BPF program was
// running on the same CPU. Each is an event lost without a trace in the
// tracer's own output.
func probeMisses(pid int) (int64, bool) {
	dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	var total int64
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil || !strings.Contains(string(b), "prog_type:") {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "recursion_misses:"); ok {
				var n int64
				fmt.Sscan(strings.TrimSpace(v), &n)
				total += n
			}
		}
	}
	return total, true
}

// markCPU is the call the script's flush-mark probe catches.
func markCPU(self int) { unix.Getpgid(self) }

// degradeSyscalls is the call the script's degrading probe waits for.
func degradeSyscalls() { unix.Getpgid(0) }
