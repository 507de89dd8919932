package predict

import "github.com/ioshape/ioshape/internal/event"

// readers remembers, by process, what decides the readahead window a
// stream of its gets on another drive (drive.Spec.ReadWindow): the size
// of the read call a readahead request came in, and whether the process
// advised sequential reading. Events come about in completion order, and a
// request asks when the front releases it, holdNs behind the newest: by
// then the call it came in has come, unless that call outlasted the hold
// (a copy's, which reads in pages whatever its size).
type readers struct {
	byPid  map[uint32]*readerLog
	newest int64
	// Every process's latest read runs and advice, in arrival order: a
	// kernel thread that dispatches a process's readahead (a cgroup's
	// throttle holds the bios, a worker issues them later) reads for
	// whichever process was reading then.
	recentRuns   []pidRun
	recentAdvice []pidAdvice
}

type pidRun struct {
	pid uint32
	readRun
}

type pidAdvice struct {
	pid uint32
	adviceAt
}

type readerLog struct {
	runs   []readRun  // its buffered read calls, runs of one size, in arrival order
	advice []adviceAt // its changes of advice, in arrival order
	last   int64      // the latest time it was seen
	short  int64      // the latest start of a read that came back short: a file's end
	// moved is the latest start of a read elsewhere than where its last
	// read (of file ino) ended at: a seek, or another file.
	moved      int64
	ino        uint64
	fileOffset int64
	// fileRuns are its runs through a file, each read starting where the
	// last ended, in arrival order; the last is the one it is in.
	fileRuns []fileRun
}

// fileRun is a stretch of a file a process read straight through: from
// and to in the file, first the start of its first read.
type fileRun struct {
	from, to, first int64
}

// readRun is calls of one size, one after another: a reader's buffer.
type readRun struct{ start, end, size int64 }

type adviceAt struct {
	at         int64
	sequential bool
}

// maxReaderLog bounds what is kept of a process (oldest forgotten first);
// maxReaders bounds the processes.
const (
	maxReaderLog = 64
	maxReaders   = 4096
)

// add takes a syscall-layer event: a buffered read or an advice.
func (rs *readers) add(e *event.Event) {
	advice := e.Call == event.CallFadvise && e.Flags&(event.FlagAdviceSequential|event.FlagAdviceRandom) != 0
	// A copy's splice comes as its write half (the read half is the
	// same call): it reads the source a page at a time.
	splice := e.Call == event.CallCopyFileRange || e.Call == event.CallSendfile
	read := (e.Op == event.Read || splice) && e.Flags&(event.FlagDirect|event.FlagAsync) == 0 && e.Call != event.CallFadvise
	if !advice && !read {
		return
	}
	l := rs.log(e.Pid, e.End)
	if advice {
		seq := e.Flags&event.FlagAdviceSequential != 0
		if n := len(l.advice); n == 0 || l.advice[n-1].sequential != seq {
			a := adviceAt{at: e.Start, sequential: seq}
			l.advice = appendBounded(l.advice, a)
			rs.recentAdvice = appendBounded(rs.recentAdvice, pidAdvice{e.Pid, a})
		}
		return
	}
	if e.Bytes < e.Size && e.Errno == 0 {
		l.short = max(l.short, e.Start)
	}
	if e.Offset >= 0 && e.Inode != 0 && !splice { // a splice's place is the file it writes
		if l.ino != 0 && (e.Inode != l.ino || e.Offset != l.fileOffset) {
			l.moved = max(l.moved, e.Start)
		}
		if n := len(l.fileRuns); n > 0 && e.Inode == l.ino && e.Offset == l.fileOffset {
			l.fileRuns[n-1].to = e.Offset + max(e.Bytes, 0)
		} else {
			l.fileRuns = appendBounded(l.fileRuns, fileRun{from: e.Offset, to: e.Offset + max(e.Bytes, 0), first: e.Start})
		}
		l.ino, l.fileOffset = e.Inode, e.Offset+max(e.Bytes, 0)
	}
	size := e.Size
	if splice {
		size = 0 // a splice reads a page at a time, whatever the copy's size
	}
	if n := len(l.runs); n > 0 && l.runs[n-1].size == size && e.Start >= l.runs[n-1].start {
		l.runs[n-1].end = max(l.runs[n-1].end, e.End)
	} else {
		l.runs = appendBounded(l.runs, readRun{start: e.Start, end: e.End, size: size})
	}
	if n := len(rs.recentRuns); n > 0 && rs.recentRuns[n-1].pid == e.Pid && rs.recentRuns[n-1].size == size && e.Start >= rs.recentRuns[n-1].start {
		rs.recentRuns[n-1].end = max(rs.recentRuns[n-1].end, e.End)
		return
	}
	rs.recentRuns = appendBounded(rs.recentRuns, pidRun{e.Pid, readRun{start: e.Start, end: e.End, size: size}})
}

