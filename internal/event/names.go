package event

// ProcessNames gives each process the name it runs as: its main thread's
// (the thread whose ID is the process's), which the kernel set when the
// program was executed, not the names its other threads give themselves
// (Chromium's "PerfettoTrace", a thread pool's "worker-3"). Until its main
// thread is seen, a process goes by the first thread's name.
type ProcessNames struct {
	m map[uint32]procName
}

type procName struct {
	name string
	main bool // from the main thread
}

// maxProcessNames bounds the processes remembered: past it, the table
// starts again (a process then goes by its next thread's name until its
// main thread is seen).
const maxProcessNames = 1 << 16

// Of is the name of the process pid, seen in one of its events: thread
// tid, named comm. A source without thread IDs gives tid 0.
func (n *ProcessNames) Of(pid, tid uint32, comm string) string {
	if n.m == nil {
		n.m = map[uint32]procName{}
	}
	p, ok := n.m[pid]
	if ok && (p.main || tid != pid && tid != 0) {
		if tid == pid && p.name != comm { // exec'd another program
			n.m[pid] = procName{comm, true}
			return comm
		}
		return p.name
	}
	if !ok && len(n.m) >= maxProcessNames {
		clear(n.m)
	}
	n.m[pid] = procName{comm, tid == pid || tid == 0}
	return comm
}
