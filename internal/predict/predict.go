package predict

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/units"
)

// The model. A traced workload's duration is split into what the drive
// does not change — computation and think time between I/Os, I/O the page
// cache served — and the time the workload waited for the drive. Only the
// waiting changes:
//
//   - A call (the syscall layer: what the application waited for) is bound
//     to the drive when block requests of its process (or issued on its
//     behalf by the kernel, completed before it returned) arrive while it
//     is outstanding. Its time scales
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

// MarshalJSON writes the pid as null for a process known only by its name.
func (p Process) MarshalJSON() ([]byte, error) {
	type plain Process
	return json.Marshal(struct {
		plain
		Pid *uint32 `json:"pid"`
	}{plain(p), event.OptionalPid(p.Pid)})
}

// Result is a prediction.
type Result struct {
	Drive string `json:"drive"`
	// From is the profile of the drive the trace was recorded on, whose
	// drive time is taken out ("" : the recorded latencies were).
	From       string  `json:"from,omitempty"`
	RecordedS  float64 `json:"recorded_s"`
	PredictedS float64 `json:"predicted_s"`
	// HeadlineS is the naive answer: the bytes the work moved (asked for,
	// or moved by the drive where that is more) at the drive's headline
	// rate (SEQ1M Q8T1).
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
	// PredictedLowS and PredictedHighS bound the prediction: what the
	// drive's profile leaves open (a coarse profile's rules, a bench's
	// measured error) taken at either end (PredictRange).
	PredictedLowS  float64 `json:"predicted_low_s"`
	PredictedHighS float64 `json:"predicted_high_s"`
	// HeadlineMBs is the drive's headline rate (SEQ1M Q8T1 read) and
	// TracksMBs its figure for the test the work tracks.
	HeadlineMBs float64 `json:"headline_mb_s"`
	TracksMBs   float64 `json:"tracks_mb_s,omitempty"`
	// Source is where the drive's profile came from: "bench (fio-3.33)",
	// or the published results it was built from.
	Source string `json:"drive_source"`
	// profile is the drive's, for its figures.
	profile *drive.Spec
	// lateWritebackAt: streamed, the model would leave out the flushers'
	// writes from then on (LateWriteback).
	lateWritebackAt int64
}

// LateWriteback says, of a streamed prediction, that the flushers wrote
// back after the run would have ended on this drive, from at on (the
// trace's clock): a Builder streamed again with SetWritebackAfter(at)
// leaves those writes out. (Without Stream, Predict does so itself.)
func (r *Result) LateWriteback() (at int64, ok bool) {
	return r.lateWritebackAt, r.lateWritebackAt > 0
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
	call
	// What it waited for: whether anything of the drive's, how long it
	// slept, and that drive time on each drive (ns).
	bound                bool
	asleep, fromNs, toNs float64
	// fromEstNs is the share of fromNs that is an estimate: the recording
	// drive's profile's, or recorded latencies divided among requests in
	// flight together (not one request's alone).
	fromEstNs float64
	// besideIO: a wait that is not bound, while requests were in flight —
	// for a page another's fault is reading, a lock held across one. The
	// wake graph takes it at its program's ratio.
	besideIO bool
	// The readahead's share of fromNs and toNs: drive time that may run
	// alongside the reader's computation. syncNs is the recording drive's
	// time on bio-based devices for the caller's own requests, spent on
	// its CPU, not asleep.
	fromAheadNs, toAheadNs, syncNs float64
	// stayNs is the time of its requests on devices that do not move (the
	// same on both drives), stayAheadNs the readahead's share of it.
	stayNs, stayAheadNs float64
	aheadSync           bool // some of the readahead was on a bio-based device
	// toStreamNs is the new drive's time for the readahead on a bio-based
	// device that continued its reader's stream (request.streamed).
	toStreamNs float64
	// recAheadNs is the readahead's recorded time (its wall time: shared
	// among the requests in flight together).
	recAheadNs float64
	// aheadReads is how many readahead requests it waited for or issued.
	aheadReads int
	// readBytes is what it read from the drive (the reads it waited for,
	// readahead with them: through the page cache, for a buffered call), and
	// cpuDelta how its computation changes on the new drive (ns).
	readBytes int64
	cpuDelta  float64
	// coldFactor is how much longer (negative: shorter) the thread's
	// computation after its waits takes on the new drive, per ns of it,
	// coldStepNs the most each wait moves it by, and wakes how many waits
	// it had (see engine.wakeCPU).
	coldFactor, coldStepNs float64
	wakes                  int
}

// call is what the trace says of an item, all the re-sorting holds.
type call struct {
	start, end int64
	blocked    int64 // ns asleep; -1: not timed
	// The call's own shape, for direct calls.
	size, offset int64
	dev          event.Dev
	pid, tid     uint32
	kind         itemKind
	// What it waits for: reads, writes or both (copies, waits).
	reads, writes bool
	syncs         bool // fsync and its kind: the drive's cache flushed
}

func (it *call) len() float64 { return float64(it.end - it.start) }

// request is what the model keeps of a block request.
type request struct {
	blockIO
	depth    int   // requests in flight when it arrived, itself included
	distance int64 // bytes from where the device's last request ended (−1: unknown)
	ahead    bool  // a short way past where the device's last read ended: in a disk's read-ahead
	paused   bool  // it found its device idle for a while (pauseNs)
	idleNs   int64 // how long its device had been idle when it came (0: busy, or unknown)
	bios     bool  // recorded on a bio-based device: a bio, not a request the block layer merged
	// layoutJump: it goes from a journal to a file's data or back (see
	// engine.onTarget).
	layoutJump bool
	// streamed: readahead recorded on a bio-based device that starts
	// where its process's last readahead ended (continuesStream).
	streamed bool
	// batched: a write that continues its process's previous bio on a
	// bio-based device, submitted right after it (continuesBurst); a read
	// that continues its call's previous bio there (continuesReads).
	batched bool
	// lone: a flusher's write that found its device idle (a journal's
	// write for an fsync): one request on its own, not a share of a
	// stream written back (see requestShape).
	lone   bool
	fromUs float64 // latency on the recording drive (its profile, or as recorded)
	// fromProfiled: fromUs is its profile's, not as recorded.
	fromProfiled bool
	toUs         float64 // on the drive predicted for
	// The latencies are already the request's share of the wall time (a
	// readahead stream's, at the drive's rate).
	fromShared, toShared bool
	// saved is the share of its device's data that compression saves, as
	// the trace's samples of it say (0: none sampled).
	saved      float64
	covered    bool // some call or wait of its process was outstanding
	maybeFault bool // a read of its process's that may be a page fault, not yet decided
}

