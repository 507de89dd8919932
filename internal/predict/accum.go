package predict

import (
	"math"
	"slices"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/order"
)

// accumulator takes matched items in arrival order and keeps, in memory
// that does not grow with the trace, what the prediction needs: each
// process's drive-bound time and computation (summed per program at the
// end), and the busy periods — the stretches with some drive-bound item
// outstanding — as the coefficients of their saving.
//
// A period's predicted length is its recorded length times Σ new ÷ Σ
// recorded lengths of its items, and an item's new length is
// base + A·asleep + T·toNs, where base (its length, computation change
// included, less its time asleep) is known when it is matched and A or T
// (its program's new waiting per recorded sleep, or per new drive time
// where it never slept) only once the whole trace is summed. The saving
// is linear in them: each period leaves its constant part and, per
// process, the factors of A and T — in the time slice it starts in (for
// the phases) and in its process's own periods (for the processes).
type accumulator struct {
	pids   map[uint32]*pidSums
	tids   map[uint32]*tidLast
	whole  period
	slices timeSlices
	busy   float64
	// wakes and marks: each thread's items by time, where the trace says
	// who woke whom (see wakeGraph).
	wakes *wakeGraph
	marks map[uint32]*threadMarks
	taken *takenLog // what the host took of each thread's time (nil: not recorded)
	// idleFrom and idleTo are the hosts' costs of computing after their
	// CPUs idled, waiting for each drive (nil: not measured, or bio-based:
	// the CPUs never idle for it), and idleAfter the last busy period's
	// end and its length on each drive (ns).
	idleFrom, idleTo *drive.IdleWake
	idleAfter        struct {
		set           bool
		end, from, to float64
		tid           uint32
	}
}

// pidSums is one process's part.
type pidSums struct {
	first, last int64
	bound       bool // some item of it waited for the drive
	waitSums
	// Its own busy periods: the one open, and the closed ones' saving
	// as g − A·ca − T·ct.
	own       period
	g, ca, ct float64
}

// waitSums are a process's or a program's drive-bound time, summed over
// its items (ns).
type waitSums struct {
	asleep, from, to float64
	// fromEstimated is the share of from that is an estimate: the
	// recording drive's profile's, or recorded latencies divided among
	// the requests in flight together.
	fromEstimated float64
	cpu           float64 // computation, in and between its threads' items
	// cpuTo is cpu with what ran between items bounded by the new drive's
	// readahead: what may run beside that.
	cpuTo   float64
	overlap float64 // readahead's recorded time not slept through
	// streamCPU: the computation of calls that streamed (two readahead
	// requests or more), which may run alongside the readahead on a
	// drive that keeps ahead of it.
	streamCPU          float64
	fromAhead, toAhead float64 // readahead's share of from and to
	stay, stayAhead    float64 // from (= to) on devices that do not move, and its readahead's share
	sync               float64 // from spent on its CPU (bio-based devices)
	aheadSync          bool    // its readahead was on a bio-based device
	toStream           float64 // the new drive's time for its readahead that continued a stream there
	cpuDelta           float64 // how its computation changes on the new drive
}

func (w *waitSums) merge(o *waitSums) {
	w.asleep += o.asleep
	w.from += o.from
	w.fromEstimated += o.fromEstimated
	w.to += o.to
	w.cpu += o.cpu
	w.cpuTo += o.cpuTo
	w.overlap += o.overlap
	w.streamCPU += o.streamCPU
	w.fromAhead += o.fromAhead
	w.toAhead += o.toAhead
	w.stay += o.stay
	w.stayAhead += o.stayAhead
	w.sync += o.sync
	w.aheadSync = w.aheadSync || o.aheadSync
	w.toStream += o.toStream
	w.cpuDelta += o.cpuDelta
}

// tidLast is a thread's latest item: the computation until its next
// (bounded by the readahead it set going) may run alongside that
// readahead. It also keeps what of the thread's computation after its
// latest wait may still run cold (coldLeft, ns) and by how much more
// (coldFactor: see engine.wakeCPU) — by no more than coldBudget in all,
// the sum of its waits' steps not yet used — and how long its stretches of
// computation from one wait to the next ran (see woke).
type tidLast struct {
	end                  int64
	fromAhead, toAhead   float64
	coldLeft, coldFactor float64
	coldBudget           float64
	carry                float64 // cold of cached reads since its last drive-bound item
	reading              bool    // no call but cached reads since then
	// sinceWake is its computation since its latest wait, stolenAt where
	// the rest of it is the host's (+Inf: none), stretches the lengths of
	// its stretches so far (each per wait it followed).
	sinceWake, stolenAt float64
	wakesAtStart        int
	stretches           stretchHist
	takenTo             int64 // the end of its latest item whose stretch the host's takings came out of
}

