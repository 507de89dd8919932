package predict

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/order"
)

// An engine runs the model for one pair of drives on what the front
// releases (calls and requests in arrival order, holdNs behind the newest
// completion seen, so that a call or wait up to that long finds every
// request that arrived or completed while it was outstanding), in memory
// that does not grow with the trace. A released request gets its latency
// on both drives; a call is matched with its requests once every request
// that could be its has been released; a request no call or wait took, of
// a process that had nothing outstanding, is a page fault once no earlier
// call can still take it; a request no later call can take is forgotten.
// Matched items then go, in arrival order, into per-process sums and busy
// periods (accumulator).
type engine struct {
	b        *Builder
	from, to *drive.Spec
	// Each drive's remembered latencies (from: nil where the recorded ones
	// stand in), and those the flushers' writes go at: the same disk
	// outside a cgroup v1 throttle, where known.
	latFrom, latTo           *latencies
	latFlushFrom, latFlushTo *latencies
	noCalls                  bool               // every block request is waited for (no syscall layer)
	moving                   map[event.Dev]bool // the devices whose I/O moves (nil: all)
	reqs                     []request
	reqHead                  int
	reqSeq                   int64 // seq of reqs[reqHead]
	maxLat                   int64
	ends                     map[event.Dev]*devFlight // each device's requests in flight, at the latest released arrival
	recent                   map[event.Dev]*devRecent
	undecided                []int64 // seqs of possible page faults, in arrival order
	pending                  []item  // released calls and waits, in arrival order
	pendingHead              int
	directEnds               inFlight
	directRecent             map[event.Dev]*devRecent
	lastEnd                  map[uint32]int64    // each process's latest end of a matched item
	lastBio                  map[uint32]bioMark  // each process's latest write on a bio-based device
	lastRead                 map[uint32]bioMark  // each process's latest read on a bio-based device, not readahead
	lastAhead                map[uint32]bioMark  // and its latest readahead there (follow)
	waited                   map[uint32]*waitLog // each thread's recent waits
	finished                 itemHeap            // matched items and faults, by arrival
	set                      []*request
	byTest                   map[string]float64
	testTotal                float64
	accum                    accumulator
	cacheFrom                float64 // page cache CPU ns per byte read, on each drive
	cacheTo                  float64
	cacheKnown               bool
	wakeKnown                bool // both drives' wake-ups measured
	// recordedOwn: the recorded block latencies are the recording drive's
	// own — no cgroup's throttle held the bios before the block layer saw
	// them. sameDrive: the new drive is the recording one.
	recordedOwn, sameDrive bool
	// buckets: what is left of the new drive's cgroup throttle budget;
	// limits: its requests and bytes a second, reads and writes (its
	// profile's most; 0: not yet asked).
	buckets map[bucketKey]*tokenBucket
	limits  [2][2]float64
	// windows: where each device's reads around a fault would have
	// reached on the new drive, whose readahead window is wider (nil: it
	// is not).
	windows map[event.Dev]*readWindows
	// streams: each program's sequential stream on each device, and the
	// new drive's time of the last windows it never reached, not yet
	// taken off its later readahead (µs; nil: the new drive's window is
	// no narrower).
	streams     map[streamKey]*streamTail
	aheadCredit map[string]float64
	// faultWindows: where each device's current read around a fault
	// began, on a new drive with a head whose window is narrower (nil: it
	// is not).
	faultWindows map[event.Dev]faultWindow
	readers      *readers // the front's
	leftStreams  int      // streams whose unreached window came off (tests)
	// readTo is what the new drive reads of the devices that move: the
	// recorded reads, with the windows a wider or narrower readahead reads
	// instead.
	readTo int64
	// readToFaults is the share of readTo read around faults, in windows
	// no wider than the new drive's.
	readToFaults int64
	// Writeback nothing waited for: the latest start of a flusher's write
	// and the latest end of one the workload waited for
	// (noteWaitedWriteback), MinInt64 for none; after is where the run
	// ends on the new drive (0: not known), lateBytes what was written
	// back from then on, left out, and lateFirst the first of those writes.
	lastFlusherWrite, waitedFlusherEnd int64
	after, lateBytes, lateFirst        int64
}

// holdNs is how far behind the newest completion an I/O is released: the
// longest call matched exactly (and the profile's re-sorting window).
const holdNs = int64(10e9)

func newEngine(b *Builder, from, to *drive.Spec, unthrottled [2]*drive.Spec, noCalls bool) *engine {
	e := &engine{b: b, from: from, to: to, noCalls: noCalls,
		latFrom: b.latenciesOf(from), latTo: b.latenciesOf(to),
		latFlushFrom: b.latenciesOf(cmp.Or(unthrottled[0], from)), latFlushTo: b.latenciesOf(cmp.Or(unthrottled[1], to)),
		ends: map[event.Dev]*devFlight{}, recent: map[event.Dev]*devRecent{}, directRecent: map[event.Dev]*devRecent{}, lastEnd: map[uint32]int64{}, lastBio: map[uint32]bioMark{}, lastRead: map[uint32]bioMark{}, lastAhead: map[uint32]bioMark{},
		waited: map[uint32]*waitLog{},
		byTest: map[string]float64{}}
	e.moving = b.moving
	e.recordedOwn = unthrottled[0] == nil && !b.recordedThrottled
	e.sameDrive = from != nil && (from == to || from.Name != "" && from.Name == to.Name)
	if from != nil && from.ReadaheadKB > 0 && to.ReadaheadKB > from.ReadaheadKB {
		e.windows = map[event.Dev]*readWindows{}
	}
	if from != nil && to.ReadaheadKB > 0 && to.ReadaheadKB < from.ReadaheadKB {
		e.streams, e.aheadCredit = map[streamKey]*streamTail{}, map[string]float64{}
		if to.Positional() {
			e.faultWindows = map[event.Dev]faultWindow{}
		}
	}
	e.accum.init()
	e.accum.wakes = &b.wakes
	e.accum.taken = &b.taken
	if from != nil {
		e.accum.idleFrom = idleOf(from, from.IdleWake)
		// A profile from a review's numbers has no measure of the machine:
		// the work runs on the recording's, with the new drive in it.
		e.accum.idleTo = idleOf(to, cmp.Or(to.IdleWake, from.IdleWake))
	}
	if from != nil && from.CacheReadCPU != nil && to.CacheReadCPU != nil {
		const nsPerUsMiB = 1e3 / (1 << 20) // µs per MiB → ns per byte
		e.cacheFrom, e.cacheTo, e.cacheKnown = pageCacheCPU(from)*nsPerUsMiB, pageCacheCPU(to)*nsPerUsMiB, true
	}
	e.wakeKnown = from != nil && from.WakeUs != nil && to.WakeUs != nil
	e.after = b.writebackAfter
	e.lastFlusherWrite, e.waitedFlusherEnd, e.lateFirst = math.MinInt64, math.MinInt64, math.MaxInt64
	return e
}

// idleOf is what computing after a drive's waits costs: the host's
// measure (machine), or none on a bio-based drive (its CPUs never idle
// for it).
func idleOf(d *drive.Spec, machine *drive.IdleWake) *drive.IdleWake {
	if machine != nil && d.Synchronous {
		return &drive.IdleWake{TaskUs: machine.TaskUs}
	}
	return machine
}

// pageCacheCPU is the page cache's CPU per MiB a buffered read from d
// costs (µs), beside what the drive takes for it: bench measures the
// reader's CPU time, which on a bio-based drive holds the drive's own
// service too (zram decompresses on the reader's CPU) — and the model
// counts that as the drive's time already.
func pageCacheCPU(d *drive.Spec) float64 {
	cpu := *d.CacheReadCPU
	if d.Synchronous {
		if s := d.StreamUs(1<<20, 0); s > 0 {
			cpu = max(cpu-s, 0)
		}
	}
	return cpu
}

// moves says whether dev's I/O moves to the new drive.
func (e *engine) moves(dev event.Dev) bool { return e.moving == nil || e.moving[dev] }

