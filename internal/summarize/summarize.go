package summarize

import (
	"sort"

	"github.com/ioshape/ioshape/internal/event"
)

// Window is how far out of time order a tracer's events may come (its
// per-CPU buffers are read in turn): an event is counted once the newest
// completion is this far past its arrival, and a second's rows are written
// once the newest completion is twice this far past the second.
const Window = int64(1e9)

// maxStreams bounds the devices and files whose streams are remembered;
// past it all are forgotten and start again.
const maxStreams = 1 << 14

// Summarizer makes summary rows of events. Add them in the order the tracer
// gave them; Close writes what is left.
type Summarizer struct {
	emit      func(*event.Summary) error
	pending   []event.Event // by arrival, from head on
	head      int
	watermark int64 // the newest completion seen
	queues    map[queueKey]*queue
	streams   event.Streams
	rows      map[rowKey]*row
	late      int64
	released  int64 // the arrival of the last event counted
	started   bool
}

// New returns a Summarizer that hands each finished row to emit.
func New(emit func(*event.Summary) error) *Summarizer {
	return &Summarizer{streams: event.Streams{Limit: maxStreams}, emit: emit, queues: map[queueKey]*queue{}, rows: map[rowKey]*row{}}
}

// Late is how many events came further out of order than Window: they
// were counted at once, their depth and stream as things stood then.
func (s *Summarizer) Late() int64 { return s.late }

// queueKey is what a depth is counted over: a block device, or the
// syscall layer as a whole.
type queueKey struct {
	layer event.Layer
	dev   event.Dev
}

type queue struct {
	ends      []int64 // completions of the I/Os in flight (a min-heap)
	idleSince int64   // when it last emptied; -1: never
	busySince int64
}

type rowKey struct {
	second     int64
	layer      event.Layer
	op         event.Op
	call       event.Call
	pid        uint32
	dev        event.Dev
	kernel     bool
	copySource bool
}

type row struct {
	s                     event.Summary
	size, lat, gap, depth map[int]int64
}

// Add takes the tracer's next event.
func (s *Summarizer) Add(e *event.Event) error {
	if e.Layer > event.Syscall || !e.IsIO() {
		return nil // waits are per-I/O detail
	}
	if e.End > s.watermark {
		s.watermark = e.End
	}
	if s.started && e.Start < s.released {
		s.late++
		s.count(e)
	} else {
		s.insert(e)
	}
	limit := s.watermark - Window
	for s.head < len(s.pending) && s.pending[s.head].Start < limit {
		s.released, s.started = s.pending[s.head].Start, true
		s.count(&s.pending[s.head])
		s.head++
	}
	if s.head > 1024 && s.head > len(s.pending)/2 {
		n := copy(s.pending, s.pending[s.head:])
		s.pending, s.head = s.pending[:n], 0
	}
	return s.emitThrough((s.watermark - 2*Window) / event.SummarySeconds)
}

// insert puts e among the pending events in arrival order (tracer output
// is nearly in order: usually at the end).
func (s *Summarizer) insert(e *event.Event) {
	n := len(s.pending)
	i := n
	if n > s.head && s.pending[n-1].Start > e.Start {
		i = s.head + sort.Search(n-s.head, func(k int) bool { return s.pending[s.head+k].Start > e.Start })
	}
	s.pending = append(s.pending, event.Event{})
	copy(s.pending[i+1:], s.pending[i:n])
	s.pending[i] = *e
}

// count adds an event, in arrival order, to its row.
func (s *Summarizer) count(e *event.Event) {
	k := rowKey{second: floorDiv(e.End, event.SummarySeconds), layer: e.Layer, op: e.Op, pid: e.Pid, dev: e.Dev,
		kernel: e.Layer == event.Block && e.Flags&event.FlagKernel != 0, copySource: e.Flags&event.FlagCopySource != 0}
	if e.Layer == event.Syscall {
		k.call = e.Call
	}
	r := s.rows[k]
	if r == nil {
		r = &row{s: event.Summary{Start: k.second * event.SummarySeconds, Layer: e.Layer, Op: e.Op, Call: k.call, Dev: e.Dev,
			Pid: e.Pid, Comm: e.Comm, Kernel: k.kernel, CopySource: k.copySource, First: e.Start, Last: e.End},
			size: map[int]int64{}, lat: map[int]int64{}, gap: map[int]int64{}, depth: map[int]int64{}}
		s.rows[k] = r
	}
	r.s.Count++
	r.s.Bytes += e.Bytes
	r.s.SizeSum += e.Size
	if e.Errno != 0 {
		r.s.Errors++
	}
	r.s.First, r.s.Last = min(r.s.First, e.Start), max(r.s.Last, e.End)
	lat := max(0, e.End-e.Start)
	r.s.LatencyNs += lat
	r.size[event.HistBucket(e.Size)]++
	r.lat[event.HistBucket(lat)]++
	if !e.Op.IsData() {
		return
	}
	if e.Flags&event.FlagCopySource == 0 { // a copy's read half is the same call
		s.arrive(e, r)
	}
	if e.Offset >= 0 && e.Size > 0 {
		r.s.Located++
		if seq, _, _ := s.streams.Next(e.Dev, e.Inode, e.Offset, e.Size); seq {
			r.s.Sequential++
		}
	}
}