// cold is how much longer (negative: shorter) ns of a thread's
// computation take on the new drive, as they follow its latest wait, and
// uses them up: its first coldLeft, and what runs past stolenAt — onto a
// drive that wakes it warmer only: what the host took is no more the
// colder another drive leaves the thread.
func (t *tidLast) cold(ns float64) float64 {
	if ns <= 0 {
		return 0
	}
	n := math.Min(ns, t.coldLeft)
	t.coldLeft -= n
	stolen := math.Max(0, t.sinceWake+ns-math.Max(t.stolenAt, t.sinceWake))
	t.sinceWake += ns
	moved := math.Min(math.Abs(t.coldFactor)*n, t.coldBudget)
	t.coldBudget -= moved
	return math.Copysign(moved, t.coldFactor) + math.Min(t.coldFactor, 0)*stolen
}

// woke starts the thread's next stretch of computation, after an item
// that waited wakes times for the drive, each moving it by up to step ns.
// What a wait's stretch left of its step stays for the next: the drive's
// own work holds a CPU after some waits longer than after others (cp -r's
// computation after a wait on the HDD model: 48–66 µs at the median,
// 328–616 µs at the 99th percentile).
func (t *tidLast) woke(wakes int, factor, step float64) {
	if t.wakesAtStart > 0 {
		t.stretches.add(t.sinceWake / float64(t.wakesAtStart))
	}
	t.coldLeft, t.coldFactor = float64(wakes)*coldCapNs, factor
	t.coldBudget += float64(wakes) * step
	t.sinceWake, t.wakesAtStart = 0, wakes
	t.stolenAt = math.Inf(1)
	if typical, ok := t.stretches.median(); ok {
		if at := stolenTimes * typical; t.stretches.shareAbove(at) <= stolenShare {
			t.stolenAt = math.Max(at*float64(wakes), t.coldLeft)
		}
	}
}

// stolenTimes is how many times a thread's typical stretch from one wait
// to the next (its median) a stretch runs before the rest is taken as the
// host's, not the work's: a virtual machine's CPU taken away for a few
// milliseconds at a time (a loop reading the clock on this project's VM
// lost 2–18 ms a second, up to 4.4 ms at once). That comes oftener the
// more a CPU idles — a slow drive's waits — so onto a drive that wakes the
// thread warmer it shrinks as the cold start does; onto a colder one it
// stays.
//
// grep -r on the HDD model: a stretch's median 71–79 µs in two runs, 22–34
// of its 8,800 beyond 600 µs in one (0.84–0.93 s in all), 119–169 in the
// next (1.18–1.38 s), which took it onto zram at +90 % where the first run
// had +14 %. tar -x's stretches, writing each file, run 4.6–5.4 ms at the
// median on the same drive: none of them is taken.
const stolenTimes = 8

// stolenShare is the most of a thread's stretches so far that may have
// run past stolenTimes their median for the rest to be taken as the
// host's: it takes the CPU now and then, and a thread whose long
// stretches are many computes them (Chromium's starting threads: 10–42 %
// of them; grep -r's 0.3 and 1.3 %, the runs above).
const stolenShare = 0.05

// stretchHist counts a thread's stretches of computation by length, in
// quarter octaves from 1 µs: enough for a median, in memory that does not
// grow with the trace.
type stretchHist struct {
	n      int
	counts [stretchBins]uint32
}

const (
	stretchBins = 4 * 24 // up to 16 s
	stretchMin  = 64     // stretches before a median is taken
)

func (h *stretchHist) add(ns float64) {
	i := 0
	if ns > 1e3 {
		i = min(int(4*math.Log2(ns/1e3)), stretchBins-1)
	}
	h.counts[i]++
	h.n++
}

// shareAbove is the share of the stretches counted whose bins lie wholly
// above ns.
func (h *stretchHist) shareAbove(ns float64) float64 {
	if h.n == 0 {
		return 0
	}
	above := 0
	for i, c := range h.counts {
		if 1e3*math.Exp2(float64(i)/4) >= ns {
			above += int(c)
		}
	}
	return float64(above) / float64(h.n)
}

// median is the median stretch's length (its bin's upper edge), once
// stretchMin are counted.
func (h *stretchHist) median() (float64, bool) {
	if h.n < stretchMin {
		return 0, false
	}
	seen := 0
	for i, c := range h.counts {
		if seen += int(c); 2*seen >= h.n {
			return 1e3 * math.Exp2(float64(i+1)/4), true
		}
	}
	return 0, false
}

