package predict

import (
	"cmp"
	"errors"
	"math"
	"sort"
	"strings"

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
	Drive string `json:"drive"`
	// From is the profile of the drive the trace was recorded on, whose
	// drive time is taken out ("" : the recorded latencies were).
	From       string  `json:"from,omitempty"`
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

// What a drive-bound item waited for.
type itemKind uint8

const (
	kindCall    itemKind = iota // a buffered call, or fsync
	kindDirect                  // a direct or asynchronous call
	kindWait                    // a sleep outside any traced call
	kindRequest                 // a page fault: a request outside calls and waits
)

// item is something the workload waited through: a call, a wait, a page
// fault.
type item struct {
	start, end int64
	pid, tid   uint32
	kind       itemKind
	blocked    int64 // ns asleep; -1: not timed
	// What it waits for: reads, writes or both (copies, waits).
	reads, writes bool
	// The call's own shape, for direct calls.
	size, offset int64
	dev          event.Dev
	// What it waited for: whether anything of the drive's, how long it
	// slept, and that drive time on each drive (ns).
	bound                bool
	asleep, fromNs, toNs float64
	newLen               float64 // predicted length, ns
	// The readahead's share of fromNs and toNs: drive time that may run
	// alongside the reader's computation. syncNs is the recording drive's
	// time on bio-based devices for the caller's own requests, spent on
	// its CPU, not asleep.
	fromAheadNs, toAheadNs, syncNs float64
	aheadSync                      bool // some of the readahead was on a bio-based device
	// recAheadNs is the readahead's recorded time (its wall time: shared
	// among the requests in flight together).
	recAheadNs float64
	// readBytes is what it read from the drive (the reads it waited for,
	// readahead with them: through the page cache, for a buffered call), and
	// cpuDelta how its computation changes on the new drive (ns).
	readBytes int64
	cpuDelta  float64
}

func (it *item) len() float64 { return float64(it.end - it.start) }

// request is what the model keeps of a block request.
type request struct {
	start, end int64
	size       int64
	offset     int64
	pid, tid   uint32
	dev        event.Dev
	write      bool
	kernel     bool
	// flusher: issued by a kernel thread that writes back or journals for
	// everyone (not a per-CPU worker dispatching someone's held I/O).
	flusher   bool
	readahead bool
	depth     int     // requests in flight when it arrived, itself included
	fromUs    float64 // latency on the recording drive (its profile, or as recorded)
	toUs      float64 // on the drive predicted for
	// The latencies are already the request's share of the wall time (a
	// readahead stream's, at the drive's rate).
	fromShared, toShared bool
	covered              bool // some call or wait of its process was outstanding
}

// driveTime is how long a set of requests kept its waiter waiting on each
// drive: each request's latency at the requests in flight on the device,
// shared among those of the set in flight with it (a sync waiting for 32
// writes in flight together waits about one latency at depth 32, not 32;
// a read waiting for its one request beside three of other processes
// waits that request's whole latency).
func (b *Builder) driveTime(it *item, set []*request) {
	sort.Slice(set, func(i, j int) bool { return set[i].start < set[j].start })
	var ends endHeap
	it.fromNs, it.toNs, it.fromAheadNs, it.toAheadNs, it.syncNs, it.recAheadNs, it.aheadSync = 0, 0, 0, 0, 0, 0, false
	it.readBytes = 0
	for _, r := range set {
		for len(ends) > 0 && ends[0] <= r.start {
			ends.pop()
		}
		ends.push(r.end)
		together := float64(len(ends))
		from, to := r.fromUs*1e3/sharedAmong(r.fromShared, together), r.toUs*1e3/sharedAmong(r.toShared, together)
		it.fromNs += from
		it.toNs += to
		if !r.write {
			it.readBytes += r.size
		}
		if r.readahead && !r.write {
			it.fromAheadNs += from
			it.toAheadNs += to
			it.recAheadNs += float64(r.end-r.start) / together
			it.aheadSync = it.aheadSync || b.synchronous[r.dev]
		}
		if b.synchronous[r.dev] && r.pid == it.pid && !r.kernel {
			it.syncNs += from // served on this caller's CPU (a flusher's are its own)
		}
	}
}

func sharedAmong(shared bool, together float64) float64 {
	if shared {
		return 1
	}
	return together
}

// Builder collects a trace's events; Predict computes from them.
type Builder struct {
	items    []item
	reqs     []request
	comms    map[uint32]string
	moved    [2]int64            // bytes read, written by the drive
	sysBytes [2]int64            // by the application
	devBytes map[event.Dev]int64 // block layer
	// sysDevBytes is the syscall layer's, by file system device.
	sysDevBytes map[event.Dev]int64
	first       int64
	last        int64
	seen        bool
	timed       bool  // the tracer timed sleeps (calls' blocked time, waits)
	byEnd       []int // requests by completion
	cand        []int // candidates' buffer, reused item to item
	// synchronous devices serve a request on the submitter's CPU before it
	// goes on (bio-based: zram, brd): their readahead is waited for too.
	synchronous map[event.Dev]bool
	unthrottled [2]*drive.Profile // from, to
}

// isFlusher says whether a kernel thread's name is a writeback flusher's
// or the journal's: unbound workers (kworker/u…) and jbd2. A per-CPU
// worker (kworker/1:1) dispatching a throttled cgroup's held bios is not.
func isFlusher(comm string) bool {
	return strings.HasPrefix(comm, "kworker/u") || strings.HasPrefix(comm, "jbd2/")
}

// SetUnthrottled gives the profiles, without the recording's and the new
// drive's cgroup limits, that the flushers' writes go at: cgroup v1's
// blkio controller does not see buffered writeback. Nil: the same
// profiles as the rest.
func (b *Builder) SetUnthrottled(from, to *drive.Profile) {
	b.unthrottled = [2]*drive.Profile{from, to}
}

// SetSynchronous names the devices that serve requests on the
// submitter's CPU (bio-based drivers).
func (b *Builder) SetSynchronous(devs []event.Dev) {
	b.synchronous = map[event.Dev]bool{}
	for _, d := range devs {
		b.synchronous[d] = true
	}
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{comms: map[uint32]string{}, devBytes: map[event.Dev]int64{}, sysDevBytes: map[event.Dev]int64{}}
}

// Add takes one event, in any order.
func (b *Builder) Add(e *event.Event) {
	wait := e.IsWait()
	if !e.Op.IsData() && e.Op != event.Flush && !wait {
		return
	}
	if !wait {
		if !b.seen || e.Start < b.first {
			b.first = e.Start
		}
		b.last = max(b.last, e.End)
		b.seen = true
	}
	b.comms[e.Pid] = e.Comm
	w := e.Op == event.Write
	switch e.Layer {
	case event.Syscall:
		if e.Flags&event.FlagKernel != 0 {
			return
		}
		if e.Op.IsData() {
			b.sysBytes[boolIdx(w)] += e.Bytes
			b.sysDevBytes[e.Dev] += e.Bytes
		}
		if e.Flags&event.FlagCopySource != 0 {
			return // the same call as its write half
		}
		it := item{start: e.Start, end: e.End, pid: e.Pid, tid: e.Tid, blocked: -1, size: e.Size, offset: e.Offset, dev: e.Dev}
		if e.Flags&event.FlagBlocked != 0 {
			it.blocked = e.Blocked
			b.timed = true
		}
		switch {
		case wait:
			it.kind, it.reads, it.writes = kindWait, true, true
		case e.Op.IsData() && e.Flags&(event.FlagDirect|event.FlagAsync) != 0:
			it.kind = kindDirect
			it.reads, it.writes = !w, w
		case e.Call == event.CallCopyFileRange || e.Call == event.CallSendfile:
			it.reads, it.writes = true, true
		default:
			it.reads, it.writes = !w, w || e.Op == event.Flush
		}
		b.items = append(b.items, it)
	case event.Block:
		if e.Op.IsData() {
			kernel := e.Flags&event.FlagKernel != 0
			b.reqs = append(b.reqs, request{start: e.Start, end: e.End, size: e.Size, offset: e.Offset, pid: e.Pid, tid: e.Tid, dev: e.Dev,
				write: w, kernel: kernel, flusher: kernel && isFlusher(e.Comm), readahead: e.Flags&event.FlagReadahead != 0})
			b.moved[boolIdx(w)] += e.Bytes
			b.devBytes[e.Dev] += e.Bytes
		}
	}
}

// DeviceBytes is how many bytes each device moved: where the workload's
// I/O went. The application's own reads and writes (the syscall layer, by
// file system device) say it when they moved a MiB or more; otherwise
// (a program's start, all page faults; no syscall layer) the block
// layer's requests do.
func (b *Builder) DeviceBytes() map[event.Dev]int64 {
	var sys int64
	for _, n := range b.sysDevBytes {
		sys += n
	}
	if sys >= 1<<20 {
		return b.sysDevBytes
	}
	return b.devBytes
}

func boolIdx(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Predict computes the duration on the drive to. from is the profile of
// the drive the trace was recorded on (nil: its recorded latencies stand
// in). recordedNs is the trace's duration (0: from its first to its last
// event).
func (b *Builder) Predict(from, to *drive.Profile, recordedNs int64, phases []Boundary) (*Result, error) {
	if !b.seen || len(b.reqs) == 0 && len(b.items) == 0 {
		return nil, ErrNoIO
	}
	if recordedNs <= 0 {
		recordedNs = b.last - b.first
	}
	res := &Result{Drive: to.Name, RecordedS: secs(recordedNs), Layer: "syscall"}
	if from != nil {
		res.From = from.Name
	} else {
		res.Notes = append(res.Notes, "no profile of the drive this was recorded on ('ioshape bench' there, then --from): its recorded latencies stand in, and what the block layer does not show (a throttle, a bio-based device) is not counted")
	}
	b.serviceOnDrives(from, to)
	sort.Slice(b.items, func(i, j int) bool { return b.items[i].start < b.items[j].start })
	// Waits are the syscall layer's too: a program whose I/O is all page
	// faults has no calls.
	hasCalls := len(b.items) > 0
	if !hasCalls {
		// Only the drive's view (fs_usage, an imported block trace): its
		// requests are what the workload waited for.
		res.Layer = "block"
		res.Notes = append(res.Notes, "no syscall layer: every block request is taken as waited for (readahead and writeback cannot be told apart)")
	} else if !b.timed {
		res.Notes = append(res.Notes, "the tracer did not time the calls' sleeps: a call's computation is not told from its waiting, so overlap of computation with readahead is not seen")
	}
	b.waitedFor(from, to, hasCalls)
	periods := busyPeriods(b.items, func(item) bool { return true })
	var busy, saved float64
	for _, p := range periods {
		busy += p.len
		saved += p.len - p.len*p.ratio
	}
	res.PredictedS = round(math.Max(secs(recordedNs)-saved/1e9, 0))
	res.IOBoundShare = round(math.Min(busy/float64(recordedNs), 1))
	res.Phases = b.phases(periods, recordedNs, phases)
	res.Processes = b.processes()
	res.HeadlineS, res.Tracks, res.TracksShare = b.headline(to)
	return res, nil
}

// serviceOnDrives gives each block request its latency on both drives, at
// the requests in flight when it arrived and with its access: sequential
// when it starts where a recent request on the device ended.
func (b *Builder) serviceOnDrives(from, to *drive.Profile) {
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
		r.depth = len(ends)
		recorded := float64(r.end-r.start) / 1e3
		rf, rt := from, to
		if r.flusher && r.write {
			rf, rt = cmp.Or(b.unthrottled[0], from), cmp.Or(b.unthrottled[1], to)
		}
		r.toUs, r.toShared = requestOn(rt, r, access, recorded)
		r.fromUs = recorded
		if rf != nil {
			r.fromUs, r.fromShared = requestOn(rf, r, access, recorded)
		}
	}
}

// requestOn is d's latency for a block request, or fallback (µs) where d
// lacks its direction; shared says it is already the request's share of
// the wall time. Readahead that continues a sequential stream goes to each
// drive in that drive's own chunks and depth (a small file's readahead is
// as big as the file, whatever the drive). So does the flushers'
// sequential writeback: the block layer merges it into the drive's largest
// requests, however small the recording drive's were (a bio-based device
// takes them unmerged: 10,764 requests of 13 KiB on zram were 213 of 600
// KiB on the VM disk, for the same tar -x).
func requestOn(d *drive.Profile, r *request, access string, fallback float64) (us float64, shared bool) {
	if r.readahead && !r.write && access == "seq" && r.size >= streamMin {
		if us := d.StreamUs(r.size); !math.IsNaN(us) {
			return us, true
		}
	}
	if r.flusher && r.write && access == "seq" {
		if us := d.WritebackUs(r.size); !math.IsNaN(us) {
			return us, true
		}
	}
	return serviceOr(d, r.write, access, r.size, float64(r.depth), fallback), false
}

// streamMin is the smallest readahead request taken for a stream's:
// readahead windows start at 128 KiB on Linux (64 KiB after a small first
// read); small files read one after another are not a stream.
const streamMin = 64 << 10

// serviceOr is d's latency for a shape, or fallback (µs) where d lacks the
// direction.
func serviceOr(d *drive.Profile, write bool, access string, size int64, inflight, fallback float64) float64 {
	op := "read"
	if write {
		op = "write"
	}
	if us := d.ServiceUs(op, access, size, inflight); !math.IsNaN(us) {
		return us
	}
	return fallback
}

// waitedFor finds what each item waited for and sets its predicted
// length, and adds the page faults.
func (b *Builder) waitedFor(from, to *drive.Profile, hasCalls bool) {
	for i := range b.items {
		b.items[i].newLen = b.items[i].len()
	}
	if !hasCalls {
		for i := range b.reqs {
			if r := &b.reqs[i]; !r.kernel {
				b.items = append(b.items, faultItem(r))
			}
		}
		b.rescaleByProgram(from, to)
		return
	}
	// Direct calls: their own shape, at the calls in flight when they came.
	var ends endHeap
	recent := map[event.Dev][]int64{}
	for i := range b.items {
		it := &b.items[i]
		if it.kind != kindDirect {
			continue
		}
		for len(ends) > 0 && ends[0] <= it.start {
			ends.pop()
		}
		ends.push(it.end)
		access := accessOf(recent, it.dev, it.offset, it.size)
		if it.end <= it.start {
			continue
		}
		toUs := serviceOr(to, it.writes, access, it.size, float64(len(ends)), math.NaN())
		fromUs := it.len() / 1e3
		if from != nil {
			fromUs = serviceOr(from, it.writes, access, it.size, float64(len(ends)), fromUs)
		}
		if !math.IsNaN(toUs) {
			it.bound, it.asleep, it.fromNs, it.toNs = true, it.len(), fromUs*1e3, toUs*1e3
		}
	}
	// Calls and waits: the requests that arrived (calls) or completed
	// (waits) while they were outstanding.
	b.byEnd = make([]int, len(b.reqs))
	for k := range b.byEnd {
		b.byEnd[k] = k
	}
	sort.Slice(b.byEnd, func(i, j int) bool { return b.reqs[b.byEnd[i]].end < b.reqs[b.byEnd[j]].end })
	for i := range b.items {
		it := &b.items[i]
		if it.kind == kindDirect {
			continue
		}
		slept := it.blocked != 0
		var set []*request
		for _, k := range b.candidates(it) {
			r := &b.reqs[k]
			own := r.pid == it.pid
			if !own && !r.kernel || r.write && !it.writes || !r.write && !it.reads {
				continue
			}
			if it.kind != kindWait && !own && !slept {
				continue // a call that never slept waited for no one else's I/O
			}
			if own {
				r.covered = true
			}
			set = append(set, r)
		}
		if len(set) == 0 {
			continue
		}
		it.bound = true
		b.driveTime(it, set)
		it.asleep = it.len()
		if it.blocked >= 0 {
			it.asleep = float64(min(it.blocked, it.end-it.start))
		}
	}
	// Page faults: a process's own reads outside its calls and waits, not
	// readahead (the fault goes on without it) unless the device serves it
	// on the faulting CPU.
	var faults []item
	for i := range b.reqs {
		r := &b.reqs[i]
		if r.covered || r.kernel || r.write || r.readahead && !b.synchronous[r.dev] || b.during(r) {
			continue
		}
		faults = append(faults, faultItem(r))
	}
	b.items = append(b.items, faults...)
	sort.Slice(b.items, func(i, j int) bool { return b.items[i].start < b.items[j].start })
	b.cacheReadCPU(from, to)
	b.rescaleByProgram(from, to)
}

// cacheReadCPU finds how the computation inside buffered calls that read
// from the drive changes on the new drive. The page cache's CPU per MiB
// read from a drive is the drive's as much as its latency is: behind a
// slow or throttled drive the copy after each wait starts cold (a cp of
// 256 MiB spent 0.2–0.4 s on the CPU inside copy_file_range behind a 40
// MB/s throttle, 0.07 s on the same disk without it), and bench measures
// it (drive.Profile.CacheReadCPU). A call's computation moves by the
// difference for the bytes it read, and stays at least what the new drive
// costs for them (or what it was, if less).
func (b *Builder) cacheReadCPU(from, to *drive.Profile) {
	for i := range b.items {
		b.items[i].cpuDelta = 0
	}
	if from == nil || from.CacheReadCPU == nil || to.CacheReadCPU == nil {
		return
	}
	const nsPerUsMiB = 1e3 / (1 << 20) // µs per MiB → ns per byte
	fromCost, toCost := *from.CacheReadCPU*nsPerUsMiB, *to.CacheReadCPU*nsPerUsMiB
	for i := range b.items {
		it := &b.items[i]
		cpu := it.len() - it.asleep - it.syncNs
		if !it.bound || it.kind != kindCall || it.readBytes == 0 || cpu <= 0 {
			continue
		}
		n := float64(it.readBytes)
		it.cpuDelta = max(cpu+n*(toCost-fromCost), min(cpu, n*toCost)) - cpu
	}
}

// faultItem is a request waited for outside any call: a page fault (or,
// without a syscall layer, any request of a process).
func faultItem(r *request) item {
	l := float64(r.end - r.start)
	return item{start: r.start, end: r.end, pid: r.pid, tid: r.tid, kind: kindRequest, blocked: -1,
		bound: true, asleep: l, fromNs: r.fromUs * 1e3, toNs: r.toUs * 1e3, newLen: l}
}

// rescaleByProgram takes each program's waiting to the new drive as one:
// the time its processes (all of one name: 300 dd's are one program)
// slept in drive-bound items, against the drive time of what they waited
// for on each drive (rescale). Summing over the program, not item by
// item, lets a throttle's bursts and the waits that pay for them (a token
// bucket lets a few requests through at once, then holds the next ones
// longer) cancel out as they did on the recording drive. The new waiting
// is shared among the items as the old was (or, where the program never
// slept — a bio-based device's work done on its CPU — as the new drive's
// time is).
func (b *Builder) rescaleByProgram(from, to *drive.Profile) {
	byProgram := map[string]*programTime{}
	// A program's whole is the time its processes ran, first to last
	// call, wait or fault: drive time that fits in it may have run
	// alongside its computation.
	spans := b.spans()
	for i := range b.items {
		it := &b.items[i]
		if !it.bound {
			continue
		}
		s := byProgram[b.comms[it.pid]]
		if s == nil {
			s = &programTime{}
			byProgram[b.comms[it.pid]] = s
		}
		s.asleep += it.asleep
		s.from += it.fromNs
		s.to += it.toNs
		s.fromAhead += it.fromAheadNs
		s.toAhead += it.toAheadNs
		s.sync += it.syncNs
		s.aheadSync = s.aheadSync || it.aheadSync
		s.cpuDelta += it.cpuDelta
	}
	for pid, sp := range spans {
		if s := byProgram[b.comms[pid]]; s != nil {
			s.whole += float64(sp.last - sp.first)
		}
	}
	// What may run alongside readahead: each thread's computation in its
	// calls, and after a call that set readahead going, until its next (but
	// no longer than that readahead lasts: a long idle gap is not
	// computation) — and, on an asynchronous recording drive, no more than
	// what did run alongside it there: the readahead's recorded time its
	// callers did not sleep through (a streaming copy computes while the
	// next chunk comes; grep reading small files sleeps through each
	// file's one request, so nothing of its matching overlaps).
	last := map[uint32]*item{}
	for i := range b.items {
		it := &b.items[i]
		s := byProgram[b.comms[it.pid]]
		if s == nil {
			continue
		}
		s.cpu += math.Max(0, it.len()-it.asleep-it.syncNs)
		if it.bound {
			s.overlap += math.Max(0, it.recAheadNs-it.asleep)
		}
		if prev := last[it.tid]; prev != nil && it.start > prev.end {
			s.cpu += math.Min(float64(it.start-prev.end), math.Max(prev.fromAheadNs, prev.toAheadNs))
		}
		last[it.tid] = it
	}
	// On the recording drive, its own nature; elsewhere the profile's.
	same := from != nil && from.Name == to.Name
	for _, s := range byProgram {
		toSync := to.Synchronous
		if same {
			toSync = s.aheadSync
		}
		s.newAsleep = s.rescale(toSync)
	}
	for i := range b.items {
		it := &b.items[i]
		if !it.bound {
			continue
		}
		s := byProgram[b.comms[it.pid]]
		it.newLen += it.cpuDelta
		switch {
		case s.asleep > 0:
			it.newLen += -it.asleep + s.newAsleep*it.asleep/s.asleep
		case s.to > 0:
			it.newLen += s.newAsleep * it.toNs / s.to
		}
		it.newLen = max(0, it.newLen)
	}
}

// programTime is one program's drive-bound time, summed over its items (ns).
type programTime struct {
	asleep, whole, from, to float64
	cpu                     float64 // computation, in and between its threads' items
	overlap                 float64 // readahead's recorded time not slept through
	fromAhead, toAhead      float64 // readahead's share of from and to
	sync                    float64 // from spent on the program's CPU (bio-based devices)
	aheadSync               bool    // its readahead was on a bio-based device
	cpuDelta                float64 // how its computation changes on the new drive
	newAsleep               float64
}

// rescale is the program's time asleep for the drive (asleep), taken to a
// drive whose time for the same requests is to instead of from. When the
// recording drive's time fits in the program's stretch (whole), what it
// does not explain stays (asleep − from + to: a lock, a flush, a journal
// commit). When the stretch was shorter than the profile says (a burst a
// throttle let through, the drive's own cache, readahead running alongside
// the copy), both drives' times are taken at the share k that fits (whole ÷
// from) — not the recorded wait times the drives' ratio, which would have a
// recording that hardly waited predict hardly waiting on any drive; the two
// agree where from = whole, so a profile a little off does not flip the
// answer. The readahead in it may run alongside the program's computation
// on an asynchronous drive (never on a bio-based one, which serves it on
// the reader's CPU): its drive time is waited for only where it exceeds
// that computation — a roofline. A bio-based recording drive's time was
// computation, not sleep, and comes out of the computation. toSync: the
// new drive is bio-based. On the recording drive (to = from) it is the
// time recorded.
func (s *programTime) rescale(toSync bool) float64 {
	if s.from <= 0 {
		return s.asleep + s.to
	}
	k := math.Min(1, s.whole/s.from)
	cpu := s.cpu
	if !s.aheadSync {
		cpu = math.Min(cpu, s.overlap)
	}
	alongside := func(ahead, cpu float64, sync bool) float64 {
		if sync {
			return ahead
		}
		return math.Max(0, ahead-cpu)
	}
	serial := s.asleep - k*(s.from-s.fromAhead) + k*(s.to-s.toAhead)
	// Below zero only by the bio-based drive time that comes out of the
	// computation.
	return math.Max(-s.sync, serial-alongside(k*s.fromAhead, cpu, s.aheadSync)+alongside(k*s.toAhead, math.Max(0, cpu+s.cpuDelta), toSync))
}

// candidates are the requests an item may have waited for: for a call,
// those that arrived while it was outstanding; for a wait, those that
// completed while it slept (or just before it woke: a request completing
// during the sleep may have arrived long before it, held by a throttle).
func (b *Builder) candidates(it *item) []int {
	b.cand = b.cand[:0]
	if it.kind == kindWait {
		lo := sort.Search(len(b.byEnd), func(k int) bool { return b.reqs[b.byEnd[k]].end >= it.start })
		for k := lo; k < len(b.byEnd) && b.reqs[b.byEnd[k]].end <= it.end+wakeSlack; k++ {
			b.cand = append(b.cand, b.byEnd[k])
		}
		return b.cand
	}
	lo := sort.Search(len(b.reqs), func(k int) bool { return b.reqs[k].start >= it.start })
	for k := lo; k < len(b.reqs) && b.reqs[k].start <= it.end; k++ {
		b.cand = append(b.cand, k)
	}
	return b.cand
}

// wakeSlack is how long after a request's completion the sleeper it woke
// may take to run.

const wakeSlack = 50_000 // ns

// during reports whether some call or wait of r's process overlaps it.
func (b *Builder) during(r *request) bool {
	hi := sort.Search(len(b.items), func(k int) bool { return b.items[k].start > r.end })
	for k := hi - 1; k >= 0 && k >= hi-64; k-- {
		it := &b.items[k]
		if it.pid == r.pid && it.end >= r.start {
			return true
		}
	}
	return false
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

// period is a stretch with something drive-bound outstanding: its length
// (ns) and how it changes.
type period struct {
	start, len float64
	ratio      float64
}

// busyPeriods merges the drive-bound items (those keep says) into periods,
// each with the ratio of its items' predicted to recorded lengths.
func busyPeriods(items []item, keep func(item) bool) []period {
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
	for _, it := range items {
		if it.newLen == it.len() || it.end <= it.start || !keep(it) {
			continue
		}
		s, e := float64(it.start), float64(it.end)
		if !open || s > end {
			flush()
			cur, end, sumRec, sumNew, open = period{start: s}, e, 0, 0, true
		}
		end = math.Max(end, e)
		sumRec += it.len()
		sumNew += it.newLen
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
		out[i].PredictedS = round(math.Max(out[i].PredictedS, 0))
		out[i].FromS, out[i].ToS, out[i].RecordedS = round(out[i].FromS), round(out[i].ToS), round(out[i].RecordedS)
	}
	return out
}

// span is a process's first to last call, wait or fault.
type span struct{ first, last int64 }

// spans are the processes' spans.
func (b *Builder) spans() map[uint32]*span {
	spans := map[uint32]*span{}
	for _, it := range b.items {
		s := spans[it.pid]
		if s == nil {
			spans[it.pid] = &span{it.start, it.end}
			continue
		}
		s.first, s.last = min(s.first, it.start), max(s.last, it.end)
	}
	return spans
}

// processes predicts each process's span.
func (b *Builder) processes() []Process {
	var out []Process
	for pid, s := range b.spans() {
		saved := 0.0
		for _, p := range busyPeriods(b.items, func(it item) bool { return it.pid == pid }) {
			saved += p.len - p.len*p.ratio
		}
		rec := secs(s.last - s.first)
		out = append(out, Process{Pid: pid, Comm: b.comms[pid], RecordedS: round(rec), PredictedS: round(math.Max(rec-saved/1e9, 0))})
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
		byTest[name] += r.toUs
		total += r.toUs
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
