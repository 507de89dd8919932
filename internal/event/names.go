package event

// ProcessName is the name one process runs as: its main thread's (the
// thread whose ID is the process's), which the kernel set when the program
// was executed, not the names its other threads give themselves
// (Chromium's "PerfettoTrace", a thread pool's "worker-3"). Until its main
// thread is seen, a process goes by the first thread's name.
type ProcessName struct{ name string }

// See takes one of the process's events — thread tid, named comm; a source
// without thread IDs gives tid 0 — and returns the process's name.
func (n *ProcessName) See(pid, tid uint32, comm string) string {
	switch {
	case tid == pid || tid == 0: // the main thread: its latest name (an exec renames it)
		n.name = comm
	case n.name == "": // the first thread seen stands in until the main one is
		n.name = comm
	}
	return n.name
}

// ProcessNames keeps each process's ProcessName.
type ProcessNames struct {
	m map[uint32]*ProcessName
}

// maxProcessNames bounds the processes remembered: past it, the table
// starts again (a process then goes by its next thread's name until its
// main thread is seen).
const maxProcessNames = 1 << 16

// Of is the name of the process pid, seen in one of its events: thread
// tid, named comm. A source without thread IDs gives tid 0.
func (n *ProcessNames) Of(pid, tid uint32, comm string) string {
	p := n.m[pid]
	if p == nil {
		if n.m == nil || len(n.m) >= maxProcessNames {
			n.m = map[uint32]*ProcessName{}
		}
		p = &ProcessName{}
		n.m[pid] = p
	}
	return p.See(pid, tid, comm)
}