// period is a busy period being built.
type period struct {
	open         bool
	start, end   float64
	sumRec, base float64
	from, to     float64 // its items' drive time on each drive
	parts        []part
	lastTid      uint32 // the thread whose item ended last: it computes after the period
}

// part is a process's share of a period: its items' sleep and new drive
// time.
type part struct {
	pid        uint32
	asleep, to float64
}

func (p *period) add(it *item) {
	s, e := float64(it.start), float64(it.end)
	if !p.open {
		*p = period{open: true, start: s, end: e, parts: p.parts[:0]}
	}
	if e >= p.end {
		p.lastTid = it.tid
	}
	p.start, p.end = math.Min(p.start, s), math.Max(p.end, e) // an item that came late may start earlier
	p.sumRec += it.len()
	p.from, p.to = p.from+it.fromNs, p.to+it.toNs
	p.base += it.len() + it.cpuDelta - it.asleep
	for i := range p.parts {
		if p.parts[i].pid == it.pid {
			p.parts[i].asleep += it.asleep
			p.parts[i].to += it.toNs
			return
		}
	}
	p.parts = append(p.parts, part{it.pid, it.asleep, it.toNs})
}

// weight is the share of a period's items' summed new length that comes
// off its recorded length: the period shrinks by len − weight·Σ new.
func (p *period) weight() (length, w float64) {
	length = p.end - p.start
	return length, length / p.sumRec
}

func (a *accumulator) init() {
	a.pids = map[uint32]*pidSums{}
	a.tids = map[uint32]*tidLast{}
	a.slices.init()
}

// add takes the next matched item in arrival order.
func (a *accumulator) add(it *item) {
	p := a.pids[it.pid]
	if p == nil {
		p = &pidSums{first: it.start, last: it.end}
		a.pids[it.pid] = p
	}
	p.first, p.last = min(p.first, it.start), max(p.last, it.end)
	t := a.tids[it.tid]
	asleep := it.asleep
	if !it.bound && it.kind == kindWait {
		// An uninterruptible sleep no request explains — a lock another
		// thread held while it waited for the drive (Chromium's threads
		// on the HDD model: 24–65 ms each) — is no computation either.
		asleep = it.len()
		if it.blocked >= 0 {
			asleep = math.Min(float64(it.blocked), asleep)
		}
	}
	cpu := math.Max(0, it.len()-asleep-it.syncNs)
	// What the host took of the thread's time on a CPU since its last
	// item — in the gap before this one first, then in it — is no
	// computation of the work's: it stays out of what moves.
	var taken, gapTaken, ownGap, slept float64
	if t != nil && it.start > t.end {
		// Computation since its last item: not the time it slept on
		// another thread (Chromium's processes wait for each other's
		// faults on a disk; counted as computing, 2.3 s of it hid the
		// VM disk's whole readahead from the HDD model's recording).
		slept = a.wakes.asleepIn(it.tid, t.end, it.start)
		ownGap = math.Max(0, float64(it.start-t.end)-slept)
	}
	if a.taken != nil {
		from := int64(math.MinInt64)
		if t != nil {
			from = t.takenTo
		}
		if taken = a.taken.between(it.tid, from, it.end); taken > 0 {
			gapTaken = math.Min(taken, ownGap)
			cpu -= math.Min(taken-gapTaken, cpu)
		}
	}
	// The thread's computation since its last item that may run beside the
	// readahead that item set going (no longer than that lasts).
	var gap, gapTo float64
	if ownGap > 0 {
		gap = math.Min(ownGap-gapTaken, math.Max(t.fromAhead, t.toAhead))
		gapTo = math.Min(ownGap-gapTaken, t.toAhead)
	}
	// The thread's computation after a wait runs as cold as the new
	// drive's wake-up leaves it: what it did since its last item (a gap
	// the trace does not hold: an open, a stat), and this item's own —
	// after this item's waits, if it waited. Where the cache served the
	// call, it and the gap before it stay as they were: the thread was at
	// other work (tar -x writing each file between its archive's reads;
	// moving that too took it from the USB model to zram −25 → −46 %, from
	// zram to the VM disk +27 → +51 %) — but for reads right after the
	// wait (below).
	if t == nil {
		t = &tidLast{stolenAt: math.Inf(1)}
		a.tids[it.tid] = t
	}
	t.takenTo = max(t.takenTo, it.end)
	var cold float64
	if it.start > t.end {
		cold = t.cold(float64(it.start-t.end) - slept - gapTaken)
	}
	if it.wakes > 0 {
		t.woke(it.wakes, it.coldFactor, it.coldStepNs)
	}
	cold += t.cold(cpu)
	switch {
	case it.bound:
		cold += t.carry
		t.carry, t.reading = 0, true
	case it.kind == kindCall && it.reads && !it.writes && t.reading:
		// A read the cache served right after a wait — the rest of what
		// that wait brought in, as grep's read of a small file to its
		// end — runs as cold as the wait left it: its change goes with
		// the thread's next drive-bound item. Not once the thread has
		// turned to other work (tar -x writing each file between its
		// archive's cached reads: from zram onto the VM disk +26 → +54 %
		// where its reads moved too). grep -r from the USB model onto
		// zram spent 6 µs a file between its read that slept and the
		// read to the end, 16 % of its computation outside sleeps.
		t.carry += cold
	default:
		t.reading = false
	}
	if taken > 0 {
		a.takeOut(it, p, taken)
	}
	if it.bound {
		it.cpuDelta += cold
		p.bound = true
		var streamCPU float64
		if it.kind == kindCall && it.aheadReads >= 2 {
			streamCPU = cpu
		}
		p.merge(&waitSums{asleep: it.asleep, from: it.fromNs, fromEstimated: it.fromEstNs, to: it.toNs, fromAhead: it.fromAheadNs, toAhead: it.toAheadNs, stay: it.stayNs, stayAhead: it.stayAheadNs,
			sync: it.syncNs, aheadSync: it.aheadSync, toStream: it.toStreamNs, cpuDelta: it.cpuDelta, overlap: math.Max(0, it.recAheadNs-it.asleep), streamCPU: streamCPU})
	}
	p.cpu += cpu + gap
	p.cpuTo += cpu + gapTo
	t.end, t.fromAhead, t.toAhead = it.end, it.fromAheadNs, it.toAheadNs
	if it.besideIO && it.end > it.start && a.wakes.recorded() {
		w := *it
		w.asleep, w.toNs, w.cpuDelta = it.len(), 0, 0
		a.mark(&w)
	}
	if !it.bound || it.end <= it.start {
		return
	}
	if a.whole.open && float64(it.start) > a.whole.end {
		a.closeWhole()
	}
	a.whole.add(it)
	if a.wakes.recorded() {
		a.mark(it)
	}
	if p.own.open && float64(it.start) > p.own.end {
		p.closeOwn()
	}
	p.own.add(it)
}

