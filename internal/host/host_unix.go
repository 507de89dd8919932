//go:build linux || darwin

package host

import "golang.org/x/sys/unix"

// MonotonicNow reads CLOCK_MONOTONIC: on Linux the clock of the kernel's
// trace timestamps; on macOS a clock that, unlike the wall clock, does not
// jump.
func MonotonicNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// KernelRelease is the running kernel's release string (uname -r).
func KernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// Comm is what the kernel keeps of a process name: at most 15 bytes.
func Comm(name string) string {
	if len(name) > 15 {
		return name[:15]
	}
	return name
}