// blockIO is what the trace says of a block request, all the re-sorting
// holds.
type blockIO struct {
	start, end   int64
	size, offset int64
	dev          event.Dev
	pid, tid     uint32
	write        bool
	kernel       bool
	// flusher: issued by a kernel thread that writes back or journals for
	// everyone (not a per-CPU worker dispatching someone's held I/O).
	flusher bool
	// pastThrottle: issued by a kernel thread whose writes a cgroup v1
	// throttle does not hold (the flushers, the journal, kblockd).
	pastThrottle bool
	readahead    bool
	flush        bool // a cache flush (counted among the writes)
	// journal: a kernel thread's synchronous metadata write — a journal's
	// (jbd2's blocks, the commit block after them).
	journal bool
	// The reader behind a readahead request: the size of its call (0:
	// none known, or a copy) and whether it advised sequential reading.
	readCall   int64
	sequential bool
}

func sharedAmong(shared bool, together float64) float64 {
	if shared {
		return 1
	}
	return together
}

// Builder collects a trace's events; Predict computes from them. With
// Stream called first, the model runs as the events come, in memory that
// does not grow with the trace; without, the Builder keeps the events and
// runs it in Predict (for any drives, any number of times).
type Builder struct {
	comms    map[uint32]string
	names    event.ProcessNames
	moved    [2]int64            // bytes read, written by the drive
	sysBytes [2]int64            // by the application
	devBytes map[event.Dev]int64 // block layer
	// sysDevBytes is the syscall layer's, by file system device.
	sysDevBytes map[event.Dev]int64
	// saved is, by device, the share of its data compression saves.
	saved map[event.Dev]float64
	// waited is the time processes' block requests took, by device: what
	// the workload waited on (not the flushers' writeback).
	waited   map[event.Dev]int64
	first    int64
	last     int64
	seen     bool
	timed    bool // the tracer timed sleeps (calls' blocked time, waits)
	hasItems bool // calls or waits: a syscall layer
	requests int64
	// synchronous devices serve a request on the submitter's CPU before it
	// goes on (bio-based: zram, brd): their readahead is waited for too.
	synchronous map[event.Dev]bool
	uppers      map[event.Dev][]event.Dev // SetStacked: the devices on each device
	moving      map[event.Dev]bool        // MoveOnly; nil: all
	unthrottled [2]*drive.Spec            // from, to
	// recordedThrottled: the recording ran under I/O limits (or may have).
	recordedThrottled bool
	kept              []event.Event // without Stream
	// writebackAfter: the flushers' writes that start from then on (ns,
	// the trace's clock; 0: none) come after the work (lateWriteback).
	writebackAfter int64
	lats           map[*drive.Spec]*latencies
	wakes          wakeGraph // who woke whom, where the tracer says
	taken          takenLog  // what the host took of the threads' time on a CPU, where the tracer says
	// With Stream: the re-sorting, and an engine per drive the trace may
	// have been recorded on, with and without a syscall layer.
	stream *front
}

// From is a drive a trace may have been recorded on, for Stream: its
// profile (nil: the recorded latencies stand in) and, for a drive benched
// inside a cgroup v1 blkio cgroup, the same disk's profile outside it.
type From struct {
	Profile, Unthrottled *drive.Spec
}

// To is a drive to predict on, for Stream: its profile and, likewise,
// its profile outside its cgroup's limits; Moving, if given, names the
// devices whose I/O moves there instead of MoveOnly's (a profile streamed
// for several sets of devices is a copy for each).
type To struct {
	Profile, Unthrottled *drive.Spec
	Moving               []event.Dev
}

// Stream runs the model as the events come, for each drive in tos and
// each drive in froms the trace may have been recorded on; Predict then
// takes one of froms and one of tos. Call it before Add.
func (b *Builder) Stream(tos []To, froms []From) {
	var engines []*engine
	for _, t := range tos {
		for _, f := range froms {
			u := [2]*drive.Spec{f.Unthrottled, t.Unthrottled}
			for _, noCalls := range []bool{false, true} {
				e := newEngine(b, f.Profile, t.Profile, u, noCalls)
				if t.Moving != nil {
					e.moving = map[event.Dev]bool{}
					for _, d := range t.Moving {
						e.moving[d] = true
					}
				}
				engines = append(engines, e)
			}
		}
	}
	b.stream = newFront(engines)
}

// isFlusher says whether a kernel thread's name is a writeback flusher's
// or the journal's: unbound workers (kworker/u…) and jbd2. A per-CPU
// worker (kworker/1:1) dispatching a throttled cgroup's held bios is not.
func isFlusher(comm string) bool {
	return strings.HasPrefix(comm, "kworker/u") || strings.HasPrefix(comm, "jbd2/")
}

// pastThrottle says whether a kernel thread's writes go past a cgroup v1
// throttle: the flushers' and the journal's, and those of kblockd's
// high-priority per-CPU workers (kworker/1:0H), which send on the steps
// of a flush sequence — a journal's commit block after the flush before
// it. A per-CPU worker (kworker/1:1) dispatching a throttled cgroup's
// held bios is not.
func pastThrottle(comm string) bool {
	return isFlusher(comm) || strings.HasPrefix(comm, "kworker/") && strings.HasSuffix(comm, "H")
}

