package session

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A tracer gets its parent-death signal when the thread that forked it
// ends; Go ends a thread whose goroutine returns locked to it. Started
// with StartChild from such a thread, a child lives on; started from the
// thread itself (the control), it is signalled as the thread ends.
func TestStartChildOutlivesTheThreadThatAsked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		start    func(*exec.Cmd) error
		survives bool
	}{
		{"StartChild", StartChild, true},
		{"cmd.Start (control)", (*exec.Cmd).Start, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "30")
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			started := make(chan error)
			onEndingThread(func() { started <- tc.start(cmd) })
			if err := <-started; err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			defer func() { cmd.Process.Kill(); <-exited }()
			select {
			case <-exited:
				if tc.survives {
					t.Fatalf("the child was killed when the thread that asked for it ended: %v", cmd.ProcessState)
				}
			case <-time.After(time.Second):
				if !tc.survives {
					t.Fatalf("control: the child outlived the thread that forked it; the test no longer shows the hazard")
				}
			}
		})
	}
}

// onEndingThread runs f on a thread the runtime ends when f returns: not
// the main thread, which it parks instead.
func onEndingThread(f func()) {
	go func() {
		runtime.LockOSThread() // never unlocked
		if unix.Gettid() == os.Getpid() {
			onEndingThread(f)
			return
		}
		f()
	}()
}