// arrive counts the depth e arrived at on its queue and the idle gap
// before it; a busy period it finds over is added to its row.
func (s *Summarizer) arrive(e *event.Event, r *row) {
	qk := queueKey{layer: e.Layer, dev: e.Dev}
	if e.Layer == event.Syscall {
		qk.dev = event.Dev{} // the syscall layer's depth is across devices
	}
	q := s.queues[qk]
	if q == nil {
		q = &queue{idleSince: -1}
		s.queues[qk] = q
	}
	wasBusy := len(q.ends) > 0
	for len(q.ends) > 0 && q.ends[0] <= e.Start {
		end := popMin(&q.ends)
		if len(q.ends) == 0 {
			q.idleSince = end
		}
	}
	if len(q.ends) == 0 {
		if wasBusy || q.idleSince >= 0 {
			r.s.BusyNs += max(0, q.idleSince-q.busySince)
		}
		if q.idleSince >= 0 && e.Start > q.idleSince {
			gap := e.Start - q.idleSince
			r.gap[event.HistBucket(gap)]++
			r.s.IdleNs += gap
		}
		q.busySince = e.Start
	}
	pushMin(&q.ends, max(e.End, e.Start))
	r.depth[event.HistBucket(int64(len(q.ends)))]++
}

// emitThrough writes the rows of seconds up to and including sec.
func (s *Summarizer) emitThrough(sec int64) error {
	var done []rowKey
	for k := range s.rows {
		if k.second <= sec {
			done = append(done, k)
		}
	}
	if len(done) == 0 {
		return nil
	}
	sort.Slice(done, func(i, j int) bool { return done[i].less(done[j]) })
	for _, k := range done {
		r := s.rows[k]
		delete(s.rows, k)
		r.s.Size, r.s.Lat, r.s.Gap, r.s.Depth = sparse(r.size), sparse(r.lat), sparse(r.gap), sparse(r.depth)
		if err := s.emit(&r.s); err != nil {
			return err
		}
	}
	return nil
}

// Close counts what is pending, adds each queue's last busy period, and
// writes every row left.
func (s *Summarizer) Close() error {
	for ; s.head < len(s.pending); s.head++ {
		s.count(&s.pending[s.head])
	}
	s.pending, s.head = nil, 0
	// The busy periods still open end with their last completion: added
	// to a row of that queue's (any: only their sum is read).
	for qk, q := range s.queues {
		if len(q.ends) == 0 {
			continue
		}
		last := q.ends[0]
		for _, end := range q.ends {
			last = max(last, end)
		}
		for k, r := range s.rows {
			if k.layer == qk.layer && (qk.layer == event.Syscall || k.dev == qk.dev) && k.op.IsData() && !k.copySource {
				r.s.BusyNs += max(0, last-q.busySince)
				break
			}
		}
	}
	return s.emitThrough(1<<62 - 1)
}

func (k rowKey) less(o rowKey) bool {
	switch {
	case k.second != o.second:
		return k.second < o.second
	case k.layer != o.layer:
		return k.layer < o.layer
	case k.pid != o.pid:
		return k.pid < o.pid
	case k.dev != o.dev:
		if k.dev.Major != o.dev.Major {
			return k.dev.Major < o.dev.Major
		}
		return k.dev.Minor < o.dev.Minor
	case k.op != o.op:
		return k.op < o.op
	case k.call != o.call:
		return k.call < o.call
	case k.kernel != o.kernel:
		return !k.kernel
	}
	return !k.copySource && o.copySource
}

func sparse(m map[int]int64) []event.HistCount {
	out := make([]event.HistCount, 0, len(m))
	for b, c := range m {
		out = append(out, event.HistCount{int64(b), c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func pushMin(h *[]int64, v int64) {
	*h = append(*h, v)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func popMin(h *[]int64) int64 {
	a := *h
	v := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1] < a[c] {
			c++
		}
		if a[i] <= a[c] {
			break
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
	*h = a
	return v
}