// front re-sorts the calls and requests by arrival, once for every
// engine, and releases them holdNs behind the newest completion seen.
type front struct {
	engines   []*engine
	reqIn     order.Queue[blockIO]
	itemIn    order.Queue[call]
	group     []blockIO
	watermark int64
	any       bool
	released  int64 // every request and call arriving before this is released
	late      int64 // came after that
	peakHeld  int   // the most I/Os held at once (tests)
	finished  bool
	readers   readers
}

func newFront(engines []*engine) *front {
	f := &front{engines: engines, released: math.MinInt64}
	for _, e := range engines {
		e.readers = &f.readers
	}
	return f
}

// add takes a call, wait, advice or block request the Builder kept.
func (f *front) add(e *event.Event) {
	w := e.Op == event.Write
	if e.Layer == event.Syscall {
		f.readers.add(e)
		if e.Call == event.CallFadvise {
			return
		}
	}
	if e.Layer == event.Block {
		kernel := e.Flags&event.FlagKernel != 0
		flush := e.Op == event.Flush
		r := blockIO{start: e.Start, end: e.End, size: e.Size, offset: e.Offset, pid: e.Pid, tid: e.Tid, dev: e.Dev,
			write: w || flush, flush: flush, kernel: kernel, flusher: kernel && isFlusher(e.Comm), pastThrottle: kernel && pastThrottle(e.Comm),
			readahead: e.Flags&event.FlagReadahead != 0, journal: kernel && w && e.Flags&event.FlagMeta != 0 && e.Flags&event.FlagSync != 0}
		f.addRequest(&r)
		return
	}
	c := call{start: e.Start, end: e.End, pid: e.Pid, tid: e.Tid, blocked: -1, size: e.Size, offset: e.Offset, dev: e.Dev}
	if e.Flags&event.FlagBlocked != 0 {
		c.blocked = e.Blocked
	}
	c.syncs = e.Op == event.Flush
	switch {
	case e.IsWait():
		c.kind, c.reads, c.writes = kindWait, true, true
	case e.Op.IsData() && e.Flags&(event.FlagDirect|event.FlagAsync) != 0:
		c.kind = kindDirect
		c.reads, c.writes = !w, w
	case e.Call == event.CallCopyFileRange || e.Call == event.CallSendfile:
		c.reads, c.writes = true, true
	default:
		c.reads, c.writes = !w, w || e.Op == event.Flush
	}
	f.addCall(&c)
}

// dropNoCalls stops the engines that model a trace without a syscall
// layer: it has one.
func (f *front) dropNoCalls() {
	f.engines = slices.DeleteFunc(f.engines, func(e *engine) bool { return e.noCalls })
}

func (f *front) addCall(c *call) {
	f.itemIn.Push(c.start, c)
	f.took(c.start, c.end)
}

func (f *front) addRequest(r *blockIO) {
	f.reqIn.Push(r.start, r)
	f.took(r.start, r.end)
}

// took notes an I/O from start to end, taken in, and releases what is
// now far enough behind.
func (f *front) took(start, end int64) {
	if start < f.released {
		f.late++
	}
	if !f.any || end > f.watermark {
		f.watermark, f.any = end, true
	}
	f.advance(f.watermark - holdNs)
	// Bounded by count as well (see maxHeld): what shares the earliest
	// instant goes on, whatever the watermark says.
	for f.reqIn.Len()+f.itemIn.Len() > maxHeld {
		first := int64(math.MaxInt64)
		if f.reqIn.Len() > 0 {
			first = f.reqIn.MinKey()
		}
		if f.itemIn.Len() > 0 {
			first = min(first, f.itemIn.MinKey())
		}
		f.advance(first + 1)
	}
}

// maxHeld bounds the I/O the front holds by count: a capture whose events
// share one timestamp never moves the watermark past them.
const maxHeld = 1 << 16

// advance releases what arrived before t to the engines, which match what
// they can and move it on.
func (f *front) advance(t int64) {
	if t <= f.released {
		return
	}
	f.released = t
	// Requests first, a whole instant at a time: those arriving together
	// count each other in flight.
	for f.reqIn.Len() > 0 && f.reqIn.MinKey() < t {
		at := f.reqIn.MinKey()
		f.group = f.group[:0]
		for f.reqIn.Len() > 0 && f.reqIn.MinKey() == at {
			r := *f.reqIn.Front()
			f.reqIn.Drop()
			switch {
			case !r.readahead || r.write:
			case r.kernel:
				r.readCall, r.sequential = f.readers.ofKernel(r.start)
			default:
				r.readCall, r.sequential = f.readers.of(r.pid, r.start)
			}
			f.group = append(f.group, r)
		}
		for _, e := range f.engines {
			e.serve(f.group)
		}
	}
	for f.itemIn.Len() > 0 && f.itemIn.MinKey() < t {
		for _, e := range f.engines {
			e.pending = append(e.pending, item{call: *f.itemIn.Front()})
		}
		f.itemIn.Drop()
	}
	held := f.reqIn.Len() + f.itemIn.Len()
	for _, e := range f.engines {
		held += e.held()
		e.match(t)
	}
	f.peakHeld = max(f.peakHeld, held)
}

// finish releases and matches everything, a step at a time so that what
// is released is matched and moved on before the next: the held I/O, not
// all of it at once.
func (f *front) finish() {
	if f.finished {
		return
	}
	f.finished = true
	for f.reqIn.Len() > 0 || f.itemIn.Len() > 0 {
		next := int64(math.MaxInt64)
		if f.reqIn.Len() > 0 {
			next = f.reqIn.MinKey()
		}
		if f.itemIn.Len() > 0 {
			next = min(next, f.itemIn.MinKey())
		}
		t := max(next, f.released)
		if t > math.MaxInt64-finishStep {
			break
		}
		f.advance(t + finishStep)
	}
	f.advance(math.MaxInt64)
	for _, e := range f.engines {
		e.finish()
	}
}

// bioMark is where a process's latest bio of a kind on a bio-based
// device ended, on the device and in time.
type bioMark struct {
	dev       event.Dev
	offsetEnd int64
	end       int64
}

// burstGapNs is how soon after its process's last bio a bio must come to
// be the same burst: a submitter's time between the buffers of one call
// (sync's metadata blocks on zram: 0.6 µs at the median, 2.6 µs at the
// 99th percentile; 7,866 of the flusher's 7,953 bios after tar -x within
// it), well short of a wait between (a journal's first block after the
// fsync'd data it commits).
const burstGapNs = 20_000

// maxBioMarks bounds the processes remembered (a trace may hold
// thousands).
const maxBioMarks = 1 << 12

// follow remembers r as its process's latest in marks, and gives the one
// before it (ok: there was one).
func follow(marks map[uint32]bioMark, r *request) (last bioMark, ok bool) {
	last, ok = marks[r.pid]
	if !ok && len(marks) >= maxBioMarks {
		clear(marks)
	}
	marks[r.pid] = bioMark{dev: r.dev, offsetEnd: r.offset + r.size, end: r.end}
	return last, ok
}

// continuesBurst says whether r, a write recorded on a bio-based device,
// comes right after its process's previous bio (burst): the bios of one
// burst would have waited together in a request-based drive's queue,
// where the block layer sorts them by place; and whether it also starts
// where that bio ended (batched): a batch of buffers (a sync writing a
// file system's metadata block by block) that the block layer plugs and
// merges into its largest requests.
//
// paused says its process had sent nothing there for a while (pauseNs):
// a journal's first bio for an fsync, not a flusher's next file (20-100
// us apart after tar -x on zram).
func (e *engine) continuesBurst(r *request) (burst, batched, paused bool) {
	last, ok := follow(e.lastBio, r)
	burst = ok && last.dev == r.dev && r.start >= last.end && r.start-last.end < burstGapNs
	paused = !ok || last.dev != r.dev || r.start-last.end >= pauseNs
	return burst, burst && last.offsetEnd == r.offset, paused
}

// continuesReads says whether r, a read recorded on a bio-based device
// (not readahead), is the next bio of its process's call: it starts where
// the last one ended, right after it completed, and the call asked for
// more than it (or is a splice, whose size says nothing of its bios). A
// file read page by page so — cp on zram read 1,365 and 1,941 of a 256
// MiB file's pages one bio each, in runs of 64, in two of three runs —
// goes to a drive with a request queue as the block layer plugs and
// merges it: a request per run, not a request per page.
func (e *engine) continuesReads(r *request) bool {
	last, ok := follow(e.lastRead, r)
	call, calling := e.readers.calling(r.pid, r.start)
	return ok && calling && (call == 0 || call > r.size) && last.dev == r.dev && last.offsetEnd == r.offset &&
		r.start >= last.end && r.start-last.end < burstGapNs
}