// SetUnthrottled gives the profiles, without the recording's and the new
// drive's cgroup limits, that the flushers' writes go at: cgroup v1's
// blkio controller does not see buffered writeback. Nil: the same
// profiles as the rest. (With Stream, From and Stream's toUnthrottled
// give them.)
func (b *Builder) SetUnthrottled(from, to *drive.Spec) {
	b.unthrottled = [2]*drive.Spec{from, to}
}

// MoveOnly names the devices whose I/O moves to the new drive; the rest
// stays as recorded (an application on an external drive still reads the
// system's libraries from the internal one). None: every device moves.
func (b *Builder) MoveOnly(devs []event.Dev) {
	b.moving = nil
	if len(devs) == 0 {
		return
	}
	b.moving = map[event.Dev]bool{}
	for _, d := range devs {
		b.moving[d] = true
	}
}

// SetRecordedThrottled says the recording ran under a cgroup's I/O
// limits (or may have): its block latencies are then not the drive's (the
// throttle held the bios before the block layer saw them), and only the
// recording drive's profile comes out.
func (b *Builder) SetRecordedThrottled(throttled bool) { b.recordedThrottled = throttled }

// SetSynchronous names the devices that serve requests on the
// submitter's CPU (bio-based drivers).
func (b *Builder) SetSynchronous(devs []event.Dev) {
	b.synchronous = map[event.Dev]bool{}
	for _, d := range devs {
		b.synchronous[d] = true
	}
}

// SetContent takes what the trace's samples say of each device's data: a
// partition's (the file system's, where calls are) goes for its disk's
// requests too, where the disk has none of its own.
func (b *Builder) SetContent(devs []event.Device) {
	byName := map[string]event.Dev{}
	for _, d := range devs {
		dev := event.Dev{Major: d.Major, Minor: d.Minor}
		byName[d.Name] = dev
		if d.Content != nil {
			if b.saved == nil {
				b.saved = map[event.Dev]float64{}
			}
			b.saved[dev] = d.Content.SavedShare()
		}
	}
	for _, d := range devs {
		disk, ok := byName[d.Disk]
		if _, has := b.saved[disk]; d.Content != nil && ok && !has {
			b.saved[disk] = d.Content.SavedShare()
		}
	}
}

// SetStacked gives the devices the trace's devices sit on (a loop
// device's backing file's disk): a kernel worker's request on one of those
// while a device on it has one in flight serves that one — its time is
// already in it — and is not another I/O.
func (b *Builder) SetStacked(devs []event.Device) {
	b.uppers = map[event.Dev][]event.Dev{}
	for _, d := range devs {
		for _, lo := range d.Lower {
			b.uppers[lo] = append(b.uppers[lo], event.Dev{Major: d.Major, Minor: d.Minor})
		}
	}
}

// SetWritebackAfter leaves out of the model the flushers' writes that
// start at or after ns (the trace's clock): on the new drive they come
// after the work (Result.LateWriteback). Call it before Stream.
func (b *Builder) SetWritebackAfter(ns int64) { b.writebackAfter = ns }

// HostTakenNs is what a virtual machine's host took of the traced
// threads' time on a CPU, as the trace's steal events say (0: none, or
// not recorded).
func (b *Builder) HostTakenNs() int64 { return b.taken.total }

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{comms: map[uint32]string{}, devBytes: map[event.Dev]int64{}, sysDevBytes: map[event.Dev]int64{}, waited: map[event.Dev]int64{}}
}

// Add takes one event. Events come in about the order they completed (as
// tracers write them); with Stream, one that comes more than 10 s late is
// matched as it comes, and counted.
func (b *Builder) Add(e *event.Event) {
	if e.IsSteal() {
		b.taken.add(e)
		return
	}
	if e.IsSleep() {
		b.wakes.add(e)
		return
	}
	wait := e.IsWait()
	if wait && e.Waker() != 0 {
		b.wakes.add(e) // and an item too: what it waited for may be the drive's
	}
	if e.Layer == event.Syscall && e.Call == event.CallFadvise {
		b.keep(e) // says how the file's readahead goes
		return
	}
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
	b.comms[e.Pid] = b.names.Of(e.Pid, e.Tid, e.Comm)
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
		if e.Flags&event.FlagBlocked != 0 {
			b.timed = true
		}
		if !b.hasItems && b.stream != nil {
			b.stream.dropNoCalls()
		}
		b.hasItems = true
	case event.Block:
		if e.Op == event.Flush {
			break // an fsync waits for it: it has a drive's time, no bytes
		}
		if !e.Op.IsData() {
			return
		}
		b.moved[boolIdx(w)] += e.Bytes
		b.devBytes[e.Dev] += e.Bytes
		if e.Flags&event.FlagKernel == 0 && e.End > e.Start {
			b.waited[e.Dev] += e.End - e.Start
		}
		b.requests++
	default:
		return
	}
	b.keep(e)
}

// keep moves an event on to the model: kept for Predict, or into the
// running stream.
func (b *Builder) keep(e *event.Event) {
	if b.stream == nil {
		b.kept = append(b.kept, *e)
		return
	}
	b.stream.add(e)
}

// Waited is the time processes' block requests took, by device.
func (b *Builder) Waited() map[event.Dev]int64 { return b.waited }

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
// in); with Stream, it must be one of its froms' and to its to.
// recordedNs is the trace's duration (0: from its first to its last
// event).
func (b *Builder) Predict(from, to *drive.Spec, recordedNs int64, phases []Boundary) (*Result, error) {
	if !b.seen || !b.hasItems && b.requests == 0 {
		return nil, ErrNoIO
	}
	if recordedNs <= 0 {
		recordedNs = b.last - b.first
	}
	if b.stream == nil {
		res, en := b.predictKept(from, to, recordedNs, phases, b.writebackAfter)
		if at, ok := en.lateWriteback(res.PredictedS); ok && b.writebackAfter == 0 {
			res, _ = b.predictKept(from, to, recordedNs, phases, at)
		}
		return res, nil
	}
	var en *engine
	for _, c := range b.stream.engines {
		if c.from == from && c.to == to && c.noCalls == !b.hasItems {
			en = c
		}
	}
	if en == nil {
		return nil, errors.New("predict: the drives are not those the model streamed for")
	}
	res := b.result(en, b.stream, from, to, recordedNs, phases)
	if at, ok := en.lateWriteback(res.PredictedS); ok && b.writebackAfter == 0 {
		res.lateWritebackAt = at
	}
	return res, nil
}

