package export

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
)

// File is one file of an iolog replay: the recorded file (or device) it
// stands for, and the size it must have for every offset to fit.
type File struct {
	Name   string    `json:"name"` // f1.dat, f2.dat…: no spaces, relative to where fio runs
	Dev    event.Dev `json:"dev"`
	Inode  uint64    `json:"inode,omitempty"`
	Size   int64     `json:"size_bytes"`
	origin int64     // the lowest offset used: offsets count from it
}

// Iolog collects a trace's I/O for a fio version 3 iolog: the syscall
// layer's reads, writes and flushes of the traced processes — what the
// application asked for — or, when the trace has no syscall layer, the
// block layer's. Each recorded file (a device, at the block layer) becomes
// a file f<N>.dat sized to the span the trace touched, its offsets counted
// from the lowest. I/Os are written in the order they were issued, with
// their times (µs from the first, as fio writes them), so that fio replays
// the timing too (or not, with replay_no_stall=1).
//
// It holds 40 bytes per I/O until written.
type Iolog struct {
	// Dir, if set, is written before each file name, so that fio finds the
	// files wherever it runs (it cannot take a directory with an iolog).
	// It must not contain white space.
	Dir  string
	ios  []ioRec
	seen [2]bool
	// Of the syscall layer's data I/Os: how many, how many direct and
	// aligned for direct I/O, how many asynchronous.
	data, direct, async int64
}

// ReplayMode says how fio should issue the log's I/O to do as the
// application did: with direct I/O when every data I/O was direct (and
// aligned for it), through an asynchronous engine when most were
// asynchronous, with at most depth in flight — the most the application
// had — so that a slower drive does not pile up more than it ever asked
// for (an iolog has no dependencies between I/Os).
func (l *Iolog) ReplayMode() (direct, async bool, depth int) {
	if l.data == 0 || l.Layer() != event.Syscall {
		return false, false, 1
	}
	return l.direct == l.data, 2*l.async > l.data, l.maxDepth()
}

// DirectThread says whether one thread's data I/O was direct (and aligned
// for it), nine in ten at least — a worker that read a sysfs file once
// is still a direct-I/O worker: its log replays with direct I/O.
func (l *Iolog) DirectThread(tid uint32) bool {
	var n, direct int
	for _, x := range l.ios {
		if x.layer == event.Syscall && x.op.IsData() && x.tid == tid {
			n++
			if x.direct {
				direct++
			}
		}
	}
	return n > 0 && direct*10 >= n*9
}

// maxDepth is the most syscall-layer I/Os in flight at once.
func (l *Iolog) maxDepth() int {
	type span struct{ at, delta int64 }
	var edges []span
	for _, x := range l.ios {
		if x.layer == event.Syscall && x.op.IsData() {
			edges = append(edges, span{x.start, 1}, span{x.end, -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].delta < edges[j].delta // an end before a start at the same time
	})
	var n, most int64
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return int(max(1, most))
}

type ioRec struct {
	start  int64
	end    int64
	tid    uint32
	direct bool // direct and aligned for direct I/O
	key    fileKey
	layer  event.Layer
	op     event.Op
	offset int64
	size   int64
}

type fileKey struct {
	dev   event.Dev
	inode uint64
}

// Add takes one event.
func (l *Iolog) Add(e *event.Event) {
	switch {
	case e.Layer > event.Syscall, e.Flags&event.FlagKernel != 0:
		return // the kernel's own I/O (writeback, readahead) is not the workload's
	case !e.Op.IsData() && e.Op != event.Flush:
		return
	case e.Op.IsData() && (e.Offset < 0 || e.Size <= 0):
		return // no place to replay it at
	}
	l.seen[e.Layer] = true
	direct := e.Flags&event.FlagDirect != 0 && e.Offset%512 == 0 && e.Size%512 == 0
	if e.Layer == event.Syscall && e.Op.IsData() {
		l.data++
		if direct {
			l.direct++
		}
		if e.Call.IsAsync() {
			l.async++
		}
	}
	k := fileKey{dev: e.Dev}
	if e.Layer == event.Syscall {
		k.inode = e.Inode
	}
	l.ios = append(l.ios, ioRec{start: e.Start, end: e.End, tid: e.Tid, direct: direct, key: k, layer: e.Layer, op: e.Op, offset: e.Offset, size: e.Size})
}

// Layer is the layer the iolog replays.
func (l *Iolog) Layer() event.Layer {
	if l.seen[event.Syscall] {
		return event.Syscall
	}
	return event.Block
}

// Threads are the threads whose I/O a per-thread replay gives a log each,
// in the order of their first I/O, when order within a thread matters:
// two or more threads had synchronous I/O in flight at once for at least
// a tenth of the time any was (each waited for its own before the next,
// so one log at their combined depth would replay them in the wrong
// order). Nil otherwise — one thread, threads one after another, a
// helper's odd I/O beside the main one's, asynchronous I/O: one log
// replays it.
func (l *Iolog) Threads() []uint32 {
	if l.Layer() != event.Syscall || l.async*2 > l.data {
		return nil
	}
	type edge struct {
		at    int64
		tid   uint32
		delta int
	}
	var edges []edge
	first := map[uint32]int64{}
	for _, x := range l.ios {
		if x.layer != event.Syscall || x.end <= x.start {
			continue
		}
		edges = append(edges, edge{x.start, x.tid, 1}, edge{x.end, x.tid, -1})
		if f, ok := first[x.tid]; !ok || x.start < f {
			first[x.tid] = x.start
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].delta < edges[j].delta
	})
	inFlight := map[uint32]int{}
	var busy, together, last int64
	for _, e := range edges {
		switch n := len(inFlight); {
		case n >= 2:
			together += e.at - last
			busy += e.at - last
		case n == 1:
			busy += e.at - last
		}
		last = e.at
		inFlight[e.tid] += e.delta
		if inFlight[e.tid] <= 0 {
			delete(inFlight, e.tid)
		}
	}
	if len(first) < 2 || busy == 0 || together*10 < busy {
		return nil
	}
	order := make([]uint32, 0, len(first))
	for tid := range first {
		order = append(order, tid)
	}
	sort.Slice(order, func(i, j int) bool {
		if first[order[i]] != first[order[j]] {
			return first[order[i]] < first[order[j]]
		}
		return order[i] < order[j]
	})
	return order
}