// continuesStream says whether r, readahead recorded on a bio-based
// device, starts where its process's last readahead there ended: the
// next window of a stream, which Linux reads ahead asynchronously when
// the reader reaches the last one — not a file's first window, which the
// reader waits for (grep -r's small files, each one request).
func (e *engine) continuesStream(r *request) bool {
	last, ok := follow(e.lastAhead, r)
	return ok && last.dev == r.dev && last.offsetEnd == r.offset
}

// held is how many I/Os the engine holds beyond the front's.
func (e *engine) held() int {
	return len(e.reqs) - e.reqHead + len(e.pending) - e.pendingHead + e.finished.len()
}

// serve takes requests that arrived together and gives them their depth
// and their latency on both drives.
func (e *engine) serve(arrived []blockIO) {
	first := len(e.reqs)
	for _, r := range arrived {
		if r.kernel && e.servesUpper(&r) {
			continue
		}
		if r.flusher && r.write && !r.flush {
			if e.after > 0 && r.start >= e.after {
				// Written back after the run would have ended on the new
				// drive: it holds up nothing there.
				e.lateFirst = min(e.lateFirst, r.start)
				e.lateBytes += r.size
				continue
			}
			e.lastFlusherWrite = max(e.lastFlusherWrite, r.start)
		}
		e.reqs = append(e.reqs, request{blockIO: r})
	}
	group := e.reqs[first:]
	for i := range group {
		ends := e.ends[group[i].dev]
		if ends == nil {
			ends = &devFlight{byPid: map[uint32]int{}}
			e.ends[group[i].dev] = ends
		}
		ends.completeUpTo(group[0].start)
		// After a pause, or right after a flush: a journal's commit block
		// goes once the flush before it is done, on any drive that takes
		// flushes (how long the pause was is the recording drive's). A
		// bio-based device is idle between any two requests, its
		// submitter computing: no pause there.
		idle := group[i].start-ends.idleSince >= pauseNs && !e.b.synchronous[group[i].dev]
		group[i].paused = ends.len() == 0 && ends.any && (ends.lastFlush || idle)
		if ends.len() == 0 && ends.any {
			group[i].idleNs = group[i].start - ends.idleSince
		}
		// A flusher's write into an idle device is waited for alone (the
		// journal's write of an fsync's transaction, 90-130 us after the
		// file's data on the VM disk): it costs a command, where a stream
		// written back (its next request sent as the last completes)
		// shares each command's cost with those queued behind it (the
		// USB model: 2.4 ms for the journal's 28 KiB, 1.1 ms in a stream).
		group[i].lone = group[i].flusher && group[i].write && ends.len() == 0 && ends.any &&
			(ends.lastFlush || group[i].start-ends.idleSince >= burstGapNs)
		ends.add(group[i].end, group[i].pid)
		ends.lastFlush = group[i].flush
	}
	for i := range group {
		r := &group[i]
		access, distance, ahead := "", int64(-1), false
		if !r.flush { // a flush has no place on the device
			near := int64(-1)
			if r.readahead && !r.write && e.b.synchronous[r.dev] {
				r.streamed = e.continuesStream(r)
			}
			if !r.readahead && !r.write && e.b.synchronous[r.dev] {
				if r.batched = e.continuesReads(r); r.batched {
					r.readCall, r.sequential = e.readers.of(r.pid, r.start) // its window, as readahead's
				}
			}
			if r.write && e.b.synchronous[r.dev] {
				var burst, paused bool
				burst, r.batched, paused = e.continuesBurst(r)
				r.lone = r.flusher && paused
				if burst && r.flusher && !e.to.Synchronous {
					near = nearestEnd(e.recent[r.dev], r.offset)
				}
			}
			wasJournal := e.recent[r.dev] != nil && e.recent[r.dev].journal
			access, distance, ahead = accessOf(e.recent, r.dev, r.offset, r.size, r.write)
			e.recent[r.dev].journal = r.journal
			if near >= 0 {
				distance = near
			}
			r.layoutJump = distance > 0 && r.journal != wasJournal
		}
		ends := e.ends[r.dev]
		r.depth, r.distance, r.ahead = ends.len(), distance, ahead
		r.bios = e.b.synchronous[r.dev]
		r.saved = e.b.saved[r.dev]
		own := ends.byPid[r.pid] == ends.len() // its process's requests alone on the device
		recorded := float64(r.end-r.start) / 1e3
		lf, lt := e.latFrom, e.latTo
		waitUs := 0.0 // for the throttle's budget, before the device's own time
		if r.pastThrottle && r.write {
			lf, lt = e.latFlushFrom, e.latFlushTo
		} else if e.to.Cgroup != "" && !e.sameDrive {
			if wait, paced := e.withinBudget(r); paced {
				lt, waitUs = e.latFlushTo, wait
			}
		}
		if us, read, ok := e.widerWindow(r, access); ok {
			r.toUs, r.toShared = us, false
			e.readTo += read
			e.readToFaults += read
		} else {
			if !r.write && e.moves(r.dev) && !e.windowsCover(r) {
				e.readTo += r.size
				if r.aroundFault() {
					e.readToFaults += r.size
				}
			}
			if e.narrowerFault(r, access) {
				// Its own fault's read on the new drive, later: the head is
				// elsewhere by then.
				alone := *r
				alone.distance, alone.ahead = -1, false
				r.toUs, r.toShared = requestOn(lt, &alone, "rand", recorded)
			} else {
				r.toUs, r.toShared = requestOn(lt, e.onTarget(r), access, recorded)
			}
			r.toUs = lt.deviceTime(r.toUs, recorded, r.toShared, r.depth) + waitUs
		}
		if e.streams != nil && e.moves(r.dev) {
			e.unreachedWindow(r)
		}
		e.spent(r)
		r.fromUs = recorded
		switch {
		case lf == nil:
		case own && e.recordedOwn:
			// Alone on its device, or with its own process's requests only
			// (a stream's readahead), it took what the drive takes for it:
			// no profile knows that better (a disk's profile averages over
			// distances and rotations; a few per cent of a slow recording
			// left over would be most of the time on a fast drive). Beside
			// others' requests, part of its latency is theirs.
			if e.sameDrive {
				r.toUs, r.toShared = recorded, false
			}
		default:
			r.fromUs, r.fromShared = requestOn(lf, r, access, recorded)
			r.fromUs = lf.deviceTime(r.fromUs, recorded, r.fromShared, r.depth)
			r.fromProfiled = r.fromUs != recorded
		}
		if !e.moves(r.dev) {
			r.fromProfiled = false
			// Stays where it was: its time does not change, and it is what
			// was recorded — the profiles are the moving drive's, not its.
			r.fromUs, r.fromShared = recorded, false
			r.toUs, r.toShared = recorded, false
		}
		e.maxLat = max(e.maxLat, r.end-r.start)
		e.countTest(r)
		seq := e.reqSeq + int64(first-e.reqHead+i)
		switch {
		case e.noCalls:
			if !r.kernel {
				fi := faultItem(r)
				e.waitCost(&fi, []*request{r})
				e.finished.push(&fi)
			}
		case !r.kernel && !r.write && (!r.readahead || e.b.synchronous[r.dev]):
			r.maybeFault = true
			e.undecided = append(e.undecided, seq)
		}
	}
}

// noteWaitedWriteback notes the flushers' writes it waited for: it syncs,
// it is a wait (woken as one completed), or they are all it took (a
// writer held back by the dirty limit sleeps until the flushers catch
// up). A call that took its own reads too took them only as they came
// while it was out (cp's one copy_file_range of a whole file).
func (e *engine) noteWaitedWriteback(it *item) {
	onlyWriteback := true
	for _, r := range e.set {
		onlyWriteback = onlyWriteback && r.flusher && r.write
	}
	if it.kind != kindWait && !it.syncs && !onlyWriteback {
		return
	}
	for _, r := range e.set {
		if r.flusher && r.write {
			e.waitedFlusherEnd = max(e.waitedFlusherEnd, r.end)
		}
	}
}

