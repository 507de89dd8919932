package bench

import (
	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// deviceOf names the block device and file system under dir, as traces
// name devices (sysfs and the mount table on Linux).
func deviceOf(dir string) (device, fstype string) {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return "", ""
	}
	d := event.Dev{Major: unix.Major(uint64(st.Dev)), Minor: unix.Minor(uint64(st.Dev))}
	ds := session.DescribeDevices([]event.Dev{d})
	if len(ds) == 0 {
		return d.String(), ""
	}
	if ds[0].Disk != "" {
		return ds[0].Disk, ds[0].FSType
	}
	return ds[0].Name, ds[0].FSType
}