// Write writes the iolog and returns the files it names and how many
// I/O lines it wrote.
func (l *Iolog) Write(w io.Writer) (files []File, n int, err error) {
	return l.write(w, func(ioRec) bool { return true })
}

// WriteThread writes the iolog of one thread's I/O (see Threads): the
// files are named and sized as in the whole log, so the logs of all the
// threads replay together on one set of files, each log from the first
// I/O of the whole trace. A thread replayed with direct I/O
// (DirectThread) leaves out its few reads and writes that direct I/O
// cannot do (a sysfs file's 32 bytes).
func (l *Iolog) WriteThread(w io.Writer, tid uint32) (files []File, n int, err error) {
	direct := l.DirectThread(tid)
	return l.write(w, func(x ioRec) bool { return x.tid == tid && (!direct || x.direct || !x.op.IsData()) })
}

func (l *Iolog) write(w io.Writer, keep func(ioRec) bool) (files []File, n int, err error) {
	layer := l.Layer()
	ios := l.ios[:0:0]
	for _, x := range l.ios {
		if x.layer == layer {
			ios = append(ios, x)
		}
	}
	sort.SliceStable(ios, func(i, j int) bool { return ios[i].start < ios[j].start })
	byKey := map[fileKey]*File{}
	var order []fileKey
	for _, x := range ios {
		f := byKey[x.key]
		if f == nil {
			f = &File{Dev: x.key.dev, Inode: x.key.inode, origin: -1}
			byKey[x.key] = f
			order = append(order, x.key)
		}
		if x.op.IsData() {
			if f.origin < 0 || x.offset < f.origin {
				f.origin = x.offset
			}
			f.Size = max(f.Size, x.offset+x.size)
		}
	}
	for i, k := range order {
		f := byKey[k]
		f.Name = fmt.Sprintf("f%d.dat", i+1)
		if l.Dir != "" {
			f.Name = filepath.Join(l.Dir, f.Name)
		}
		if f.origin < 0 {
			f.origin = 0
		}
		f.Size -= f.origin
		f.Size = max(f.Size, 4096)
		files = append(files, *f)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "fio version 3 iolog")
	var first int64
	if len(ios) > 0 {
		first = ios[0].start
	}
	// This log's files: all of them for the whole log, those it uses for
	// one thread's.
	uses := map[fileKey]bool{}
	for _, x := range ios {
		if keep(x) {
			uses[x.key] = true
		}
	}
	var mine []fileKey
	for _, k := range order {
		if uses[k] {
			mine = append(mine, k)
		}
	}
	for _, k := range mine {
		fmt.Fprintf(bw, "0 %s add\n", byKey[k].Name)
	}
	for _, k := range mine {
		fmt.Fprintf(bw, "0 %s open\n", byKey[k].Name)
	}
	last := int64(0)
	for _, x := range ios {
		if !keep(x) {
			continue
		}
		f := byKey[x.key]
		last = (x.start - first) / 1000
		switch {
		case x.op == event.Read || x.op == event.Write:
			fmt.Fprintf(bw, "%d %s %s %d %d\n", last, f.Name, map[event.Op]string{event.Read: "read", event.Write: "write"}[x.op], x.offset-f.origin, x.size)
		default:
			fmt.Fprintf(bw, "%d %s sync 0 0\n", last, f.Name)
		}
		n++
	}
	for _, k := range mine {
		fmt.Fprintf(bw, "%d %s close\n", last, byKey[k].Name)
	}
	return files, n, bw.Flush()
}