// lateWriteback is where the run would end on the new drive (ns, the
// trace's clock) when the flushers wrote back after that, and the
// workload waited for none of those writes: they ran during the recording
// because it lasted longer (the kernel's flusher wakes every 5 s and
// writes a device's dirty data back once it is over that device's share
// of the threshold), and on the new drive they come after the work. cp of
// 256 MiB on the blkio throttle took 6.8 s and had 92–168 MB written back
// from 5.0 s on; on the HDD model, between its reads, they made the copy
// 3.1 s where it took 1.8 (it ended before the flusher woke).
func (e *engine) lateWriteback(predictedS float64) (int64, bool) {
	if e.sameDrive {
		return 0, false
	}
	cut := max(e.b.first+int64(predictedS*1e9), e.waitedFlusherEnd+1)
	return cut, e.lastFlusherWrite >= cut
}

// onTarget is r as it lands on the new drive. Between a journal and a
// file's data the head moves as far as the file system put one from the
// other, which the recording's layout does not say of the new drive's
// (fsync'd files on the VM disk's file system lay 30 MB from its journal
// on one run, 2.4 GB on another; 1.8 GB on the HDD model's every run):
// there it moves a quarter of the file system, what a journal in its
// middle is from a place anywhere in it, on average.
func (e *engine) onTarget(r *request) *request {
	if !r.layoutJump || e.to.FSBytes <= 0 || e.sameDrive {
		return r
	}
	moved := *r
	moved.distance = e.to.FSBytes / 4
	return &moved
}

// servesUpper says a kernel worker's request on a device that others sit
// on (a loop device's backing disk) came while one of them had a request
// in flight: the loop device's own request, issued again below it.
func (e *engine) servesUpper(r *blockIO) bool {
	for _, up := range e.b.uppers[r.dev] {
		if f := e.ends[up]; f != nil {
			f.completeUpTo(r.start)
			if f.len() > 0 {
				return true
			}
		}
	}
	return false
}

// req is the request numbered seq, nil once forgotten.
func (e *engine) req(seq int64) *request {
	i := int(seq-e.reqSeq) + e.reqHead
	if i < e.reqHead || i >= len(e.reqs) {
		return nil
	}
	return &e.reqs[i]
}

// match takes the calls and waits whose every request has been released
// (t: everything arriving before it is), in arrival order, decides the page
// faults no later call can take, forgets what no later call needs, and
// moves matched items on.
func (e *engine) match(t int64) {
	for e.pendingHead < len(e.pending) {
		it := &e.pending[e.pendingHead]
		if it.end+wakeSlack >= t {
			break
		}
		e.decideFaults(it.start)
		e.matchItem(it)
		e.finished.push(it)
		e.pendingHead++
	}
	// What arrives later starts no earlier than the next item waiting, or t.
	next := t
	if e.pendingHead < len(e.pending) {
		next = e.pending[e.pendingHead].start
	}
	e.decideFaults(next)
	e.forget(next)
	// Matched items move on once no fault can come before them.
	until := next
	if r := e.firstOpen(); r != nil {
		until = min(until, r.start)
	}
	for e.finished.len() > 0 && e.finished.minStart() < until {
		e.accum.add(e.finished.pop())
	}
	if e.pendingHead > 1024 && e.pendingHead > len(e.pending)/2 {
		n := copy(e.pending, e.pending[e.pendingHead:])
		e.pending, e.pendingHead = e.pending[:n], 0
	}
}

// decideFaults decides the possible page faults that completed before t:
// every call or wait that could take them or overlap them has been
// matched.
func (e *engine) decideFaults(t int64) {
	e.firstOpen()
	for _, seq := range e.undecided {
		r := e.req(seq)
		if r == nil || !r.maybeFault {
			continue
		}
		if r.start >= t {
			break // arrival order: the rest complete later still
		}
		if r.end >= t {
			continue
		}
		r.maybeFault = false
		if end, ok := e.lastEnd[r.pid]; r.covered || ok && end >= r.start {
			continue
		}
		fi := faultItem(r)
		e.waitCost(&fi, []*request{r})
		e.finished.push(&fi)
	}
}

// firstOpen drops the decided possible faults at the front of the list,
// and returns the first still open (nil: none).
func (e *engine) firstOpen() *request {
	for len(e.undecided) > 0 {
		if r := e.req(e.undecided[0]); r != nil && r.maybeFault {
			return r
		}
		e.undecided = e.undecided[1:]
	}
	return nil
}

// forget drops the oldest requests that no call arriving at next or later
// can take and that are decided.
func (e *engine) forget(next int64) {
	for e.reqHead < len(e.reqs) {
		r := &e.reqs[e.reqHead]
		if r.end >= next || r.maybeFault {
			break
		}
		e.reqHead++
		e.reqSeq++
	}
	if e.reqHead > 1024 && e.reqHead > len(e.reqs)/2 {
		n := copy(e.reqs, e.reqs[e.reqHead:])
		e.reqs, e.reqHead = e.reqs[:n], 0
	}
}

// matchItem finds what a call or wait waited for.
func (e *engine) matchItem(it *item) {
	if prev, ok := e.lastEnd[it.pid]; !ok || it.end > prev {
		e.lastEnd[it.pid] = it.end
	}
	if it.kind == kindDirect {
		// Its own shape, at the direct calls in flight when it came.
		e.directEnds.completeUpTo(it.start)
		e.directEnds.add(it.end)
		access, distance, ahead := accessOf(e.directRecent, it.dev, it.offset, it.size, it.writes)
		if it.end <= it.start {
			return
		}
		r := request{blockIO: blockIO{size: it.size, write: it.writes, dev: it.dev}, depth: e.directEnds.len(), distance: distance, ahead: ahead,
			saved: e.b.saved[it.dev]}
		toUs, _ := requestOn(e.latTo, &r, access, math.NaN())
		recorded := it.len() / 1e3
		fromUs := recorded
		switch {
		case e.latFrom == nil:
		case r.depth == 1 && e.recordedOwn: // alone: what the drive took (serve)
			if e.sameDrive {
				toUs = fromUs
			}
		default:
			fromUs, _ = requestOn(e.latFrom, &r, access, fromUs)
		}
		// An estimate: the profile's, or a latency shared with others.
		estimated := r.depth > 1 || fromUs != recorded
		if !e.moves(it.dev) {
			toUs, estimated = fromUs, r.depth > 1
		}
		if !math.IsNaN(toUs) {
			it.bound, it.asleep, it.fromNs, it.toNs = true, it.len(), fromUs*1e3, toUs*1e3
			if estimated {
				it.fromEstNs = it.fromNs
			}
		}
		return
	}
	// Calls: the requests that arrived while outstanding; waits: those that
	// completed while they slept (or just before they woke).
	live := e.reqs[e.reqHead:]
	slept := it.blocked != 0
	// A call that writes and slept also waits for the kernel's writes
	// already in flight when it came that complete while it is out: a
	// journal commit under way holds a write (or an fsync) that needs the
	// next transaction. tar -x on the USB model: a 10 KiB write slept
	// 165 ms while the commit's 11 writes, sent 5 ms before it, went out;
	// had it come 12 ms later it would have been a wait outside the call,
	// which takes them.
	early := it.kind == kindCall && slept && it.writes
	from, to := it.start, it.end // the arrivals to look at
	if it.kind == kindWait || early {
		from -= e.maxLat
	}
	if it.kind == kindWait {
		to += wakeSlack
	}
	lo := sort.Search(len(live), func(k int) bool { return live[k].start >= from })
	hi := sort.Search(len(live), func(k int) bool { return live[k].start > to })
	e.set = e.set[:0]
	for k := lo; k < hi; k++ {
		r := &live[k]
		if it.kind == kindWait && (r.end < it.start || r.end > it.end+wakeSlack) {
			continue
		}
		if r.start < it.start && it.kind != kindWait && (!r.kernel || !r.write || r.end <= it.start || r.end > it.end) {
			continue
		}
		own := r.pid == it.pid
		// An uninterruptible sleep that ended as another process's read
		// completed waited for it: a page that process was reading, which
		// this one faulted on too (a program's processes share its
		// binary's and libraries' pages: Chromium's start on the HDD
		// model slept 1.4 s so, outside any read of its own).
		shared := it.kind == kindWait && !r.write && r.end >= it.end-wakeSlack
		if !own && !r.kernel && !shared || r.write && !it.writes || !r.write && !it.reads {
			continue
		}
		if it.kind != kindWait && !own && !slept {
			continue // a call that never slept waited for no one else's I/O
		}
		if it.kind != kindWait && !own && r.end > it.end {
			// Another's request still in flight when the call returned did
			// not hold it up: the call it completed in waited for it (or
			// none did). A flusher's write that came during one of cp -r's
			// reads on the HDD model and completed during a later one was
			// taken twice, 39.5 s of drive time where cp slept 34.9, and
			// the excess took the VM disk's time out of the copy there
			// (−56 % at the median of three; −37 % so).
			continue
		}
		if own {
			r.covered = true
		}
		e.set = append(e.set, r)
	}
	if len(e.set) == 0 {
		if it.kind == kindWait {
			for k := lo; k < hi; k++ {
				if r := &live[k]; r.start < it.end && r.end > it.start && e.moves(r.dev) {
					it.besideIO = true
					break
				}
			}
		}
		return
	}
	it.bound = true
	e.noteWaitedWriteback(it)
	e.driveTime(it, e.set)
	if it.syncs && !e.sameDrive {
		e.unrecordedFlushes(it, e.set)
	}
	if it.kind == kindWait && !e.sameDrive {
		e.waitedBefore(it, e.set)
	}
	it.asleep = it.len()
	if it.blocked >= 0 {
		it.asleep = float64(min(it.blocked, it.end-it.start))
	}
	waits := e.waitCost(it, e.set)
	if sleeps := streamSleeps(it); sleeps > waits && e.wakeKnown && !e.sameDrive && !e.to.Synchronous {
		// Its computation after each of those wakes moves with the
		// drives' wake-ups, the page cache's copy in it: not again by the
		// page cache's cost per MiB, which bench measures on reads that
		// wake as often (by both, cp recorded on the USB model would
		// compute 54 ms on the VM disk; it computed 69 there). A bio-based drive
		// serves the stream on its reader's CPU: nothing wakes the reader
		// there, and the page cache's cost alone moves it (zram's
		// wake-up, of small files, took cp's 64–89 ms to 36).
		it.cpuDelta, waits = 0, sleeps
	} else {
		e.cacheReadCPU(it)
	}
	e.wakeCPU(it, waits)
}