// predictKept runs the model on the kept events for one pair of drives,
// leaving out the flushers' writes from writebackAfter on (0: none).
func (b *Builder) predictKept(from, to *drive.Spec, recordedNs int64, phases []Boundary, writebackAfter int64) (*Result, *engine) {
	en := newEngine(b, from, to, b.unthrottled, !b.hasItems)
	en.after = writebackAfter
	f := newFront([]*engine{en})
	for i := range b.kept {
		f.add(&b.kept[i])
	}
	return b.result(en, f, from, to, recordedNs, phases), en
}

// result is the prediction of the engine en, fed by f.
func (b *Builder) result(en *engine, f *front, from, to *drive.Spec, recordedNs int64, phases []Boundary) *Result {
	f.finish()
	res := &Result{Drive: to.Name, RecordedS: secs(recordedNs), Layer: "syscall"}
	if from != nil {
		res.From = from.Name
	} else {
		res.Notes = append(res.Notes, "no profile of the drive this was recorded on ('ioshape bench' there, then --from): its recorded latencies stand in, and what the block layer does not show (a throttle, a bio-based device) is not counted")
	}
	if !b.hasItems {
		// Only the drive's view (fs_usage, an imported block trace): its
		// requests are what the workload waited for.
		res.Layer = "block"
		res.Notes = append(res.Notes, "no syscall layer: every block request is taken as waited for (readahead and writeback cannot be told apart)")
	} else if !b.timed {
		res.Notes = append(res.Notes, "the tracer did not time the calls' sleeps: a call's computation is not told from its waiting, so overlap of computation with readahead is not seen")
	}
	if b.taken.total > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the virtual machine's host took %s of the traced threads' time on a CPU while recording: left out of their computation",
			units.Micros(float64(b.taken.total)/1e3)))
	}
	if f.late > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d I/Os came more than 10 s after I/Os that arrived later than they did: matched as they came", f.late))
	}
	if en.lateBytes > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the kernel's writeback of %s from %.1f s on, during the recording, would come after the work on this drive: left out",
			units.Bytes(en.lateBytes), secs(en.lateFirst-b.first)))
	}
	ratios := b.ratios(en, from, to)
	var saved float64
	for _, i := range en.accum.slices.indexes() {
		saved += en.accum.slices.byIdx[i].saving(ratios)
	}
	res.PredictedS = round(math.Max(secs(recordedNs)-saved/1e9, 0))
	if shift, ok := b.wakes.wakeTimes(en.accum.marks, ratios); ok {
		// Each says the run takes at least so long: the busy periods miss
		// computation another process's waits hid, the wake graph the
		// queue of several processes' requests on one drive.
		res.PredictedS = round(math.Max(res.PredictedS, secs(recordedNs)+shift/1e9))
	}
	if floor := readFloor(en, to); floor > res.PredictedS {
		res.PredictedS = round(floor)
	}
	res.IOBoundShare = round(math.Min(en.accum.busy/float64(recordedNs), 1))
	res.Phases = b.phases(en, ratios, recordedNs, phases)
	res.Processes = b.processes(en, ratios)
	res.HeadlineS, res.Tracks, res.TracksShare = b.headline(en, to)
	return res
}

// ratio is a program's new waiting per recorded sleep (a) or, where it
// never slept, per new drive time (t).
type ratio struct{ a, t float64 }

