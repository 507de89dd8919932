package tracer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

func setParentDeathSignal() {
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
}

// tracerProcAttr: if ioshape dies, bpftrace gets SIGINT and exits cleanly.
func tracerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
}

func monotonicNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

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
		return fmt.Errorf("the kernel's tracing file system is not mounted and mounting it failed (%v): run 'mount -t tracefs nodev %s'", err, tracefsDir)
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

// dropCaches writes dirty data back and empties the page cache, so the
// target's reads reach the drive as on a cold start.
func dropCaches() error {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0); err != nil {
		return fmt.Errorf("cannot drop the page cache: %v", err)
	}
	return nil
}

// describeDevices names device numbers from sysfs and the mount table.
func describeDevices(devs []event.Dev) []tracefile.Device {
	mounts := map[string][2]string{}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// id parent major:minor root mountpoint opts... - fstype source superopts
			fs := strings.Fields(sc.Text())
			sep := -1
			for i, x := range fs {
				if x == "-" {
					sep = i
					break
				}
			}
			if len(fs) > 4 && sep > 0 && sep+1 < len(fs) {
				if _, ok := mounts[fs[2]]; !ok {
					mounts[fs[2]] = [2]string{fs[4], fs[sep+1]}
				}
			}
		}
		f.Close()
	}
	var out []tracefile.Device
	for _, d := range devs {
		td := tracefile.Device{Major: d.Major, Minor: d.Minor, Name: d.String()}
		sys := fmt.Sprintf("/sys/dev/block/%d:%d", d.Major, d.Minor)
		if real, err := filepath.EvalSymlinks(sys); err == nil {
			td.Name = filepath.Base(real)
			if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
				td.Disk = filepath.Base(filepath.Dir(real))
			}
		}
		if m, ok := mounts[d.String()]; ok {
			td.Mount, td.FSType = m[0], m[1]
			if td.Name == d.String() {
				td.Name = m[1] + ":" + m[0]
			}
		}
		out = append(out, td)
	}
	return out
}

// processExists reports whether a process (or thread) id is alive.
func processExists(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// pidsNamed lists running processes whose name (comm) is name.
func pidsNamed(name string) []int {
	des, _ := os.ReadDir("/proc")
	var out []int
	want := commOf(name)
	for _, de := range des {
		var pid int
		if _, err := fmt.Sscanf(de.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", de.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == want {
			out = append(out, pid)
		}
	}
	return out
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