// streamSleeps is how often a call that streamed may have slept: its
// readahead requests overlap one another (the next window goes while the
// reader is in the last), so they make one wait in waitCost, but a reader
// faster than its drive catches up with the window in flight and sleeps
// until it completes, again and again. The trace holds the call's time
// asleep, not each sleep: a completion wakes the reader as often as the
// reader was asleep — GNU cp's copy_file_range of 256 MiB from the USB
// model slept through 98 % of its 8.6 s, for 1,063 requests, and computed
// 143 ms, 69 on the VM disk.
func streamSleeps(it *item) int {
	if it.kind != kindCall || it.aheadReads < 2 || it.len() <= 0 {
		return 0
	}
	return int(float64(it.aheadReads) * it.asleep / it.len())
}

// driveTime is how long a set of requests (in arrival order) kept its
// waiter waiting on each drive: each request's latency at the requests in
// flight on the device, shared among those of the set in flight with it
// (a sync waiting for 32 writes in flight together waits about one
// latency at depth 32, not 32; a read waiting for its one request beside
// three of other processes waits that request's whole latency).
func (e *engine) driveTime(it *item, set []*request) {
	var ends inFlight
	it.fromNs, it.toNs, it.fromAheadNs, it.toAheadNs, it.syncNs, it.recAheadNs, it.aheadSync = 0, 0, 0, 0, 0, 0, false
	it.fromEstNs, it.toStreamNs = 0, 0
	it.aheadReads = 0
	it.stayNs, it.stayAheadNs = 0, 0
	it.readBytes = 0
	for _, r := range set {
		ends.completeUpTo(r.start)
		ends.add(r.end)
		together := float64(ends.len())
		from, to := r.fromUs*1e3/sharedAmong(r.fromShared, together), r.toUs*1e3/sharedAmong(r.toShared, together)
		it.fromNs += from
		if r.fromProfiled || together > 1 {
			it.fromEstNs += from
		}
		it.toNs += to
		if !r.write {
			it.readBytes += r.size
		}
		stays := !e.moves(r.dev)
		if stays {
			it.stayNs += from
		}
		if r.readahead && !r.write {
			it.fromAheadNs += from
			it.toAheadNs += to
			if stays {
				it.stayAheadNs += from
			}
			it.recAheadNs += float64(r.end-r.start) / together
			it.aheadReads++
			it.aheadSync = it.aheadSync || e.b.synchronous[r.dev]
			if r.streamed && !stays {
				it.toStreamNs += to
			}
		}
		if e.b.synchronous[r.dev] && r.pid == it.pid && !r.kernel {
			it.syncNs += from // served on this caller's CPU (a flusher's are its own)
		}
	}
}

// unrecordedFlushes adds to a sync call whose device took its writes but
// no flush — a drive without a write cache, or one that reports none
// (zram; an SSD with power-loss protection) — the flushes the new drive
// takes for them, at its own cost of a flush (bench's write-and-flush
// cycle, which is a no-op's where the drive has no cache either). A
// journal's commit block (its last write, the kernel's) goes between two
// flushes, the one before it and the one that makes it durable on a drive
// without FUA, and after a pause (a disk's sector has turned away: a
// portable HDD took 11 ms for each). An fdatasync that wrote data only
// takes one flush.
func (e *engine) unrecordedFlushes(it *item, set []*request) {
	wrote, commit := false, (*request)(nil)
	for _, r := range set {
		if r.flush {
			return
		}
		if r.write && e.moves(r.dev) {
			wrote = true
			if r.kernel {
				commit = r
			}
		}
	}
	lt := e.latFlushTo
	if !wrote || lt == nil || lt.d.SyncWrite == nil {
		return
	}
	flushes := 1.0
	if commit != nil {
		flushes = 2
		after := *commit
		after.paused, after.distance = true, 0
		on := e.latTo
		if commit.pastThrottle {
			on = lt
		}
		if us, ok := syncOn(on, &after); ok && us > commit.toUs {
			it.toNs += (us - commit.toUs) * 1e3
		}
	}
	it.toNs += flushes * lt.d.SyncWrite.FlushUs * 1e3
}

// waitLog is a thread's recent waits, each with the new drive's time
// charged to the thread's waits before it.
type waitLog struct {
	marks []waitMark
	cum   float64
}

// maxWaitLogs is how many threads' waits are kept before those that
// cannot matter any more are dropped.
const maxWaitLogs = 4096

type waitMark struct {
	end    int64
	before float64
}

// waitedBefore takes off a wait for writes, on the new drive, what the
// thread's earlier waits since its requests arrived were charged there:
// writes submitted together and waited for one by one (a sync that slept
// 17 times for 17 writes) take their latency at their depth once in all,
// not once a wait (behind a 40 MB/s throttle, 1.7 s for what took 0.18).
// The recording drive's side stays as it was: the recording's sleep
// bounds it (programTime.rescale).
func (e *engine) waitedBefore(it *item, set []*request) {
	log := e.waited[it.tid]
	if log == nil {
		if len(e.waited) >= maxWaitLogs {
			// Threads long gone (a build's thousands of compilers) are
			// forgotten: memory does not grow with the trace.
			for tid, l := range e.waited {
				if n := len(l.marks); n == 0 || l.marks[n-1].end < it.start-e.maxLat {
					delete(e.waited, tid)
				}
			}
		}
		log = &waitLog{}
		e.waited[it.tid] = log
	}
	earliest, writes := it.start, true
	for _, r := range set {
		earliest, writes = min(earliest, r.start), writes && r.write
	}
	drop := 0 // no request still to come arrived before these
	for drop < len(log.marks) && log.marks[drop].end < it.start-e.maxLat {
		drop++
	}
	log.marks = log.marks[drop:]
	if k := sort.Search(len(log.marks), func(i int) bool { return log.marks[i].end > earliest }); writes && k < len(log.marks) && it.toNs > 0 {
		f := max(0, it.toNs-(log.cum-log.marks[k].before)) / it.toNs
		it.toNs *= f
		it.toAheadNs *= f
		it.toStreamNs *= f
	}
	log.marks = append(log.marks, waitMark{end: it.end, before: log.cum})
	log.cum += it.toNs
}

