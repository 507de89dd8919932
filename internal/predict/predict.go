package predict

import (
	"errors"
	"math"
	"sort"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
)

// The model. A traced workload's duration is split into what the drive
// does not change — computation and think time between I/Os, I/O the page
// cache served — and the time the workload waited for the drive. Only the
// waiting changes:
//
//   - A call (the syscall layer: what the application waited for) is bound
//     to the drive when block requests of its process (or issued on its
//     behalf by the kernel) arrive while it is outstanding. Its time scales
//     by Σ new service ÷ Σ recorded latency of those requests, each request's
//     new service being the drive profile's for its size, direction,
//     access (sequential or random) and the requests in flight when it
//     arrived (interpolated). A call without such requests (a cache hit,
//     computation) keeps its time.
//   - Block I/O nobody waited for — readahead ahead of the reads, writeback
//     behind buffered writes — is not on the critical path, and is not
//     counted.
//   - The order and dependencies of requests are kept: the time is scaled
//     busy period by busy period (a maximal stretch with some drive-bound
//     call outstanding), so an I/O issued after another completed still
//     waits for it, and the requested depth — how many were outstanding —
//     stays what it was.
//
// Predicting on a profile that gives back the recorded latencies gives
// back the recorded duration.

// Span is a stretch of the trace (a phase, a process) recorded and
// predicted.
type Span struct {
	FromS      float64 `json:"from_s"`
	ToS        float64 `json:"to_s"`
	RecordedS  float64 `json:"recorded_s"`
	PredictedS float64 `json:"predicted_s"`
	Pattern    string  `json:"pattern,omitempty"`
}

// Process is one process's share.
type Process struct {
	Pid        uint32  `json:"pid"`
	Comm       string  `json:"comm"`
	RecordedS  float64 `json:"recorded_s"`
	PredictedS float64 `json:"predicted_s"`
}

// Result is a prediction.
type Result struct {
	Drive      string  `json:"drive"`
	RecordedS  float64 `json:"recorded_s"`
	PredictedS float64 `json:"predicted_s"`
	// HeadlineS is the naive answer: the bytes the application moved at
	// the drive's headline rate (SEQ1M Q8T1).
	HeadlineS float64 `json:"headline_s"`
	// IOBoundShare is the share of the recorded time spent waiting for the
	// drive.
	IOBoundShare float64 `json:"io_bound_share"`
	// Tracks is the benchmark number the drive-bound time follows most
	// (the CrystalDiskMark test of the nearest shape), and its share of
	// that time on this drive.
	Tracks      string    `json:"tracks"`
	TracksShare float64   `json:"tracks_share"`
	Phases      []Span    `json:"phases"`
	Processes   []Process `json:"processes"`
	Layer       string    `json:"layer"` // what the waiting was read from
	Notes       []string  `json:"notes,omitempty"`
}

// ErrNoIO is a trace with nothing to predict.
var ErrNoIO = errors.New("the trace holds no reads or writes to predict")

// Boundary marks where a phase begins (ns from the trace's first event, as
// classify's phases count) with its pattern; nil: the whole trace is one
// phase.
type Boundary struct {
	AtNs    int64
	Pattern string
}

// call is what the model keeps of an I/O the application waited for.
type call struct {
	start, end int64
	pid        uint32
	ratio      float64 // new ÷ recorded drive time; 1: not drive-bound
	// For a direct or asynchronous call that no block request answered
	// (a drive the block layer does not see, such as zram): its shape.
	direct bool
	write  bool
	size   int64
	offset int64
	dev    event.Dev
}

// request is what it keeps of a block request.
type request struct {
	start, end int64
	size       int64
	offset     int64
	pid        uint32
	dev        event.Dev
	write      bool
	kernel     bool
	depth      int     // requests in flight when it arrived, itself included
	newUs      float64 // on the drive predicted for
}

// Builder collects a trace's events; Predict computes from them.
type Builder struct {
	calls    []call
	reqs     []request
	comms    map[uint32]string
	moved    [2]int64 // bytes read, written by the application (or the drive)
	first    int64
	last     int64
	seen     bool
	sysBytes [2]int64
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{comms: map[uint32]string{}} }

