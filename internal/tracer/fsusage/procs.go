package fsusage

import (
	"sync"
	"time"
)

// procTable maps the thread IDs fs_usage prints to processes, and
// processes to their parents, from the system's process table (procs_*.go),
// read again when a thread it does not know appears — at most every
// rescanEvery, since a whole-system scan is not free.
type procTable struct {
	scan func() (threads, parents map[uint32]uint32, err error)

	mu       sync.Mutex
	threads  map[uint32]uint32 // thread → process
	parents  map[uint32]uint32 // process → parent
	lastScan time.Time
}

const rescanEvery = 50 * time.Millisecond

func newProcTable() *procTable {
	return &procTable{scan: scanProcesses, threads: map[uint32]uint32{}, parents: map[uint32]uint32{}}
}

// pidOf is the process of thread tid, if the system knows it (or knew it
// at the last scan: a thread that has exited stays mapped).
func (t *procTable) pidOf(tid uint32) (uint32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pid, ok := t.threads[tid]; ok {
		return pid, true
	}
	if time.Since(t.lastScan) < rescanEvery {
		return 0, false
	}
	t.rescanLocked()
	pid, ok := t.threads[tid]
	return pid, ok
}

func (t *procTable) rescanLocked() {
	t.lastScan = time.Now()
	threads, parents, err := t.scan()
	if err != nil {
		return
	}
	for k, v := range threads {
		t.threads[k] = v
	}
	for k, v := range parents {
		t.parents[k] = v
	}
}

// descends reports whether pid is one of roots or their descendant, as
// the process table last saw it.
func (t *procTable) descends(pid uint32, roots map[uint32]bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for hops := 0; hops < 64 && pid > 1; hops++ {
		if roots[pid] {
			return true
		}
		parent, ok := t.parents[pid]
		if !ok {
			return false
		}
		pid = parent
	}
	return false
}