// waitCost moves what waiting for the drive costs beside the drive's own
// time — the submission, the sleep, the wake-up (drive.Spec.WaitUs) — where
// one drive sleeps its waiter and the other does not: a bio-based drive
// serves a read on the reader's CPU, nothing to wake from. A trace's
// block requests show only the device's time; the wait's cost is in the
// recording's computation, and stays there between two drives that both
// sleep.
//
// Each wait costs it: requests that overlap one another are waited for
// together, one after another once each (a small file's read that sleeps
// for its first block, then for the readahead after it). It gives the
// waits that would wake the waiter on a drive that sleeps it: a bio-based
// drive's readahead, served one request after another on the reader's
// CPU, would mostly run ahead of it elsewhere — all but the first, which
// holds the page the call asked for (grep -r reading each small file in
// one readahead request: 0.25 s on the CPU beside zram's own time, 0.37 s
// on the VM disk, 14 µs a read where bench's wake-ups differ by 16). So
// are the flushers' bios on a bio-based device, written back one after
// another on the flusher's CPU: a drive that queues them takes them all
// at once, and their waiter sleeps through them once (sync after tar -x
// on zram waited for 7,954 of them: at the VM disk's 13 µs a wait each,
// 0.11 s more than the VM disk's own sync took in all, 0.09 s).
func (e *engine) waitCost(it *item, set []*request) (wakes int) {
	recSync, waits := true, 0
	until := int64(math.MinInt64)
	flushed := false        // a flusher's bio on a bio-based device counted
	for _, r := range set { // in arrival order
		if !e.moves(r.dev) {
			continue
		}
		recSync = recSync && e.b.synchronous[r.dev]
		flusherBio := e.b.synchronous[r.dev] && r.flusher
		if r.start >= until && !(flusherBio && flushed) {
			waits++
			flushed = flushed || flusherBio
			if !e.b.synchronous[r.dev] || !r.readahead || wakes == 0 {
				wakes++
			}
		}
		until = max(until, r.end)
	}
	n := float64(waits)
	switch {
	case waits == 0 || e.sameDrive:
	case !recSync && e.to.Synchronous && it.asleep > 0 && e.from != nil && e.from.WaitUs != nil:
		// It slept: that comes out with the drive's time. The wake-up's
		// share may have run outside the sleep (waiting for a CPU the
		// drive's own work held), so it may come out of the computation
		// as a bio-based drive's time does.
		cost := math.Min(n**e.from.WaitUs*1e3, math.Max(0, it.len()-it.syncNs))
		it.fromNs += cost
		if !e.wakeKnown {
			it.syncNs += cost
		}
	case recSync && !e.to.Synchronous && e.to.WaitUs != nil:
		it.toNs += n * *e.to.WaitUs * 1e3
	}
	return wakes
}

// wakeCPU is how much faster or slower the computation after an item's
// waits runs on the new drive (drive.Spec.WakeUs): after each wait the
// thread runs cold — its caches, the CPU's idle state, whatever else the
// drive keeps busy (a USB bridge's or a disk's driver, the CPUs its
// queue's work takes) — in the call that waited and in what it does next:
// an open, a stat, a directory read the trace does not hold. A thread's
// computation after a wait takes (coldRefUs + the new drive's wake-up) ÷
// (coldRefUs + the recording drive's) of its recorded time, for the
// first coldCapNs of it, and its waits move it by no more than the
// wake-ups' difference each (see accumulator.add).
func (e *engine) wakeCPU(it *item, waits int) {
	it.coldFactor, it.coldStepNs, it.wakes = 0, 0, waits
	if e.wakeKnown && waits > 0 && !e.sameDrive {
		it.coldFactor, it.coldStepNs = e.coldRatio()-1, e.coldStepNs()
	}
}

// coldRatio is how much longer the computation after a wait runs on the
// new drive than on the recording drive: (coldRefUs + the new drive's
// wake-up) ÷ (coldRefUs + the recording drive's). Only when wakeKnown.
func (e *engine) coldRatio() float64 {
	return (coldRefUs + *e.to.WakeUs) / (coldRefUs + *e.from.WakeUs)
}

// coldStepNs is the most a wait moves the computation after it: the
// difference between the drives' wake-ups — what bench's reader of small
// files, which computes little after each wait, pays for it. A thread
// that computes more after a wait pays no more: cp -r's copy of each file
// after its read (a create, a write to the cache) computed 0.34 s on zram
// and 0.51 s on the VM disk, grep -r's 0.15 and 0.32 s, both 19–21 µs a
// wait more where the two wake-ups differed by 42 µs; the ratio alone made
// cp -r's 1.1 s more. Only when wakeKnown.
func (e *engine) coldStepNs() float64 {
	return math.Abs(*e.to.WakeUs-*e.from.WakeUs) * 1e3
}

// coldRefUs is the computation a wait's wake-up is measured against: a
// thread's computation after a wait grows with the drive's wake-up
// (drive.Spec.WakeUs), by about as much for a reader of small files as
// bench's, more for one that writes them too. In two full validation runs
// on this VM (each recording's time neither asleep nor in zram's own
// reads, a wait), grep -r computed 10, 24–25, 26–29, 67–83 and 67–71 µs a
// wait on zram, the VM disk, the throttle, the HDD and USB models, whose
// wake-ups were 5–6, 29–32, 26–35, 66–70 and 79–81 µs: a line through
// them meets zero wake-up at 4–5 µs (at −1 in one run); cp -r's (21, 35–43,
// 39–42, 102–105, 102–111 µs) at 4–7 µs. 20 µs kept two thirds of grep -r's
// computation from the HDD model onto zram where a tenth stayed (+65 %);
// 2 µs took cp -r's below what zram computes (−43 %).
const coldRefUs = 8

// coldCapNs is the most of a thread's computation after a wait that runs
// cold: cp of one 256 MiB file computed 1.2 ms a wait on the HDD model,
// most of it copying pages, whose cost per byte bench measures apart
// (drive.Spec.CacheReadCPU), and it ran about as fast as on the VM disk.
// A small file's copy is all cold: cp -r on the HDD model computed 48 and
// 66 µs after a wait at the median in two runs, 328 and 616 µs at the
// 99th percentile (the longer run's 1.2 s in all, where the other's was
// 0.6 s); 300 µs left that run's copy onto zram at +106 %.
const coldCapNs = 600_000

// cacheReadCPU is how the computation inside a buffered call that read
// from the drive changes on the new drive. The page cache's CPU per MiB
// read from a drive is the drive's as much as its latency is: behind a
// slow or throttled drive the copy after each wait starts cold (a cp of
// 256 MiB spent 0.2–0.4 s on the CPU inside copy_file_range behind a 40
// MB/s throttle, 0.07 s on the same disk without it), and bench measures
// it (drive.Spec.CacheReadCPU). A call's computation moves by the
// difference for the bytes it read, and stays at least what the new drive
// costs for them (or what it was, if less).
func (e *engine) cacheReadCPU(it *item) {
	it.cpuDelta = 0
	cpu := it.len() - it.asleep - it.syncNs
	if !e.cacheKnown || !it.bound || it.kind != kindCall || it.readBytes == 0 || cpu <= 0 {
		return
	}
	n := float64(it.readBytes)
	it.cpuDelta = max(cpu+n*(e.cacheTo-e.cacheFrom), min(cpu, n*e.cacheTo)) - cpu
}

// streamKey is a program's stream on a device.
type streamKey struct {
	dev  event.Dev
	comm string
}

// streamTail is where a program's sequential stream has reached: the end
// of its last request and when that came, the window being read (the
// requests that came together) and the one before it, how many windows
// it has had, and the reader's window on the new drive.
type streamTail struct {
	end, last          int64
	window, prevWindow int64
	windows            int
	read               int64 // all its windows' bytes
	newWindow          int64
	pid                uint32 // its reader, the last request's
}

