package host

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// WithDisk is the device alone: macOS traces name a partition's I/O by
// the partition.
func WithDisk(d event.Dev) []event.Dev { return []event.Dev{d} }

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

// IOThrottled is false on macOS: no cgroups.
func IOThrottled(path string) bool { return false }

// StealTime: macOS reports no hypervisor's steal.
func StealTime() (time.Duration, bool) { return 0, false }