// ofKernel is the reader behind a readahead request a kernel thread
// dispatched at t: the process reading then, or, none known, the latest
// advice any process gave.
func (rs *readers) ofKernel(t int64) (call int64, sequential bool) {
	best := int64(-1) << 62
	var pid uint32
	found := false
	for _, r := range rs.recentRuns {
		if r.start <= t && t <= r.end && r.start > best {
			best, pid, found = r.start, r.pid, true
		}
	}
	if found {
		return rs.of(pid, t)
	}
	best = int64(-1) << 62
	for _, a := range rs.recentAdvice {
		if a.at <= t && a.at > best {
			best, sequential = a.at, a.sequential
		}
	}
	return 0, sequential
}

// calling says whether a read call of pid was in progress at t, and how
// much it asked for (0: a splice, which reads a page at a time).
func (rs *readers) calling(pid uint32, t int64) (call int64, ok bool) {
	if rs == nil {
		return 0, false
	}
	l := rs.byPid[pid]
	if l == nil {
		return 0, false
	}
	best := int64(-1) << 62
	for _, r := range l.runs {
		if r.start <= t && t <= r.end && r.start > best {
			best, call, ok = r.start, r.size, true
		}
	}
	return call, ok
}

// of is the reader behind a readahead request of pid arriving at t: its
// call's size (0: none known) and whether it advised sequential reading.
func (rs *readers) of(pid uint32, t int64) (call int64, sequential bool) {
	l := rs.byPid[pid]
	if l == nil {
		return 0, false
	}
	best := int64(-1) << 62
	for _, r := range l.runs {
		if r.start <= t && r.start > best {
			best = r.start
			call = 0
			if t <= r.end {
				call = r.size
			}
		}
	}
	best = int64(-1) << 62
	for _, a := range l.advice {
		if a.at <= t && a.at > best {
			best, sequential = a.at, a.sequential
		}
	}
	return call, sequential
}

// readToEnd says whether pid read up to a file's end after t (a read
// that came back short).
func (rs *readers) readToEnd(pid uint32, t int64) bool {
	l := rs.byPid[pid]
	return l != nil && l.short > t
}

// readThrough is how much of a file pid read straight through in the run
// it was reading at t (−1: none known): what a stream whose window came
// at t gave its reader.
func (rs *readers) readThrough(pid uint32, t int64) int64 {
	l := rs.byPid[pid]
	if l == nil {
		return -1
	}
	for i := len(l.fileRuns) - 1; i >= 0; i-- {
		if r := l.fileRuns[i]; r.first <= t {
			return r.to - r.from
		}
	}
	return -1
}

// movedAfter says whether pid read elsewhere than where its last read
// ended after t: it left the stream it was reading (a seek, another file).
func (rs *readers) movedAfter(pid uint32, t int64) bool {
	l := rs.byPid[pid]
	return l != nil && l.moved > t
}

// log is pid's log, made if new; processes not seen for a while are
// forgotten when there are too many.
func (rs *readers) log(pid uint32, t int64) *readerLog {
	rs.newest = max(rs.newest, t)
	l := rs.byPid[pid]
	if l == nil {
		if rs.byPid == nil {
			rs.byPid = map[uint32]*readerLog{}
		}
		if len(rs.byPid) >= maxReaders {
			for p, old := range rs.byPid {
				if old.last < rs.newest-2*holdNs {
					delete(rs.byPid, p)
				}
			}
			if len(rs.byPid) >= maxReaders {
				clear(rs.byPid)
			}
		}
		l = &readerLog{}
		rs.byPid[pid] = l
	}
	l.last = max(l.last, t)
	return l
}

func appendBounded[T any](s []T, v T) []T {
	if len(s) >= maxReaderLog {
		s = append(s[:0], s[1:]...)
	}
	return append(s, v)
}