// takeOut removes what the host took from a thread in an item's stretch
// (ns): a drive-bound item's period is that much shorter on any drive;
// outside the busy periods the recording is, and so are the thread's
// process and its place in the wake graph.
func (a *accumulator) takeOut(it *item, p *pidSums, ns float64) {
	if it.bound {
		it.cpuDelta -= ns
		return
	}
	a.slices.at(it.start).g += ns
	p.g += ns
	if a.wakes.recorded() {
		a.marksOf(it).addExtra(it.start, -ns)
	}
}

func (a *accumulator) closeWhole() {
	length, w := a.whole.weight()
	a.busy += length
	a.afterIdle(length)
	s := a.slices.at(int64(a.whole.start))
	s.g += length - w*a.whole.base
	for _, pt := range a.whole.parts {
		c := s.parts[pt.pid]
		if c == nil {
			c = &[2]float64{}
			s.parts[pt.pid] = c
		}
		c[0] += w * pt.asleep
		c[1] += w * pt.to
	}
	a.whole.open = false
}

func (p *pidSums) closeOwn() {
	length, w := p.own.weight()
	p.g += length - w*p.own.base
	for _, pt := range p.own.parts {
		p.ca += w * pt.asleep
		p.ct += w * pt.to
	}
	p.own.open = false
}

// mark adds a drive-bound item to its thread's marks.
func (a *accumulator) mark(it *item) {
	a.marksOf(it).addItem(it, a.wakes.lastSleep(it.tid))
}

// marksOf is the marks of it's thread, made on first use.
func (a *accumulator) marksOf(it *item) *threadMarks {
	if a.marks == nil {
		a.marks = map[uint32]*threadMarks{}
	}
	m := a.marks[it.tid]
	if m == nil {
		m = &threadMarks{pid: it.pid}
		a.marks[it.tid] = m
	}
	return m
}

// close ends the periods still open.
func (a *accumulator) close() {
	for tid, m := range a.marks {
		if m.open.open {
			m.closeOpen(a.wakes.lastSleep(tid))
		}
	}
	if a.whole.open {
		a.closeWhole()
	}
	for _, p := range a.pids {
		if p.own.open {
			p.closeOwn()
		}
	}
}

