package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
)

// deviceOf names the block device and file system under dir, as traces
// name devices (sysfs and the mount table on Linux).
func deviceOf(dir string) (device, fstype string, bioBased bool) {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return "", "", false
	}
	d := event.Dev{Major: unix.Major(uint64(st.Dev)), Minor: unix.Minor(uint64(st.Dev))}
	ds := host.DescribeDevices([]event.Dev{d})
	if len(ds) == 0 {
		return d.String(), "", false
	}
	if ds[0].Disk != "" {
		return ds[0].Disk, ds[0].FSType, ds[0].BioBased
	}
	return ds[0].Name, ds[0].FSType, ds[0].BioBased
}

// queueKB reads one of a disk's queue settings in KiB (read_ahead_kb,
// max_sectors_kb); 0 where sysfs does not say.
func queueKB(disk, name string) int {
	if disk == "" || strings.ContainsAny(disk, "/.") {
		return 0
	}
	b, err := os.ReadFile(filepath.Join("/sys/block", disk, "queue", name))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}