// windowGapNs is how far apart the requests of one readahead window may
// come: the kernel submits a window's requests together.
const windowGapNs = 200_000

// unreachedWindow takes off the new drive's time what a program's stream
// read ahead and never reached, on a drive whose window is narrower.
// Linux issues a stream's next window when the reader reaches the one
// before it, so a stream the reader leaves (a seek, a video player going
// to another frame) ends with a window nobody read; on a narrower drive
// that window is that drive's, not the recording's. ffmpeg decoding a
// frame at 40 places of a video, a process each, read 63.5 MiB from the
// VM disk (its windows ramping to 8 MiB), 18.7 MiB from the USB model
// (128 KiB). A stream is left when its program starts another on the
// device — another process of it, or the same one after reading
// elsewhere in its files (a seek, another file: tar reading on across an
// extent's end has not left its stream) — without having read to a
// file's end (a read that came back short: cat's last window was read).
// Only streams of read calls count (a page fault's reads around it, a
// copy's splice are not streams a reader leaves), with two windows or
// more whose last did not shrink. The time comes off the program's later
// readahead, as far as that goes.
func (e *engine) unreachedWindow(r *request) {
	if !r.readahead || r.write || r.readCall <= 0 {
		return
	}
	comm := e.b.comms[r.pid]
	k := streamKey{r.dev, comm}
	st := e.streams[k]
	if st != nil && r.offset == st.end {
		if r.start-st.last > windowGapNs {
			st.windows++
			st.prevWindow, st.window = st.window, 0
		}
		st.window += r.size
		st.read += r.size
		st.end, st.last, st.pid = r.offset+r.size, r.start, r.pid
	} else {
		if st != nil && st.windows >= 2 && st.window >= st.prevWindow && st.window > st.newWindow &&
			(r.pid != st.pid || e.readers.movedAfter(st.pid, st.last)) && !e.readers.readToEnd(st.pid, st.last) {
			// Its last window nobody read; of the windows before it, what
			// the reader did not read through either (ffmpeg read 266 KiB
			// of a frame's stream from the VM disk, in windows of 118 KiB,
			// 512 KiB and 1 MiB): the new drive reads what the reader
			// reads and a window ahead of it.
			unread := st.window - st.newWindow
			if through := e.readers.readThrough(st.pid, st.last); through >= 0 {
				unread = max(unread, st.read-through-st.newWindow)
			}
			if us := e.latTo.d.StreamUs(unread, st.newWindow); us > 0 {
				e.aheadCredit[comm] += us
				e.readTo -= unread
				e.leftStreams++
			}
		}
		if st == nil {
			st = &streamTail{}
			e.streams[k] = st
		}
		*st = streamTail{end: r.offset + r.size, last: r.start, window: r.size, windows: 1, read: r.size,
			newWindow: e.latTo.d.ReadWindow(r.readCall, r.sequential), pid: r.pid}
	}
	if c := e.aheadCredit[comm]; c > 0 && r.toUs > 0 {
		take := math.Min(c, r.toUs)
		r.toUs -= take
		e.aheadCredit[comm] = c - take
	}
}

// countTest adds a request's time on the new drive to the nearest of
// CrystalDiskMark's four tests.
func (e *engine) countTest(r *request) {
	if r.kernel || r.flush {
		return
	}
	name := "RND4K Q1T1"
	switch {
	case r.size >= 256<<10 && r.depth >= 4:
		name = "SEQ1M Q8T1"
	case r.size >= 256<<10:
		name = "SEQ1M Q1T1"
	case r.depth >= 4:
		name = "RND4K Q32T1"
	}
	if r.write {
		name += " write"
	} else {
		name += " read"
	}
	e.byTest[name] += r.toUs
	e.testTotal += r.toUs
}

// finish decides what is left and sums it, once everything is released.
func (e *engine) finish() {
	e.decideFaults(math.MaxInt64)
	for e.finished.len() > 0 {
		e.accum.add(e.finished.pop())
	}
	e.accum.close()
}

// finishStep is how much trace time finish releases at a time.
const finishStep = int64(20e6)

// itemHeap holds matched items by arrival.
type itemHeap struct{ h order.Heap[item] }

func (h *itemHeap) len() int        { return h.h.Len() }
func (h *itemHeap) push(it *item)   { h.h.Push(it.start, *it) }
func (h *itemHeap) pop() *item      { _, v := h.h.Pop(); return &v }
func (h *itemHeap) minStart() int64 { return h.h.MinKey() }

// inFlight counts I/Os in flight by their completion times.
type inFlight struct{ ends order.Heap[struct{}] }

// completeUpTo drops what completed by t.
func (f *inFlight) completeUpTo(t int64) {
	for f.ends.Len() > 0 && f.ends.MinKey() <= t {
		f.ends.Pop()
	}
}

func (f *inFlight) add(end int64) { f.ends.Push(end, struct{}{}) }
func (f *inFlight) len() int      { return f.ends.Len() }

// widerWindow is a random readahead request's time on a new drive whose
// readahead window is wider than the recording drive's: the kernel reads
// around a fault (or a file's first read) a window of read_ahead_kb, so
// there the request's pages came with an earlier, wider read (no time on
// the drive), or it reads the whole window: one random request of the
// largest size the drive takes, then the rest at its streaming rate. The
// recording's cut does not say how many requests a drive with a wider
// window issues (a program's start from a USB stick with 128 KiB windows:
// 3,300 requests; from a disk with 2.5 MiB windows: 640).
func (e *engine) widerWindow(r *request, access string) (us float64, read int64, ok bool) {
	if e.windows == nil || !r.readahead || r.write || access != "rand" || r.offset < 0 || !e.moves(r.dev) {
		return 0, 0, false
	}
	window := int64(e.to.ReadaheadKB) << 10
	w := e.windows[r.dev]
	if w == nil {
		w = &readWindows{width: window}
		e.windows[r.dev] = w
	}
	if w.covers(r.offset, r.offset+r.size) {
		return 0, 0, true
	}
	// A window wider than the largest request comes as several: the first
	// is as large as the drive takes.
	cut := int64(e.from.ReadaheadKB) << 10
	if e.from.MaxRequestKB > 0 {
		cut = min(cut, int64(e.from.MaxRequestKB)<<10)
	}
	if r.size < cut {
		return 0, 0, false // not cut by the window (a small file, a first small read): the same there
	}
	lo := max(0, r.offset+r.size/2-window/2)
	// Pages an earlier window read are in the page cache: the kernel
	// reads only the rest.
	read = window - w.overlap(lo, lo+window)
	w.add(lo)
	if read <= 0 {
		return 0, 0, true
	}
	chunk := read
	if e.to.MaxRequestKB > 0 {
		chunk = min(chunk, int64(e.to.MaxRequestKB)<<10)
	}
	first := *r
	first.size = chunk
	us, _ = requestOn(e.latTo, &first, access, math.NaN())
	if rest := read - first.size; rest > 0 {
		us += e.latTo.get(latKey{kind: latStream, size: rest})
	}
	if math.IsNaN(us) {
		return 0, 0, false
	}
	return us, read, true
}

// aroundFault says r is readahead around a page fault: no read call
// in progress and no sequential advice (a copy's stream has one).
func (r *request) aroundFault() bool {
	return r.readahead && !r.write && r.readCall <= 0 && !r.sequential
}

// faultWindow is a read around a fault on the recording drive: where it
// began and where its last request ended.
type faultWindow struct{ start, end int64 }