// timeSlices hold the periods' coefficients by the time they start: slices
// 100 ms ÷ 64 × 2ᵏ wide at multiples of their width, at most maxSlices of
// them (adjacent pairs merge when the trace outgrows them), so that every
// phase boundary (classify's windows: 100 ms × 2ʲ, at multiples of their
// width, far fewer) falls between slices.
type timeSlices struct {
	width  int64
	lo, hi int64
	byIdx  map[int64]*slice
}

type slice struct {
	g     float64
	parts map[uint32]*[2]float64 // per process: the factors of A and T
}

const (
	firstSliceNs = int64(100e6) / 64
	maxSlices    = 4096
)

func (t *timeSlices) init() {
	t.width, t.byIdx = firstSliceNs, map[int64]*slice{}
}

func (t *timeSlices) at(ns int64) *slice {
	i := order.FloorDiv(ns, t.width)
	for len(t.byIdx) > 0 && max(t.hi, i)-min(t.lo, i) >= maxSlices {
		t.coarsen()
		i = order.FloorDiv(ns, t.width)
	}
	s := t.byIdx[i]
	if s == nil {
		if len(t.byIdx) == 0 {
			t.lo, t.hi = i, i
		}
		t.lo, t.hi = min(t.lo, i), max(t.hi, i)
		s = &slice{parts: map[uint32]*[2]float64{}}
		t.byIdx[i] = s
	}
	return s
}

// indexes are the slices' indexes, in time order.
func (t *timeSlices) indexes() []int64 {
	out := make([]int64, 0, len(t.byIdx))
	for i := range t.byIdx {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func (t *timeSlices) coarsen() {
	old := t.byIdx
	t.byIdx, t.width = map[int64]*slice{}, t.width*2
	t.lo, t.hi = order.FloorDiv(t.lo, 2), order.FloorDiv(t.hi, 2)
	for i, s := range old {
		j := order.FloorDiv(i, 2)
		d := t.byIdx[j]
		if d == nil {
			t.byIdx[j] = s
			continue
		}
		d.g += s.g
		for pid, c := range s.parts {
			if dc := d.parts[pid]; dc != nil {
				dc[0] += c[0]
				dc[1] += c[1]
			} else {
				d.parts[pid] = c
			}
		}
	}
}

// afterIdle moves the cost of computing after the CPUs idled (the busy
// period before, its length on each drive) in the stretch between the
// last busy period and the one closing (length, ns): the first of it
// runs cold — as long as the host's measured task took, at most — by
// what each host measured for an idle that long. The stretch is what
// was recorded, cold: its warm part is what it would be after no idle;
// on the new drive that part runs as cold as that drive's idle makes it.
// The same drive, the same stretch.
func (a *accumulator) afterIdle(length float64) {
	if a.idleFrom == nil || a.idleTo == nil {
		return
	}
	if last := a.idleAfter; last.set && a.whole.start > last.end {
		gap := a.whole.start - last.end
		extraFrom := coldShare(a.idleFrom, last.from, gap, true)
		extraTo := coldShare(a.idleTo, last.to, gap-extraFrom, false)
		a.slices.at(int64(last.end)).g += extraFrom - extraTo
		if m := a.marks[last.tid]; m != nil {
			m.addExtra(int64(last.end), extraTo-extraFrom) // the thread that computed after it
		}
	}
	lengthTo := length
	if a.whole.from > 0 {
		lengthTo = length * a.whole.to / a.whole.from
	}
	a.idleAfter.set, a.idleAfter.end, a.idleAfter.from, a.idleAfter.to, a.idleAfter.tid = true, a.whole.end, length, lengthTo, a.whole.lastTid
}

// coldShare is the extra time (ns) a stretch of computation after an idle
// of idleNs takes: the host's extra for that idle and that much
// computation (drive.IdleWake.ExtraFor). cold: the stretch's length
// includes the extra (as recorded), or not (warm).
func coldShare(w *drive.IdleWake, idleNs, stretchNs float64, cold bool) float64 {
	extra := w.ExtraFor(idleNs/1e3, stretchNs/1e3) * 1e3
	if cold {
		// What of the stretch ran warm, and its extra: a few rounds
		// settle it (the extra grows slower than the stretch).
		for range 4 {
			extra = w.ExtraFor(idleNs/1e3, math.Max(0, stretchNs-extra)/1e3) * 1e3
		}
	}
	return extra
}
