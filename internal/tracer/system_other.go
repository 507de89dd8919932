//go:build !linux

package tracer

import (
	"errors"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

var errNotLinux = errors.New("the bpftrace backend runs on Linux only")

func setParentDeathSignal()                {}
func tracerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
func monotonicNow() int64                  { return time.Now().UnixNano() }
func kernelRelease() string                { return "" }
func ensureTracefs() error                 { return errNotLinux }
func missingTracepoints() []string         { return nil }
func dropCaches() error                    { return errNotLinux }
func processExists(pid int) bool           { return syscall.Kill(pid, 0) == nil }
func pidsNamed(name string) []int          { return nil }
func describeDevices(devs []event.Dev) []tracefile.Device {
	var out []tracefile.Device
	for _, d := range devs {
		out = append(out, tracefile.Device{Major: d.Major, Minor: d.Minor, Name: d.String()})
	}
	return out
}

func probeMisses(pid int) (int64, bool) { return 0, false }
