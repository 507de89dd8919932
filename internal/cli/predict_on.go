package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/tracefile"
	"golang.org/x/sys/unix"
)

// onDevices resolves predict --on: each a device the trace names (vda,
// loop3, 7:3), a block device file, or a directory on a file system (its
// mount's device). A partition brings its disk along: the file system's
// calls name the partition, the drive's requests the disk.
func onDevices(meta tracefile.Meta, args []string) ([]event.Dev, error) {
	var out []event.Dev
	for _, a := range args {
		devs, err := onDevice(meta, a)
		if err != nil {
			return nil, usageError{fmt.Errorf("--on %s: %w", a, err)}
		}
		out = append(out, devs...)
	}
	return out, nil
}

func onDevice(meta tracefile.Meta, a string) ([]event.Dev, error) {
	if meta.Footer != nil {
		for _, d := range meta.Footer.Devices {
			dev := event.Dev{Major: d.Major, Minor: d.Minor}
			if a == d.Name || a == dev.String() || a == "/dev/"+d.Name {
				return withDisk(meta, dev), nil
			}
		}
		// The trace's mount at the very mount point the path is on here: the
		// recording's device there, whatever number the device has now (a
		// loop device set up again takes the first free number, maybe one
		// the trace gave another drive).
		if mp, ok := liveMountPoint(a); ok {
			if dev, ok := mountedAt(meta.Footer.Devices, a); ok && mountsAt(meta.Footer.Devices, dev, mp) {
				return withDisk(meta, dev), nil
			}
		}
		// A path here on a device the trace knows: its own device, whatever
		// mount the trace noted for it (a device mounted twice, a bind
		// mount, shows the trace one of its mount points).
		if dev, ok := statDevice(a); ok && slices.ContainsFunc(meta.Footer.Devices, func(d event.Device) bool {
			return d.Major == dev.Major && d.Minor == dev.Minor
		}) {
			return withDisk(meta, dev), nil
		}
		// A directory under a mount the trace knows: as the recording's
		// machine had it (a device's number may differ here, or the drive
		// be gone).
		if dev, ok := mountedAt(meta.Footer.Devices, a); ok {
			return withDisk(meta, dev), nil
		}
	}
	if maj, min, ok := strings.Cut(a, ":"); ok {
		M, err1 := strconv.ParseUint(maj, 10, 32)
		m, err2 := strconv.ParseUint(min, 10, 32)
		if err1 == nil && err2 == nil {
			return withDisk(meta, event.Dev{Major: uint32(M), Minor: uint32(m)}), nil
		}
	}
	dev, ok := statDevice(a)
	if !ok {
		_, err := os.Stat(a)
		return nil, fmt.Errorf("not a device of the trace, a device file or a directory (%v)", err)
	}
	return withDisk(meta, dev), nil
}

// withDisk is dev and, for a partition, the whole disk it is on: as the
// trace noted it (its device list names a partition's disk), else as this
// machine's sysfs says. The trace first: predicted after the drive is
// gone (unplugged, a loop device torn down), sysfs knows no partition,
// and the disk's requests would stay put while its file system's calls
// moved — the prediction the recording.
func withDisk(meta tracefile.Meta, dev event.Dev) []event.Dev {
	if meta.Footer != nil {
		devs := meta.Footer.Devices
		i := slices.IndexFunc(devs, func(d event.Device) bool { return d.Major == dev.Major && d.Minor == dev.Minor })
		if i >= 0 && devs[i].Disk != "" && devs[i].Disk != devs[i].Name {
			if j := slices.IndexFunc(devs, func(d event.Device) bool { return d.Name == devs[i].Disk }); j >= 0 {
				return []event.Dev{dev, {Major: devs[j].Major, Minor: devs[j].Minor}}
			}
		}
	}
	return host.WithDisk(dev)
}

// statDevice is the device a block device file names, or the device of
// the file system a path is on.
func statDevice(path string) (event.Dev, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return event.Dev{}, false
	}
	raw := uint64(st.Dev)
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		raw = uint64(st.Rdev)
	}
	return event.Dev{Major: unix.Major(raw), Minor: unix.Minor(raw)}, true
}

// mountedAt is the device whose mount in the trace holds path: the
// longest mount point that is path or a directory above it.
func mountedAt(devs []event.Device, path string) (event.Dev, bool) {
	if !filepath.IsAbs(path) {
		return event.Dev{}, false
	}
	path = filepath.Clean(path)
	var best event.Dev
	longest := ""
	for _, d := range devs {
		for _, m := range append([]string{d.Mount}, d.Mounts...) {
			if m == "" || len(m) <= len(longest) {
				continue
			}
			if path == m || strings.HasPrefix(path, strings.TrimSuffix(m, "/")+"/") {
				best, longest = event.Dev{Major: d.Major, Minor: d.Minor}, m
			}
		}
	}
	return best, longest != ""
}

// mountsAt says the trace had dev mounted at mp.
func mountsAt(devs []event.Device, dev event.Dev, mp string) bool {
	for _, d := range devs {
		if d.Major == dev.Major && d.Minor == dev.Minor && (d.Mount == mp || slices.Contains(d.Mounts, mp)) {
			return true
		}
	}
	return false
}

// liveMountPoint is the mount point of the file system path is on here:
// its highest directory on the same device.
func liveMountPoint(path string) (string, bool) {
	if !filepath.IsAbs(path) {
		return "", false
	}
	path = filepath.Clean(path)
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return "", false // gone, or a device file: its number is the answer
	}
	dev := event.Dev{Major: unix.Major(uint64(st.Dev)), Minor: unix.Minor(uint64(st.Dev))}
	for path != "/" {
		up := filepath.Dir(path)
		if d, ok := statDevice(up); !ok || d != dev {
			return path, true
		}
		path = up
	}
	return path, true
}
