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
	overlap       float64 // readahead's recorded time not slept through
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
// (coldFactor: see engine.wakeCPU).
type tidLast struct {
	end                  int64
	fromAhead, toAhead   float64
	coldLeft, coldFactor float64
	carry                float64 // cold of cached reads since its last drive-bound item
	reading              bool    // no call but cached reads since then
}

// cold is how much longer (negative: shorter) ns of a thread's
// computation take on the new drive, as they follow its latest wait, and
// uses them up.
func (t *tidLast) cold(ns float64) float64 {
	n := math.Min(ns, t.coldLeft)
	if n <= 0 {
		return 0
	}
	t.coldLeft -= n
	return t.coldFactor * n
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
	cpu := math.Max(0, it.len()-it.asleep-it.syncNs)
	// The thread's computation since its last item that may run beside the
	// readahead that item set going (no longer than that lasts).
	var gap float64
	if t != nil && it.start > t.end {
		gap = math.Min(float64(it.start-t.end), math.Max(t.fromAhead, t.toAhead))
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
		t = &tidLast{}
		a.tids[it.tid] = t
	}
	var cold float64
	if it.start > t.end {
		cold = t.cold(float64(it.start - t.end))
	}
	if it.wakes > 0 {
		t.coldLeft, t.coldFactor = float64(it.wakes)*coldCapNs, it.coldFactor
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
	if a.marks == nil {
		a.marks = map[uint32]*threadMarks{}
	}
	m := a.marks[it.tid]
	if m == nil {
		m = &threadMarks{}
		a.marks[it.tid] = m
	}
	m.addItem(it, a.wakes.lastSleep(it.tid))
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
