package session

import (
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SetParentDeathSignal has the kernel send this process SIGTERM when its
// parent dies (the helper then ends the command it started).
func SetParentDeathSignal() {
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
}

// commandProcAttr starts the target command: in a session of its own for
// an app launch (it outlives the recording), else in a process group of
// its own, so that the recording can end all of it; an owned command also
// gets SIGTERM should the helper die.
func commandProcAttr(detach, owned bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: detach, Setpgid: !detach}
	if owned {
		attr.Pdeathsig = syscall.SIGTERM
	}
	return attr
}

// TracerProcAttr starts a tracer that gets SIGINT, and so exits cleanly,
// if ioshape dies. It has a process group of its own, so a Ctrl-C at the
// terminal reaches only ioshape, which stops it once it has read
// everything the tracer buffered (see Marker).
func TracerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT, Setpgid: true}
}

// OnEachCPU calls f once on each CPU ioshape may run on, pinned there, and
// returns how many CPUs that was.
func OnEachCPU(f func()) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	n := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		for cpu := 0; cpu < 8*int(unsafe.Sizeof(set)); cpu++ {
			if !set.IsSet(cpu) {
				continue
			}
			var one unix.CPUSet
			one.Set(cpu)
			if unix.SchedSetaffinity(0, &one) == nil {
				f()
				n++
			}
		}
		// The thread goes back to the runtime as it came; one whose
		// affinity cannot be restored stays locked, and the runtime ends
		// it with this goroutine (children are started elsewhere: see
		// StartChild).
		if unix.SchedSetaffinity(0, &set) == nil {
			runtime.UnlockOSThread()
		}
	}()
	<-done
	return n
}
