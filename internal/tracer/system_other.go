//go:build !linux

package tracer

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

var errNotLinux = errors.New("the bpftrace backend runs on Linux only")

func setParentDeathSignal()                {}
func tracerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
func monotonicNow() int64                  { return time.Now().UnixNano() }

// kernelRelease is uname -r.
func kernelRelease() string {
	out, _ := exec.Command("uname", "-r").Output()
	return strings.TrimSpace(string(out))
}
func ensureTracefs() error         { return errNotLinux }
func missingTracepoints() []string { return nil }

// dropCaches empties the file cache: purge(8) on macOS.
func dropCaches() error {
	syscall.Sync()
	if runtime.GOOS != "darwin" {
		return errNotLinux
	}
	if out, err := exec.Command("purge").CombinedOutput(); err != nil {
		return fmt.Errorf("cannot empty the file cache with purge: %v %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// pidsNamed asks pgrep for processes with exactly this name.
func pidsNamed(name string) []int {
	out, _ := exec.Command("pgrep", "-x", name).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}
func describeDevices(devs []event.Dev) []tracefile.Device {
	var out []tracefile.Device
	for _, d := range devs {
		out = append(out, tracefile.Device{Major: d.Major, Minor: d.Minor, Name: d.String()})
	}
	return out
}

func probeMisses(pid int) (int64, bool) { return 0, false }
