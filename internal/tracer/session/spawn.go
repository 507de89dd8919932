package session

import (
	"os/exec"
	"runtime"
	"sync"
)

// StartChild starts cmd from one OS thread that lives as long as ioshape.
//
// Linux sends a child its parent-death signal (Pdeathsig, or a
// PR_SET_PDEATHSIG the child sets itself) when the thread that forked it
// exits, not the process, and Go ends a thread whose goroutine returns
// while locked to it (store.Owner.Do after a failed restore, say). A
// tracer started from such a thread was sent SIGINT mid-recording and
// stopped without reading its buffers: its events were lost uncounted.
func StartChild(cmd *exec.Cmd) error {
	spawnOnce.Do(func() { go spawner() })
	done := make(chan error, 1)
	spawnQueue <- spawnCall{cmd, done}
	return <-done
}

type spawnCall struct {
	cmd  *exec.Cmd
	done chan<- error
}

var (
	spawnOnce  sync.Once
	spawnQueue = make(chan spawnCall)
)

// spawner never returns, so its thread never ends.
func spawner() {
	runtime.LockOSThread()
	for c := range spawnQueue {
		c.done <- c.cmd.Start()
	}
}