// Add takes one event, in any order.
func (b *Builder) Add(e *event.Event) {
	if !e.Op.IsData() && e.Op != event.Flush {
		return
	}
	if !b.seen || e.Start < b.first {
		b.first = e.Start
	}
	b.last = max(b.last, e.End)
	b.seen = true
	b.comms[e.Pid] = e.Comm
	w := e.Op == event.Write
	switch e.Layer {
	case event.Syscall:
		if e.Flags&event.FlagKernel == 0 {
			b.calls = append(b.calls, call{start: e.Start, end: e.End, pid: e.Pid, ratio: 1, write: w, size: e.Size, offset: e.Offset, dev: e.Dev,
				direct: e.Op.IsData() && e.Flags&(event.FlagDirect|event.FlagAsync) != 0})
			if e.Op.IsData() {
				b.sysBytes[boolIdx(w)] += e.Bytes
			}
		}
	case event.Block:
		if e.Op.IsData() {
			b.reqs = append(b.reqs, request{start: e.Start, end: e.End, size: e.Size, offset: e.Offset, pid: e.Pid, dev: e.Dev,
				write: w, kernel: e.Flags&event.FlagKernel != 0})
			b.moved[boolIdx(w)] += e.Bytes
		}
	}
}

func boolIdx(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Predict computes the duration on d. recordedNs is the trace's duration
// (0: from its first to its last event).
func (b *Builder) Predict(d *drive.Profile, recordedNs int64, phases []Boundary) (*Result, error) {
	if !b.seen || len(b.reqs) == 0 && len(b.calls) == 0 {
		return nil, ErrNoIO
	}
	if recordedNs <= 0 {
		recordedNs = b.last - b.first
	}
	res := &Result{Drive: d.Name, RecordedS: secs(recordedNs), Layer: "syscall"}
	b.serviceOnDrive(d)
	if len(b.calls) == 0 {
		// Only the drive's view (fs_usage, an imported block trace): its
		// requests are what the workload waited for.
		res.Layer = "block"
		res.Notes = append(res.Notes, "no syscall layer: every block request is taken as waited for (readahead and writeback cannot be told apart)")
		for _, r := range b.reqs {
			if !r.kernel {
				b.calls = append(b.calls, call{start: r.start, end: r.end, pid: r.pid, ratio: r.newUs * 1e3 / float64(max(r.end-r.start, 1))})
			}
		}
	} else {
		b.bindCalls(d)
	}
	periods := busyPeriods(b.calls, func(call) bool { return true })
	var busy, saved float64
	for _, p := range periods {
		busy += p.len
		saved += p.len - p.len*p.ratio
	}
	res.PredictedS = round(secs(recordedNs) - saved/1e9)
	res.IOBoundShare = round(busy / float64(recordedNs))
	res.Phases = b.phases(periods, recordedNs, phases)
	res.Processes = b.processes()
	res.HeadlineS, res.Tracks, res.TracksShare = b.headline(d)
	return res, nil
}

// serviceOnDrive gives each block request its service time on d, at the
// requests in flight when it arrived and with its access: sequential when
// it starts where a recent request on the device ended.
func (b *Builder) serviceOnDrive(d *drive.Profile) {
	sort.Slice(b.reqs, func(i, j int) bool { return b.reqs[i].start < b.reqs[j].start })
	var ends endHeap
	recent := map[event.Dev][]int64{} // ends of the last requests per device
	tieEnd := 0                       // requests arriving at the same instant count each other
	for i := range b.reqs {
		r := &b.reqs[i]
		if i >= tieEnd {
			for len(ends) > 0 && ends[0] <= r.start {
				ends.pop()
			}
			for tieEnd = i; tieEnd < len(b.reqs) && b.reqs[tieEnd].start == r.start; tieEnd++ {
				ends.push(b.reqs[tieEnd].end)
			}
		}
		access := accessOf(recent, r.dev, r.offset, r.size)
		op := "read"
		if r.write {
			op = "write"
		}
		r.depth = len(ends)
		r.newUs = d.ServiceUs(op, access, r.size, float64(r.depth))
		if math.IsNaN(r.newUs) { // the profile lacks this direction
			r.newUs = float64(r.end-r.start) / 1e3
		}
	}
}

// bindCalls finds, for each call, the block requests that arrived while
// it was outstanding — its process's, or the kernel's on its behalf — and
// sets its ratio from them. A direct or asynchronous call is drive-bound
// from call to completion, as a benchmark measures latency: its new time is
// the profile's for its own shape, at the calls in flight when it came,
// whether block requests answered it or not (zram and other bio-based
// devices have none; a throttled cgroup delays its I/O before the block
// layer sees it).
func (b *Builder) bindCalls(d *drive.Profile) {
	sort.Slice(b.calls, func(i, j int) bool { return b.calls[i].start < b.calls[j].start })
	var ends endHeap
	recent := map[event.Dev][]int64{}
	for i := range b.calls {
		c := &b.calls[i]
		for len(ends) > 0 && ends[0] <= c.start {
			ends.pop()
		}
		ends.push(c.end)
		access := accessOf(recent, c.dev, c.offset, c.size)
		if c.direct && c.end > c.start {
			// A direct call waited for the drive from call to completion,
			// as a benchmark's latency counts: its own time, not its block
			// requests', is what the profile replaces — anything between
			// the call and the block layer (a cgroup's throttle, a
			// bio-based device) is the drive's too.
			op := map[bool]string{false: "read", true: "write"}[c.write]
			if us := d.ServiceUs(op, access, c.size, float64(len(ends))); !math.IsNaN(us) {
				c.ratio = us * 1e3 / float64(c.end-c.start)
				continue
			}
		}
		lo := sort.Search(len(b.reqs), func(k int) bool { return b.reqs[k].start >= c.start })
		var rec, now float64
		for k := lo; k < len(b.reqs) && b.reqs[k].start <= c.end; k++ {
			r := &b.reqs[k]
			if r.pid == c.pid || r.kernel {
				rec += float64(r.end - r.start)
				now += r.newUs * 1e3
			}
		}
		if rec > 0 {
			c.ratio = now / rec
		}
	}
}

// accessOf says whether an I/O continues one of the last 8 on its device
// (sequential) or not, and remembers where it ends.
func accessOf(recent map[event.Dev][]int64, dev event.Dev, offset, size int64) string {
	access := "rand"
	for _, e := range recent[dev] {
		if e == offset {
			access = "seq"
		}
	}
	rs := append(recent[dev], offset+size)
	if len(rs) > 8 {
		rs = rs[1:]
	}
	recent[dev] = rs
	return access
}

// period is a stretch with some drive-bound call outstanding: its length
// (ns) and how its drive time changes.
type period struct {
	start, len float64
	ratio      float64
}

// busyPeriods merges the drive-bound calls (those keep says) into periods,
// each with the recorded-time-weighted ratio of its calls.
func busyPeriods(calls []call, keep func(call) bool) []period {
	var out []period
	var cur period
	var end, sumRec, sumNew float64
	open := false
	flush := func() {
		if open {
			cur.len = end - cur.start
			cur.ratio = sumNew / sumRec
			out = append(out, cur)
		}
		open = false
	}
	for _, c := range calls {
		if c.ratio == 1 || !keep(c) {
			continue
		}
		s, e := float64(c.start), float64(c.end)
		if !open || s > end {
			flush()
			cur, end, sumRec, sumNew, open = period{start: s}, e, 0, 0, true
		}
		end = math.Max(end, e)
		sumRec += e - s
		sumNew += (e - s) * c.ratio
	}
	flush()
	return out
}

// phases splits the prediction at the classified phases' boundaries.
func (b *Builder) phases(periods []period, recordedNs int64, bounds []Boundary) []Span {
	if len(bounds) == 0 {
		bounds = []Boundary{{AtNs: 0}}
	}
	out := make([]Span, len(bounds))
	for i, bd := range bounds {
		to := recordedNs
		if i+1 < len(bounds) {
			to = bounds[i+1].AtNs
		}
		out[i] = Span{FromS: secs(bd.AtNs), ToS: secs(to), RecordedS: secs(to - bd.AtNs), Pattern: bd.Pattern}
	}
	for i := range out {
		out[i].PredictedS = out[i].RecordedS
	}
	for _, p := range periods {
		// Boundaries count from the first event, as classify's phases do.
		i := sort.Search(len(bounds), func(k int) bool { return float64(b.first+bounds[k].AtNs) > p.start }) - 1
		i = max(i, 0)
		out[i].PredictedS -= (p.len - p.len*p.ratio) / 1e9
	}
	for i := range out {
		out[i].PredictedS = round(out[i].PredictedS)
		out[i].FromS, out[i].ToS, out[i].RecordedS = round(out[i].FromS), round(out[i].ToS), round(out[i].RecordedS)
	}
	return out
}

// processes predicts each process's span (first to last I/O of its own).
func (b *Builder) processes() []Process {
	type span struct{ first, last int64 }
	spans := map[uint32]*span{}
	for _, c := range b.calls {
		s := spans[c.pid]
		if s == nil {
			spans[c.pid] = &span{c.start, c.end}
			continue
		}
		s.first, s.last = min(s.first, c.start), max(s.last, c.end)
	}
	var out []Process
	for pid, s := range spans {
		saved := 0.0
		for _, p := range busyPeriods(b.calls, func(c call) bool { return c.pid == pid }) {
			saved += p.len - p.len*p.ratio
		}
		rec := secs(s.last - s.first)
		out = append(out, Process{Pid: pid, Comm: b.comms[pid], RecordedS: round(rec), PredictedS: round(rec - saved/1e9)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].RecordedS != out[j].RecordedS {
			return out[i].RecordedS > out[j].RecordedS
		}
		return out[i].Pid < out[j].Pid
	})
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}

// headline is the naive prediction (bytes at the headline rate) and the
// benchmark number the drive-bound time follows.
func (b *Builder) headline(d *drive.Profile) (headlineS float64, tracks string, share float64) {
	moved := b.sysBytes
	if moved[0]+moved[1] == 0 {
		moved = b.moved
	}
	for i, op := range []string{"read", "write"} {
		if moved[i] > 0 {
			if rate := d.Headline(op); rate > 0 && !math.IsNaN(rate) {
				headlineS += float64(moved[i]) / (rate * 1e6)
			}
		}
	}
	byTest := map[string]float64{}
	total := 0.0
	for _, r := range b.reqs {
		if r.kernel {
			continue
		}
		// The nearest of CrystalDiskMark's four tests.
		name := "RND4K Q1T1"
		switch {
		case r.size >= 256<<10 && r.depth >= 4:
			name = "SEQ1M Q8T1"
		case r.size >= 256<<10:
			name = "SEQ1M Q1T1"
		case r.depth >= 4:
			name = "RND4K Q32T1"
		}
		name += map[bool]string{false: " read", true: " write"}[r.write]
		byTest[name] += r.newUs
		total += r.newUs
	}
	for name, t := range byTest {
		if t > share || t == share && name < tracks {
			tracks, share = name, t
		}
	}
	if total > 0 {
		share /= total
	}
	return round(headlineS), tracks, round(share)
}

func secs(ns int64) float64   { return float64(ns) / 1e9 }
func round(v float64) float64 { return math.Round(v*1000) / 1000 }

// endHeap is a min-heap of completion times.
type endHeap []int64

func (h *endHeap) push(v int64) {
	*h = append(*h, v)
	i := len(*h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if (*h)[p] <= (*h)[i] {
			break
		}
		(*h)[p], (*h)[i] = (*h)[i], (*h)[p]
		i = p
	}
}

func (h *endHeap) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && (*h)[l] < (*h)[m] {
			m = l
		}
		if r < n && (*h)[r] < (*h)[m] {
			m = r
		}
		if m == i {
			return
		}
		(*h)[i], (*h)[m] = (*h)[m], (*h)[i]
		i = m
	}
}
