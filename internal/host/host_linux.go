package host

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/event"
)

// DropCaches writes dirty data back and empties the page cache, so the
// target's reads reach the drive as on a cold start.
func DropCaches() error {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0); err != nil {
		return fmt.Errorf("cannot drop the page cache: %w", err)
	}
	return nil
}

// DescribeDevices names device numbers from sysfs and the mount table.
func DescribeDevices(devs []event.Dev) []event.Device {
	if len(devs) == 0 {
		return nil
	}
	mounts := mountTable()
	var out []event.Device
	for _, d := range devs {
		td := event.Device{Major: d.Major, Minor: d.Minor, Name: d.String()}
		sys := fmt.Sprintf("/sys/dev/block/%d:%d", d.Major, d.Minor)
		if real, err := filepath.EvalSymlinks(sys); err == nil {
			td.Name = filepath.Base(real)
			disk := real
			if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
				td.Disk = filepath.Base(filepath.Dir(real))
				disk = filepath.Dir(real)
			}
			// A bio-based driver (zram, brd) has no request queue: no mq.
			if _, err := os.Stat(filepath.Join(disk, "mq")); err != nil {
				if _, err := os.Stat(filepath.Join(disk, "queue")); err == nil {
					td.BioBased = true
				}
			}
			td.Lower = loopLower(disk)
		}
		if m, ok := mounts[d.String()]; ok {
			td.Mount, td.FSType, td.Mounts = m.first, m.fstype, m.others
			if td.Name == d.String() {
				td.Name = m.fstype + ":" + m.first
			}
		}
		out = append(out, td)
	}
	return out
}

// loopLower is the device a loop device's backing file is on, and its
// disk if that is a partition (a disk's requests name the disk); nil for
// another device, or a file on no block device (FUSE, tmpfs).
func loopLower(sysDisk string) []event.Dev {
	f, err := os.Open(filepath.Join(sysDisk, "loop", "backing_file"))
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4096)) // a path: PATH_MAX
	f.Close()
	var st unix.Stat_t
	if err := unix.Stat(strings.TrimSuffix(string(b), "\n"), &st); err != nil {
		return nil
	}
	d := event.Dev{Major: unix.Major(uint64(st.Dev)), Minor: unix.Minor(uint64(st.Dev))}
	if d.Major == 0 { // anonymous: FUSE, tmpfs, overlay
		return nil
	}
	return WithDisk(d)
}

// WithDisk is a device and, for a partition, the whole disk it is on
// (/sys/dev/block/M:m/partition says which it is).
func WithDisk(d event.Dev) []event.Dev {
	out := []event.Dev{d}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", d.Major, d.Minor)
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		// The kernel resolves ".." past the symlink to the partition's
		// directory, under its disk's; filepath.Join would drop both.
		if dev, ok := readDev(sys + "/../dev"); ok {
			out = append(out, event.DevFromKernel(uint64(dev)))
		}
	}
	return out
}

// ProcessExists reports whether a process (or thread) id is alive.
func ProcessExists(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// PidsNamed lists running processes whose name (comm) is name.
func PidsNamed(name string) []int {
	des, _ := os.ReadDir("/proc")
	var out []int
	want := Comm(name)
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

// IOCgroup is the cgroup that governs pid's block I/O — the blkio
// controller's (cgroup v1) or the unified hierarchy's (v2) — or "" for the
// root or when it cannot be read. A drive behind a cgroup's I/O limits is
// another drive: `bench` and `record` keep it so that `predict` pairs a
// trace with the profile measured under the same limits.
//
// v1 says the cgroup is the legacy blkio controller's, which does not see
// buffered writeback: the flusher threads write in the root cgroup, past
// its limits.
func IOCgroup(pid int) (path string, v1 bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", false
	}
	return ioCgroupOf(string(b))
}

func ioCgroupOf(procCgroup string) (string, bool) {
	var unified string
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "blkio" || c == "io" {
				return nonRoot(parts[2]), c == "blkio"
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	return nonRoot(unified), false
}

func nonRoot(p string) string {
	if p == "/" {
		return ""
	}
	return p
}

// IOThrottled says whether the cgroup at path (as IOCgroup gives it)
// limits block I/O — blkio.throttle.* (v1) or io.max (v2) in it or an
// ancestor — so that the block layer sees its bios only once the limits
// let them through. The root ("") is not. A cgroup that cannot be read
// (gone, or another machine's) is taken as throttled.
func IOThrottled(path string) bool {
	if path == "" {
		return false
	}
	if strings.Contains(path, "..") {
		return true
	}
	found := false
	for p := filepath.Clean("/" + path); p != "/"; p = filepath.Dir(p) {
		files := []string{"/sys/fs/cgroup" + p + "/io.max", "/sys/fs/cgroup/unified" + p + "/io.max"}
		for _, limit := range []string{"read_bps_device", "write_bps_device", "read_iops_device", "write_iops_device"} {
			files = append(files, "/sys/fs/cgroup/blkio"+p+"/blkio.throttle."+limit)
		}
		for _, f := range files {
			b, err := readSmall(f)
			if err != nil {
				continue
			}
			found = true
			if !allMax(string(b)) {
				return true
			}
		}
	}
	return !found
}

// allMax says no line sets a limit: none at all (v1's files list only
// the limits set), or io.max's "8:0 rbps=max wbps=max …".
func allMax(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 {
			return false
		}
		for _, f := range fields[1:] {
			if !strings.HasSuffix(f, "=max") {
				return false
			}
		}
	}
	return true
}

// readSmall reads a cgroup file, at most 64 KiB of it.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// MountPoint is where the file system on dev is mounted (its first
// mount), from the mount table.
func MountPoint(dev event.Dev) (string, bool) {
	m, ok := mountTable()[dev.String()]
	if !ok {
		return "", false
	}
	return m.first, true
}

// mountTable is this process's mount table by device (empty where it
// cannot be read).
func mountTable() map[string]*mountPoints {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return map[string]*mountPoints{}
	}
	defer f.Close()
	return parseMountinfo(f)
}

// StealTime is the CPUs' time the hypervisor took from this machine since
// it booted, summed over the CPUs (/proc/stat): what a virtual machine's
// host kept its CPUs from running while they had work. Zero where the
// hypervisor does not report it (and on bare metal); false when unreadable.
func StealTime() (time.Duration, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	d, err := parseStatSteal(f)
	return d, err == nil
}
