package session

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/ioshape/ioshape/internal/event"
)

// SetParentDeathSignal does nothing: macOS has no parent-death signal.
func SetParentDeathSignal() {}

// commandProcAttr starts the target command in a session of its own for an
// app launch, else in a process group of its own (macOS has no
// parent-death signal: the helper ends the group when it is told to).
func commandProcAttr(detach, _ bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: detach, Setpgid: !detach}
}

// TracerProcAttr starts a tracer in ioshape's process group.
func TracerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// OnEachCPU does nothing and returns 0: macOS cannot pin a thread to a CPU,
// and its tracers need no flush marks.
func OnEachCPU(func()) int { return 0 }

// DropCaches empties the file cache with purge(8).
func DropCaches() error {
	syscall.Sync()
	if out, err := exec.Command("purge").CombinedOutput(); err != nil {
		return fmt.Errorf("cannot empty the file cache with purge: %w %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ProcessExists reports whether a process is alive.
func ProcessExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// PidsNamed asks pgrep for processes with exactly this name.
func PidsNamed(name string) []int {
	out, _ := exec.Command("pgrep", "-x", name).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// DescribeDevices names device numbers by their numbers: macOS has no
// sysfs to ask.
func DescribeDevices(devs []event.Dev) []event.Device {
	var out []event.Device
	for _, d := range devs {
		out = append(out, event.Device{Major: d.Major, Minor: d.Minor, Name: d.String()})
	}
	return out
}

// IOCgroup is "" on macOS: no cgroups.
func IOCgroup(pid int) (path string, v1 bool) { return "", false }

// BioBasedDevices is empty on macOS: the Linux block layer's notion.
func BioBasedDevices(sysBlock string) []uint32 { return nil }