// ratios takes each program's waiting to the new drive as one: the time
// its processes (all of one name: 300 dd's are one program) slept in
// drive-bound items, against the drive time of what they waited for on
// each drive (rescale). Summing over the program, not item by item, lets
// a throttle's bursts and the waits that pay for them (a token bucket
// lets a few requests through at once, then holds the next ones longer)
// cancel out as they did on the recording drive. The new waiting is shared
// among the items as the old was (or, where the program never slept — a
// bio-based device's work done on its CPU — as the new drive's time is).
// The result is per process.
func (b *Builder) ratios(en *engine, from, to *drive.Spec) map[uint32]ratio {
	// In pid order: sums come out the same, run after run.
	pids := make([]uint32, 0, len(en.accum.pids))
	for pid := range en.accum.pids {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	byProgram := map[string]*programTime{}
	for _, pid := range pids {
		if en.accum.pids[pid].bound && byProgram[b.comms[pid]] == nil {
			byProgram[b.comms[pid]] = &programTime{throttled: from != nil && from.Cgroup != "", toThrottled: to.Cgroup != "", same: from != nil && from.Name == to.Name}
		}
	}
	// A program's whole is the time its processes ran, first to last
	// call, wait or fault: drive time that fits in it may have run
	// alongside its computation. What may run alongside readahead: each
	// thread's computation in its calls, and after a call that set
	// readahead going, until its next (but no longer than that readahead
	// lasts: a long idle gap is not computation) — and, on an asynchronous
	// recording drive, no more than what did run alongside it there: the
	// readahead's recorded time its callers did not sleep through (a
	// streaming copy computes while the next chunk comes; grep reading
	// small files sleeps through each file's one request, so nothing of its
	// matching overlaps).
	for _, pid := range pids {
		if s, p := byProgram[b.comms[pid]], en.accum.pids[pid]; s != nil {
			s.merge(&p.waitSums)
			s.whole += float64(p.last - p.first)
		}
	}
	// On the recording drive, its own nature; elsewhere the profile's.
	same := from != nil && from.Name == to.Name
	byPid := map[uint32]ratio{}
	for _, pid := range pids {
		s := byProgram[b.comms[pid]]
		if s == nil {
			continue
		}
		if !s.rescaled {
			toSync := to.Synchronous
			if same {
				toSync = s.aheadSync
			}
			s.newAsleep, s.rescaled = s.rescale(toSync), true
		}
		switch {
		case s.asleep > 0:
			byPid[pid] = ratio{a: s.newAsleep / s.asleep}
		case s.to > 0:
			byPid[pid] = ratio{t: s.newAsleep / s.to}
		}
	}
	return byPid
}

// saving is the time a slice's periods save, given the programs' ratios
// (summed in pid order: the same, run after run).
func (s *slice) saving(ratios map[uint32]ratio) float64 {
	pids := make([]uint32, 0, len(s.parts))
	for pid := range s.parts {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	v := s.g
	for _, pid := range pids {
		r, c := ratios[pid], s.parts[pid]
		v -= r.a*c[0] + r.t*c[1]
	}
	return v
}

// phases splits the prediction at the classified phases' boundaries.
func (b *Builder) phases(en *engine, ratios map[uint32]ratio, recordedNs int64, bounds []Boundary) []Span {
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
	ts := &en.accum.slices
	for _, idx := range ts.indexes() {
		s := ts.byIdx[idx]
		// Boundaries count from the first event, as classify's phases do;
		// a slice goes by its middle (a boundary is rounded to the ms).
		mid := float64(idx*ts.width + ts.width/2)
		i := sort.Search(len(bounds), func(k int) bool { return float64(b.first+bounds[k].AtNs) > mid }) - 1
		i = max(i, 0)
		out[i].PredictedS -= s.saving(ratios) / 1e9
	}
	for i := range out {
		out[i].PredictedS = round(math.Max(out[i].PredictedS, 0))
		out[i].FromS, out[i].ToS, out[i].RecordedS = round(out[i].FromS), round(out[i].ToS), round(out[i].RecordedS)
	}
	return out
}

// processes predicts each process's span, first to last call, wait or
// fault.
func (b *Builder) processes(en *engine, ratios map[uint32]ratio) []Process {
	var out []Process
	for pid, p := range en.accum.pids {
		r := ratios[pid]
		saved := p.g - r.a*p.ca - r.t*p.ct
		rec := secs(p.last - p.first)
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
func (b *Builder) headline(en *engine, d *drive.Spec) (headlineS float64, tracks string, share float64) {
	// The bytes the work moved: what it asked for, or what the drive moved
	// where that is more (page faults and readahead of an application's
	// start, copies by calls not traced such as splice).
	moved := b.sysBytes
	for i := range moved {
		moved[i] = max(moved[i], b.moved[i])
	}
	for i, op := range []string{"read", "write"} {
		if moved[i] > 0 {
			if rate := d.Headline(op); rate > 0 && !math.IsNaN(rate) {
				headlineS += float64(moved[i]) / (rate * 1e6)
			}
		}
	}
	for name, t := range en.byTest {
		if t > share || t == share && name < tracks {
			tracks, share = name, t
		}
	}
	if en.testTotal > 0 {
		share /= en.testTotal
	}
	return round(headlineS), tracks, round(share)
}

// readFloor is the least time (s) the new drive takes to read what it
// reads of the trace (engine.readTo): those bytes at its best rate benched
// (a throttle's limit, a disk's sequential rate) — what it reads around
// faults at the rate of random requests of its window at most: each fault
// reads a window, no more. The requests' shares of the wall time may add
// up to less — the recording's requests in flight together share what a
// wider window reads on the new drive — but the bytes come no faster
// (Chromium's start from the HDD model's 2.5 MiB windows to the 40 MB/s
// throttle's 8 MiB ones: 4.9 s predicted, 8.5 s measured; to the USB
// model's 128 KiB windows, which it reads at 29 MB/s, not its 36: 8.7 s
// predicted, 12.6 measured).
func readFloor(en *engine, to *drive.Spec) float64 {
	if en.sameDrive || en.readTo <= 0 {
		return 0
	}
	_, rate := to.Limits("read")
	if rate <= 0 {
		return 0
	}
	faultRate := rate
	if r := to.FaultReadRate(to.ReadWindow(0, false)); r > 0 {
		faultRate = min(rate, r)
	}
	return float64(en.readTo-en.readToFaults)/rate + float64(en.readToFaults)/faultRate
}

// requestOn is d's latency for a block request, or fallback (µs) where d
// lacks its direction; shared says it is already the request's share of
// the wall time. Readahead that continues a sequential stream goes to each
// drive in that drive's own chunks and depth (a small file's readahead is
// as big as the file, whatever the drive). So does the flushers'
// sequential writeback recorded on a bio-based device, and onto one: the
// block layer merges it into the drive's largest requests, however small
// the bios were (10,764 requests of 13 KiB on zram were 213 of 600 KiB on
// the VM disk, for the same tar -x). A request-based drive's writeback
// requests are what the files made, and go as they are (tar -x: 45 KiB at
// the median on the HDD model, 48 on the USB one, a command's cost each).
//
// A drive that compresses (zram) takes more for data that compresses, in
// proportion to what the trace's samples of the device's data say
// compression saves (drive.ContentCost); a figure the profile did not give
// (the recorded latency standing in) holds it already.
func requestOn(d *latencies, r *request, access string, fallback float64) (us float64, shared bool) {
	us, shared = requestShape(d, r, access, fallback)
	if d != nil && d.d.Content != nil && !math.IsNaN(us) && us != fallback {
		us = max(us+d.d.Content.ExtraUs(r.write, r.size, r.saved), 0)
	}
	return us, shared
}

// requestShape is requestOn for data that does not compress.
func requestShape(d *latencies, r *request, access string, fallback float64) (us float64, shared bool) {
	if us, ok := syncOn(d, r); ok {
		return us, false
	}
	if r.flush {
		return fallback, false // a drive whose flush was not measured: as recorded
	}
	if access == "seq" && r.distance != 0 && !r.ahead && d != nil && d.d.Positional() {
		// It continues an earlier request, but the head has moved since
		// (a journal's next block after a file's data; a file's next
		// block after a directory's) and the disk's cache does not hold
		// it: a disk seeks back.
		access = "rand"
	}
	if r.readahead && !r.write && access == "seq" && r.size >= streamMin && d != nil {
		// The reader's window on this drive, not the request's size: the
		// recording drive's window and largest request cut it.
		window := d.d.ReadWindow(r.readCall, r.sequential)
		if us := d.get(latKey{kind: latStream, size: r.size, window: window}); !math.IsNaN(us) {
			return us, true
		}
	}
	if r.batched && !r.write && access == "seq" && d != nil && !d.d.Synchronous {
		// A call's next page on a bio-based device: merged into its run's
		// request on a drive that queues, the bytes at its streaming rate.
		if us := d.get(latKey{kind: latStream, size: r.size, window: d.d.ReadWindow(r.readCall, r.sequential)}); !math.IsNaN(us) {
			return us, true
		}
	}
	if (r.flusher || r.batched) && r.write && access == "seq" && !r.lone {
		kind := uint8(latWritebackEach)
		if r.bios || d != nil && d.d.Synchronous {
			kind = latWriteback
		}
		if us := d.get(latKey{kind: kind, size: r.size}); !math.IsNaN(us) {
			return us, true
		}
	}
	if access == "rand" && r.ahead && !r.write && d != nil && d.d.Positional() {
		// A disk read ahead into its cache after the earlier read: this
		// one is served from it, as a sequential read is.
		return serviceOr(d, false, "seq", r.size, 1, fallback), false
	}
	us = serviceOr(d, r.write, access, r.size, float64(r.depth), fallback)
	if access == "rand" && r.distance >= 0 && d != nil && us != fallback {
		us *= d.distanceFactor(r.write, r.distance)
	}
	return us, false
}

// syncOn is a flush's time on a drive that measured its write-and-flush
// cycle, or a write's that found the device idle for a while and starts
// where its last request ended (a journal's commit block after the
// journal, an fsync'd file's next block): the cycle's write, and the rest
// of its size at the drive's sequential rate. ok is false for other
// requests, or where the cycle was not measured.
func syncOn(d *latencies, r *request) (us float64, ok bool) {
	if d == nil || d.d.SyncWrite == nil {
		return 0, false
	}
	sw := d.d.SyncWrite
	switch {
	case r.flush:
		return sw.FlushUs, true
	case r.write && r.paused && r.distance == 0:
		rest := 0.0
		if r.size > syncWriteSize {
			rest = serviceOr(d, true, "seq", r.size, 1, 0) - serviceOr(d, true, "seq", syncWriteSize, 1, 0)
		}
		return sw.WriteUs + max(rest, 0), true
	}
	return 0, false
}

// syncWriteSize is the write of bench's write-and-flush cycle.
const syncWriteSize = 4 << 10

// pauseNs is how long a device idle before a write makes it a write after
// a pause: longer than fio's turnaround between one write's completion and
// the next one's arrival in the sequential tests (tens of µs), shorter than
// a flush's round trip through a journal.
const pauseNs = 100_000

// streamMin is the smallest readahead request taken for a stream's:
// readahead windows start at 128 KiB on Linux (64 KiB after a small first
// read); small files read one after another are not a stream.
const streamMin = 64 << 10

// serviceOr is d's latency for a shape, or fallback (µs) where d lacks the
// direction.
func serviceOr(d *latencies, write bool, access string, size int64, inflight, fallback float64) float64 {
	if us := d.get(latKey{write: write, access: access, size: size, inflight: inflight}); !math.IsNaN(us) {
		return us
	}
	return fallback
}

// deviceTime is a block request's latency from a profile's (us), as a
// trace's block requests show it: fio's latencies hold what its waiting
// cost beside the device's time (drive.Spec.WaitUs), one wait for the
// requests in flight together. A figure not from the profile (recorded:
// the recorded latency stood in), or a stream's share, stays.
func (l *latencies) deviceTime(us, recorded float64, shared bool, depth int) float64 {
	if l == nil || l.d.WaitUs == nil || shared || us == recorded || math.IsNaN(us) {
		return us
	}
	return math.Max(us-*l.d.WaitUs/float64(max(depth, 1)), us/2)
}

// latencies remembers a drive profile's answers: a trace asks for the
// same few shapes millions of times, and each answer interpolates over the
// whole profile.
type latencies struct {
	d    *drive.Spec
	memo map[latKey]float64
	// byDistance remembers DistanceFactor by direction and quarter
	// doublings of the distance.
	byDistance map[[2]int]float64
}

// distanceFactor is the drive's DistanceFactor (WriteDistanceFactor for
// a write), remembered by quarter doublings (a disk's seek changes little
// within one).
func (l *latencies) distanceFactor(write bool, distance int64) float64 {
	k := int(4 * math.Log2(float64(max(distance, 1))))
	key := [2]int{boolIdx(write), k}
	if f, ok := l.byDistance[key]; ok {
		return f
	}
	if l.byDistance == nil {
		l.byDistance = map[[2]int]float64{}
	}
	at := int64(math.Exp2(float64(k) / 4))
	f := l.d.DistanceFactor(at)
	if write {
		f = l.d.WriteDistanceFactor(at)
	}
	l.byDistance[key] = f
	return f
}

type latKey struct {
	kind     uint8
	write    bool
	access   string
	size     int64
	inflight float64
	window   int64 // a stream's readahead window
}

const (
	latService = iota
	latStream
	latWriteback
	latWritebackEach
)

// maxRemembered bounds the answers kept (a crafted trace can ask for
// millions of sizes).
const maxRemembered = 1 << 16

func (l *latencies) get(k latKey) float64 {
	if v, ok := l.memo[k]; ok {
		return v
	}
	var v float64
	switch k.kind {
	case latStream:
		v = l.d.StreamUs(k.size, k.window)
	case latWriteback:
		v = l.d.WritebackUs(k.size)
	case latWritebackEach:
		v = l.d.WritebackEachUs(k.size)
	default:
		op := "read"
		if k.write {
			op = "write"
		}
		v = l.d.ServiceUs(op, k.access, k.size, k.inflight)
	}
	if len(l.memo) >= maxRemembered {
		clear(l.memo)
	}
	l.memo[k] = v
	return v
}

// latenciesOf is d's remembered answers, shared by the engines; nil for
// nil.
func (b *Builder) latenciesOf(d *drive.Spec) *latencies {
	if d == nil {
		return nil
	}
	l := b.lats[d]
	if l == nil {
		if b.lats == nil {
			b.lats = map[*drive.Spec]*latencies{}
		}
		l = &latencies{d: d, memo: map[latKey]float64{}}
		b.lats[d] = l
	}
	return l
}

// faultItem is a request waited for outside any call: a page fault (or,
// without a syscall layer, any request of a process).
func faultItem(r *request) item {
	l := float64(r.end - r.start)
	estNs := 0.0
	if r.fromProfiled {
		estNs = r.fromUs * 1e3
	}
	return item{call: call{start: r.start, end: r.end, pid: r.pid, tid: r.tid, kind: kindRequest, blocked: -1},
		bound: true, asleep: l, fromNs: r.fromUs * 1e3, toNs: r.toUs * 1e3, fromEstNs: estNs}
}

// programTime is one program's drive-bound time, summed over its items (ns).
type programTime struct {
	waitSums
	whole     float64 // its processes' first to last item, summed
	newAsleep float64
	rescaled  bool
	// throttled: the recording drive's profile is a cgroup's limits;
	// toThrottled: the new drive's; same: the new drive is the recording's.
	throttled, toThrottled, same bool
}

// rescale is the program's time asleep for the drive (asleep), taken to a
// drive whose time for the same requests is to instead of from. When the
// recording drive's time fits in the program's stretch (whole), what it
// does not explain stays (asleep − from + to: a lock, a flush, a journal
// commit) — except behind a cgroup's limits, where it is the throttle's.
// When the stretch was shorter than the profile says (a burst a throttle
// let through, the drive's own cache — the VM disk's host caches what was
// just written —, readahead running alongside the copy), the recording
// drive's time is taken at the share k that fits (whole ÷ from) — not the
// recorded wait times the drives' ratio, which would have a recording that
// hardly waited predict hardly waiting on any drive; the two agree where
// from = whole, so a profile a little off does not flip the answer. What
// let the recording drive beat its profile is its own: the new drive's
// time is its profile's whole (a 256 MiB copy that the VM disk's host
// cache served in half its profile's time, taken at that half onto the
// USB model: −35 %; at the profile's: +27 %) — but on the recording drive
// itself, at k too. The readahead in it may run alongside the program's
// computation on an asynchronous drive (never on a bio-based one, which
// serves it on the reader's CPU): its drive time is waited for only where
// it exceeds that computation — a roofline. A bio-based recording drive's time was
// computation, not sleep, and comes out of the computation. toSync: the new
// drive is bio-based. On the recording drive (to = from) it is the time
// recorded.
func (s *programTime) rescale(toSync bool) float64 {
	if s.from <= 0 {
		return s.asleep + s.to
	}
	k := math.Min(1, s.whole/s.from)
	kFrom, kTo := k, 1.0
	if s.same {
		kTo = k
	}
	if s.throttled && !s.same && s.asleep < kFrom*s.from {
		// Behind a cgroup's limits the program slept less than the
		// profile says where its computation between requests filled the
		// token bucket (fio's random reads with 100 µs of think time slept
		// 575 µs a read, the profile's back-to-back reads 674): its sleep
		// is the throttle's, and the profile is taken at the share it
		// slept.
		kFrom = s.asleep / s.from
	}
	if s.throttled && s.asleep > s.from {
		// Behind a cgroup's limits, sleep the profile does not explain is
		// the throttle's too (a token bucket's debt, paid later): it goes
		// with the drive, not as a lock's would — and comes again behind
		// limits on the new drive.
		kFrom = s.asleep / s.from
		if s.toThrottled {
			kTo = kFrom
		}
	}
	// The computation the readahead ran alongside: on the recording drive
	// what the recording shows (its time in flight not slept through); on
	// the new one also a streaming call's, whose next requests go while it
	// copies — behind a throttle a cp slept through all its readahead's
	// recorded time (the throttle held the next bios, not the device),
	// and on the VM disk its 0.14 s of copying hid most of the reads.
	cpu, cpuTo := s.cpu, s.cpuTo
	if !s.aheadSync {
		cpu = math.Min(cpu, s.overlap)
		cpuTo = math.Min(cpuTo, math.Max(s.overlap, s.streamCPU))
	} else {
		// A bio-based drive read it all on the reader's CPU: on the new
		// drive only a streaming call's computation may run beside its
		// readahead — grep -r sleeps through each small file's one
		// request (from zram to the VM disk: −39 → −32 %).
		cpuTo = math.Min(cpuTo, s.streamCPU)
	}
	if s.same {
		cpuTo = cpu
	}
	alongside := func(ahead, cpu float64, sync bool) float64 {
		if sync {
			return ahead
		}
		return math.Max(0, ahead-cpu)
	}
	// Requests on devices that do not move take the same time on both
	// sides: at the recording's share.
	stay := s.stay - s.stayAhead
	serial := s.asleep - kFrom*(s.from-s.fromAhead) + kTo*(s.to-s.toAhead-stay) + kFrom*stay
	if fromMoving, toMoving := kFrom*(s.from-s.stay), kTo*(s.to-s.stay); !s.same && !s.throttled && fromMoving > 0 {
		// What the drive's time does not explain, within the profile's
		// uncertainty, is the drive's as well where that time is an
		// estimate, and moves with it; only the rest stays (a lock, a
		// commit the profile does not know). The same tar -x's sync slept
		// 16.4 and 15.0 s on the HDD model, for ~1,600 writeback requests
		// in flight together whose recorded latencies, divided among them,
		// came to 19.4 and 13.3 s: the 1.7 s left over would have stayed on
		// a drive 300 times as fast. Readahead's drive time counts too: cp of
		// 256 MiB on the USB model, with its late writeback left out,
		// slept 0.19 s beyond its reads' 9.6 s, nearly all readahead;
		// kept, that took it onto the VM disk at +110 %, moved +7 %.
		// What one request alone leaves is no estimate: it stays.
		if unexplained := s.asleep - kFrom*s.from; unexplained > 0 {
			drives := min(unexplained, drive.BenchUncertainty*min(kFrom*s.fromEstimated, fromMoving))
			serial += drives * (toMoving/fromMoving - 1)
		}
	}
	toAhead := kTo*(s.toAhead-s.stayAhead) + kFrom*s.stayAhead
	left := serial - alongside(kFrom*s.fromAhead, cpu, s.aheadSync)
	if ahead := kFrom * s.fromAhead; !s.aheadSync && !s.same && left < -s.sync && ahead > toAhead {
		// The program slept less than its drive time says, and its
		// readahead ran longer beside it than its computation: the rest ran
		// beside its other requests (windows in flight together, Chromium's
		// processes faulting through one binary on the HDD model). That
		// share of the readahead hides the same share of a faster drive's,
		// which is less.
		parallel := min(-s.sync-left, max(0, s.overlap-cpu), ahead-min(cpu, ahead))
		left += parallel * (1 - toAhead/ahead)
	}
	// Its computation's change runs alongside in the same share as the
	// computation does: a colder wake-up follows the wait, it does not
	// hide it. Below zero only by the bio-based drive time that comes out
	// of the computation.
	delta := s.cpuDelta
	if s.cpu > 0 {
		delta *= math.Min(1, cpuTo/s.cpu)
	}
	// The readahead that continued a stream on a bio-based recording
	// drive was served on the reader's CPU as it came; a drive that
	// queues it reads the next window while the reader computes through
	// the last one (tar -x reading its archive on zram, onto the VM disk:
	// its 77 ms of readahead there behind its 170 ms of computation). It
	// runs alongside the computation the rest of the readahead did not
	// take.
	stream := 0.0
	if s.aheadSync && !toSync && !s.same {
		stream = min(kTo*s.toStream, toAhead)
	}
	first := math.Max(0, cpuTo+delta)
	used := math.Min(first, toAhead-stream)
	ahead := alongside(toAhead-stream, first, toSync) + alongside(stream, math.Max(0, s.cpu+delta-used), false)
	newAsleep := math.Max(-s.sync, left+ahead)
	if toSync && !s.same {
		// A bio-based drive's time is its callers' own: none of it hides
		// behind their computation, as the recording drive's did where
		// they slept less than its requests took (cp -r on the USB model
		// slept 6 µs a request less, 0.06 s in all: a fifth of its time
		// on zram).
		newAsleep = math.Max(newAsleep, kTo*(s.to-s.stay)-s.sync)
	}
	return newAsleep
}

// wakeSlack is how long after a request's completion the sleeper it woke
// may take to run.

const wakeSlack = 50_000 // ns

// accessOf says whether an I/O continues one of the last 8 on its device
// (sequential) or not, and how far it starts from where the last one
// ended (−1: no last one, or no offset), and remembers where it ends.
func accessOf(recent map[event.Dev]*devRecent, dev event.Dev, offset, size int64, write bool) (access string, distance int64, ahead bool) {
	access, distance = "rand", -1
	r := recent[dev]
	if r == nil {
		r = &devRecent{}
		recent[dev] = r
	}
	for _, e := range r.ends {
		if e == offset {
			access = "seq"
		}
	}
	if n := len(r.ends); n > 0 && offset >= 0 {
		distance = offset - r.ends[n-1]
		if distance < 0 {
			distance = -distance
		}
	}
	// A disk's cache holds what follows its last read, until a write
	// over it: requests elsewhere in between move the head, not that.
	end := offset + size
	ahead = !write && r.cached && offset >= r.cacheFrom && end <= r.cacheTo+drive.ReadAheadBytes
	switch {
	case !write && offset >= 0:
		r.cached, r.cacheFrom, r.cacheTo = true, offset, end
	case write && offset < r.cacheTo+drive.ReadAheadBytes && end > r.cacheFrom:
		r.cached = false
	}
	r.ends = append(r.ends, end)
	if len(r.ends) > 8 {
		r.ends = r.ends[1:]
	}
	return access, distance, ahead
}

// nearestEnd is how far offset is from the nearest of where r's last
// requests ended (−1: none, or no offset). A bio-based device's flushers
// write back in the order they walk the files, and the device takes each
// bio as it comes; a request-based drive's I/O scheduler holds a burst of
// them and sorts it by place, so that a disk's head steps from each to
// the next one up: tar -x's writeback on zram jumped 688 times in 9,366
// bios, the same bios sorted 32 at a time 347 times, and the HDD model's
// own writeback 332 times.
func nearestEnd(r *devRecent, offset int64) int64 {
	if r == nil || offset < 0 {
		return -1
	}
	near := int64(-1)
	for _, e := range r.ends {
		d := offset - e
		if d < 0 {
			d = -d
		}
		if near < 0 || d < near {
			near = d
		}
	}
	return near
}

// devRecent is where a device's last requests ended (the newest last),
// and what its cache holds: from where its last read began to where it
// ended, and the read-ahead after it.
type devRecent struct {
	ends               []int64
	cached             bool
	cacheFrom, cacheTo int64
	journal            bool // the last request was a journal's (blockIO.journal)
}

func secs(ns int64) float64   { return float64(ns) / 1e9 }
func round(v float64) float64 { return math.Round(v*1000) / 1000 }