// narrowerFault says a request reads on, into another of the new drive's
// windows, around a fault, where the new drive's readahead window is
// narrower than the recording drive's: Linux reads a window around a
// faulting page (read_ahead_kb), and the pages beyond the new drive's
// narrower window fault again when the program touches them — each its
// own read, later, wherever the head then is. A stream's windows (each
// continuing the last, on a read call or a copy) go one after another
// there too. Chromium's start read 312 MiB from the VM disk (8 MiB
// windows) in 133 random requests and 541 continuing them, 301 MiB from
// the HDD model (2.5 MiB) in 231 random ones: the disk seeks for each (a
// drive without a head does not care: faultWindows is nil there).
func (e *engine) narrowerFault(r *request, access string) bool {
	if e.faultWindows == nil || !r.aroundFault() || r.offset < 0 || !e.moves(r.dev) {
		return false
	}
	w, ok := e.faultWindows[r.dev]
	if access != "seq" || !ok || r.offset != w.end {
		if access == "rand" {
			e.faultWindows[r.dev] = faultWindow{start: r.offset, end: r.offset + r.size}
		} else {
			delete(e.faultWindows, r.dev)
		}
		return false
	}
	width := int64(e.to.ReadaheadKB) << 10
	before, last := (r.offset-w.start-1)/width, (r.offset+r.size-1-w.start)/width
	e.faultWindows[r.dev] = faultWindow{start: w.start, end: r.offset + r.size}
	return last > before
}

// windowsCover says a read's pages came with a wider window the new drive
// read before it (a stream's next request after the fault's).
func (e *engine) windowsCover(r *request) bool {
	w := e.windows[r.dev]
	return w != nil && w.covers(r.offset, r.offset+r.size)
}

// readWindows remembers the last windows read around faults on a device,
// all of one width (the new drive's window): the page cache keeps what
// they read. starts holds them sorted, ring in the order read (as many),
// to forget the oldest.
type readWindows struct {
	width  int64
	starts []int64
	ring   [maxWindows]int64
	next   int
}

// maxWindows bounds the windows remembered: 1,024 of 2.5 MiB hold a
// program's 200 MB binary, read around hundreds of faults.
const maxWindows = 1024

// near is the remembered windows that may overlap [lo, hi): those starting
// after lo − width, before hi.
func (w *readWindows) near(lo, hi int64) []int64 {
	i, _ := slices.BinarySearch(w.starts, lo-w.width+1)
	j, _ := slices.BinarySearch(w.starts, hi)
	return w.starts[i:j]
}

func (w *readWindows) covers(lo, hi int64) bool {
	for _, s := range w.near(lo, hi) {
		if s <= lo && hi <= s+w.width {
			return true
		}
	}
	return false
}

// overlap is how much of [lo, hi) the remembered windows hold.
func (w *readWindows) overlap(lo, hi int64) int64 {
	var held, end int64 = 0, lo
	for _, s := range w.near(lo, hi) { // sorted by start
		a, b := max(s, end), min(hi, s+w.width)
		if a < b {
			held += b - a
			end = b
		}
	}
	return held
}

func (w *readWindows) add(lo int64) {
	if len(w.starts) == maxWindows {
		if i, ok := slices.BinarySearch(w.starts, w.ring[w.next]); ok {
			w.starts = slices.Delete(w.starts, i, i+1)
		}
	}
	w.ring[w.next] = lo
	w.next = (w.next + 1) % maxWindows
	i, _ := slices.BinarySearch(w.starts, lo)
	w.starts = slices.Insert(w.starts, i, lo)
}

// devFlight counts a device's requests in flight by their completion
// times, and by process.
type devFlight struct {
	ends      order.Heap[uint32]
	byPid     map[uint32]int
	idleSince int64 // the last completion taken off
	any       bool
	lastFlush bool // the last request to arrive was a flush
}

func (f *devFlight) completeUpTo(t int64) {
	for f.ends.Len() > 0 && f.ends.MinKey() <= t {
		end, pid := f.ends.Pop()
		f.idleSince, f.any = end, true
		if f.byPid[pid]--; f.byPid[pid] == 0 {
			delete(f.byPid, pid)
		}
	}
}

func (f *devFlight) add(end int64, pid uint32) {
	f.ends.Push(end, pid)
	f.byPid[pid]++
}

func (f *devFlight) len() int { return f.ends.Len() }

// throttleSliceNs is the time a cgroup v1 throttle grants a budget for:
// a group idle that long starts a new slice with a whole slice's
// requests and bytes to spend at once (blk-throttle's throtl_slice, 100
// ms). 400 random 4 KiB reads one at a time behind a 1,500 IOPS throttle,
// after half a second idle: 390 went at the disk's 154 µs, the whole in
// 220 ms, not the limit's 267.
const throttleSliceNs = 100e6

// tokenBucket is what is left of a cgroup throttle's budget in one
// direction on one device.
type tokenBucket struct {
	ios, bytes float64
	// lastUs: the last request's device time on the new drive, if it went
	// at the device's pace (one that waited for the limits waited for its
	// own); waitUs: its wait for the budget.
	lastUs, waitUs float64
	paced          bool
}

type bucketKey struct {
	dev   event.Dev
	write bool
}

// withinBudget says how a request goes past a cgroup's limits: at its
// device's own pace (paced) once the throttle's budget — refilled at the
// limits' rates while the work ran, holding a slice's worth at most —
// has a request and its bytes for it, after waitUs (0: it had them). A
// request alone on its device waits for its turn, the time the work ran
// since the last one counted (a program computing 0.1 ms between reads
// at 1,500 a second waits 0.57 ms for each, not 0.67 ms after its 0.1);
// one beside others that finds the budget spent waits for the limits
// (the profile's, benched under them), as they do, and leaves it empty.
// Without the device's profile outside the cgroup, only the limits'.
func (e *engine) withinBudget(r *request) (waitUs float64, paced bool) {
	if e.buckets == nil {
		e.buckets = map[bucketKey]*tokenBucket{}
	}
	lim := &e.limits[boolIdx(r.write)]
	if lim[0] == 0 {
		op := "read"
		if r.write {
			op = "write"
		}
		lim[0], lim[1] = e.to.Limits(op)
		if lim[0] == 0 {
			lim[0] = -1 // asked: the profile lacks the direction
		}
	}
	iops, bps := lim[0], lim[1]
	if iops <= 0 || bps <= 0 {
		return 0, false
	}
	capIOs, capBytes := iops*throttleSliceNs/1e9, bps*throttleSliceNs/1e9
	k := bucketKey{r.dev, r.write}
	b := e.buckets[k]
	if b == nil {
		b = &tokenBucket{ios: capIOs, bytes: capBytes}
		e.buckets[k] = b
	}
	// The time since the last request, on the new drive: the device's
	// idle (the work's own time), and the last request's time there if it
	// came alone — not the recording drive's busy time, which a slow
	// recording's gaps are mostly.
	dt := float64(max(r.idleNs, 0)) / 1e9
	if e.wakeKnown {
		// The idle is a thread's wake-up and computation after its wait,
		// which runs as the new drive's wake-ups let it (wakeCPU): cp -r's
		// reads came 190 µs apart at the median on the HDD model, 79 on
		// the VM disk; taken as recorded, the throttle's budget refilled
		// in the HDD model's gaps and its reads went through it (from the
		// HDD model −37 %, from zram +30 %; so −23, +10 %).
		step := e.coldStepNs() / 1e9
		dt += math.Max(-step, math.Min(step, min(dt, coldCapNs/1e9)*(e.coldRatio()-1)))
	}
	if r.depth <= 1 {
		dt += b.lastUs / 1e6
	}
	b.ios, b.bytes = min(capIOs, b.ios+dt*iops), min(capBytes, b.bytes+dt*bps)
	size := float64(r.size)
	need := min(size, capBytes)
	b.waitUs = 0
	switch {
	case b.ios >= 1 && b.bytes >= need:
	case r.depth <= 1 && e.latFlushTo != e.latTo:
		wait := max((1-b.ios)/iops, (need-b.bytes)/bps, 0)
		b.ios, b.bytes = b.ios+wait*iops, b.bytes+wait*bps
		b.waitUs = wait * 1e6
	default:
		b.ios, b.bytes, b.paced = 0, 0, false
		return 0, false
	}
	b.ios, b.bytes, b.paced = max(b.ios-1, 0), max(b.bytes-size, 0), true
	return b.waitUs, true
}

// spent notes a request's time on the new drive for its throttle budget.
func (e *engine) spent(r *request) {
	if b := e.buckets[bucketKey{r.dev, r.write}]; b != nil {
		b.lastUs = 0
		if b.paced {
			b.lastUs = r.toUs - b.waitUs // the wait refilled it already
		}
	}
}
