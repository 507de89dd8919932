package session

import (
	"syscall"
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
