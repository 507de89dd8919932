package predict

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
)

// The busy periods take a program's waits as its own: a stretch in which
// some process waits for the drive shrinks with the drive, whatever the
// others do in it. A program of many processes that wait on each other
// (Chromium's browser, zygote and renderers: the browser sleeps on its
// renderer, which faults its binary in) is neither: on the HDD model its
// computation ran while another process waited for a page, and on a fast
// drive it does not hide behind anything. Where the tracer says who woke
// whom (sleep records), each thread's time is followed instead: its items
// take their new length, a sleep another traced thread ended ends when
// that thread, on its own new time, woke it, and any other sleep (a
// timer, an interrupt, an untraced process) lasts what it did. The run
// ends when the threads ioshape's launcher created end.

// wakeGraph is the trace's sleeps by thread, in arrival order (about the
// order they ended: a record is written as its thread runs again).
type wakeGraph struct {
	byTid map[uint32]*threadSleeps
}

type threadSleeps struct {
	pid    uint32
	sleeps []sleepRec
	last   int64 // the end of its latest sleep: a mark after it starts anew
}

// sleepRec is one sleep (or a thread's creation: born) and, if another
// thread ended it, which and when (waker 0: none did).
type sleepRec struct {
	start, woken, end int64
	waker             uint32
	born              bool
	wait              bool // uninterruptible, woken by a traced thread: a lock it held
}

func (g *wakeGraph) add(e *event.Event) {
	if g.byTid == nil {
		g.byTid = map[uint32]*threadSleeps{}
	}
	t := g.byTid[e.Tid]
	if t == nil {
		t = &threadSleeps{pid: e.Pid}
		g.byTid[e.Tid] = t
	}
	s := sleepRec{start: e.Start, end: e.End, born: e.Flags&event.FlagBorn != 0, wait: e.IsWait()}
	if e.Flags&event.FlagDispatched != 0 {
		s.woken, s.waker = e.Dispatch, e.Waker()
	}
	t.sleeps = append(t.sleeps, s)
	t.last = max(t.last, e.End)
}

// recorded says whether the trace has sleep records (g may be nil).
func (g *wakeGraph) recorded() bool { return g != nil && len(g.byTid) > 0 }

// lastSleep is the end of thread tid's latest sleep so far (0: none).
func (g *wakeGraph) lastSleep(tid uint32) int64 {
	if t := g.byTid[tid]; t != nil {
		return t.last
	}
	return 0
}

// asleepIn is how long thread tid slept within (from, to) by its sleep
// records — a futex, a poll, a pipe: time it did not compute, between its
// items (its waits for the drive are items). A thread's records come one
// after another, in the order they ended.
func (g *wakeGraph) asleepIn(tid uint32, from, to int64) float64 {
	if g == nil || to <= from {
		return 0
	}
	t := g.byTid[tid]
	if t == nil {
		return 0
	}
	var ns int64
	for i := sort.Search(len(t.sleeps), func(i int) bool { return t.sleeps[i].end > from }); i < len(t.sleeps) && t.sleeps[i].start < to; i++ {
		if s := t.sleeps[i]; !s.born && !s.wait {
			ns += min(s.end, to) - max(s.start, from)
		}
	}
	return float64(ns)
}

// threadMarks is a thread's drive-bound items, summed as they come into
// marks: each mark holds the sums of the thread's items up to its time,
// as the factors of its new length less its recorded length (c0 +
// A·ca + T·ct, A and T its program's ratio). A mark closes when a sleep
// of the thread comes between it and the next item, or after markNs:
// a wake-up the thread gave in between is placed by the marks no
// finer than that.
type threadMarks struct {
	pid   uint32
	open  period
	marks []mark
	// extra: how much longer its computation after a busy period takes on
	// the new drive (a colder start after a longer idle), cumulative in c0.
	extra []mark
}

func (m *threadMarks) addExtra(t int64, ns float64) {
	if n := len(m.extra); n > 0 {
		ns += m.extra[n-1].c0
		t = max(t, m.extra[n-1].t)
	}
	m.extra = append(m.extra, mark{t: t, c0: ns})
}

type mark struct {
	t          int64
	c0, ca, ct float64 // cumulative
}

// markNs is the longest stretch of a thread's items one mark sums.
const markNs = 1_000_000

// idleTickNs is the longest a thread may run after a timeout and still be
// idle: a thread pool's worker waking from a timed wait with nothing to
// do goes back to sleep within microseconds.
const idleTickNs = 1_000_000

// addItem takes a thread's next drive-bound item (in arrival order).
func (m *threadMarks) addItem(it *item, lastSleep int64) {
	m.pid = it.pid
	if m.open.open && float64(it.start) > m.open.end {
		m.closeOpen(lastSleep)
	}
	m.open.add(it)
}

func (m *threadMarks) closeOpen(lastSleep int64) {
	p := &m.open
	length, w := p.weight()
	var asleep, to float64
	for _, pt := range p.parts {
		asleep += pt.asleep
		to += pt.to
	}
	c0, ca, ct := w*p.base-length, w*asleep, w*to
	end := int64(p.end)
	p.open = false
	if n := len(m.marks); n > 0 {
		last := &m.marks[n-1]
		if last.t > lastSleep && end-last.t < markNs && end >= last.t {
			last.t, last.c0, last.ca, last.ct = end, last.c0+c0, last.ca+ca, last.ct+ct
			return
		}
		c0, ca, ct = c0+last.c0, ca+last.ca, ct+last.ct
	}
	m.marks = append(m.marks, mark{t: end, c0: c0, ca: ca, ct: ct})
}

// delta is how much longer the thread's items up to x take on the new
// drive (negative: shorter).
func (m *threadMarks) delta(x int64, r ratio) float64 {
	var v float64
	if i := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].t > x }) - 1; i >= 0 {
		k := &m.marks[i]
		v = k.c0 + r.a*k.ca + r.t*k.ct
	}
	if j := sort.Search(len(m.extra), func(j int) bool { return m.extra[j].t > x }) - 1; j >= 0 {
		v += m.extra[j].c0
	}
	return v
}

// between says whether the thread has a drive-bound item ending in
// (from, to].
func (m *threadMarks) between(from, to int64) bool {
	i := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].t > from })
	return i < len(m.marks) && m.marks[i].t <= to
}

// wakeTimes follows every traced thread's time onto the new drive (see
// wakeGraph) and returns how much later (earlier: negative) the traced
// command ends than it did, ok false where the trace has no sleep records
// or no thread whose sleeps another ended (then the busy periods say it
// all).
func (g *wakeGraph) wakeTimes(marks map[uint32]*threadMarks, ratios map[uint32]ratio) (shift float64, ok bool) {
	if !g.recorded() {
		return 0, false
	}
	type thread struct {
		sleeps   []sleepRec
		marks    *threadMarks
		r        ratio
		anchored bool
		at       int64   // recorded time of its latest resolved point
		atNew    float64 // its new time
		last     int64
		// idle is how long its latest timeouts slept, each followed by
		// no more than idleTickNs of running and no drive-bound item
		// before it slept again: an idle thread's, which do not hold it
		// when another wakes it. polling: its latest sleep was such a
		// timeout.
		idle    float64
		polling bool
		first   int64
	}
	threads := map[uint32]*thread{}
	get := func(tid uint32) *thread {
		th := threads[tid]
		if th == nil {
			th = &thread{marks: &threadMarks{}}
			threads[tid] = th
		}
		return th
	}
	for tid, m := range marks {
		th := get(tid)
		th.marks = m
		if n := len(m.marks); n > 0 {
			th.last = max(th.last, m.marks[n-1].t)
		}
	}
	type ref struct {
		tid uint32
		i   int
	}
	var order []ref
	woken := false
	for tid, ts := range g.byTid {
		th := get(tid)
		if byEnd := func(a, b sleepRec) int { return cmp.Compare(a.end, b.end) }; !slices.IsSortedFunc(ts.sleeps, byEnd) {
			slices.SortStableFunc(ts.sleeps, byEnd) // once: predicting for each drive finds them sorted
		}
		th.sleeps = ts.sleeps
		th.r = ratios[ts.pid]
		th.last = max(th.last, ts.last)
		for i, s := range ts.sleeps {
			order = append(order, ref{tid, i})
			if s.waker != 0 && s.waker != tid && !s.born && g.byTid[s.waker] != nil {
				woken = true
			}
		}
	}
	if !woken {
		return 0, false
	}
	for tid, th := range threads {
		if _, has := g.byTid[tid]; !has {
			th.r = ratios[th.marks.pid]
		}
	}
	at := func(th *thread, x int64) float64 {
		if !th.anchored {
			return float64(x) + th.marks.delta(x, th.r)
		}
		return th.atNew + float64(x-th.at) + th.marks.delta(x, th.r) - th.marks.delta(th.at, th.r)
	}
	slices.SortFunc(order, func(a, b ref) int {
		sa, sb := threads[a.tid].sleeps[a.i], threads[b.tid].sleeps[b.i]
		return cmp.Or(cmp.Compare(sa.end, sb.end), cmp.Compare(a.tid, b.tid), cmp.Compare(a.i, b.i))
	})
	all := make([]*thread, 0, len(threads))
	for _, th := range threads {
		th.first = th.last
		if len(th.sleeps) > 0 {
			th.first = th.sleeps[0].start
		}
		if len(th.marks.marks) > 0 {
			th.first = min(th.first, th.marks.marks[0].t)
		}
		all = append(all, th)
	}
	// seen is how far the other threads' work had come, on the new
	// drive, by x on the recording: what a thread polling at x may have
	// seen done. A thread asleep at x counts where it fell asleep; one
	// polling itself does not count.
	seen := func(x int64, self *thread) float64 {
		v := math.Inf(-1)
		for _, u := range all {
			if u == self || u.polling || u.first > x {
				continue
			}
			y := min(x, u.last)
			if i := sort.Search(len(u.sleeps), func(i int) bool { return u.sleeps[i].end > y }); i < len(u.sleeps) && u.sleeps[i].start <= y {
				y = u.sleeps[i].start
			}
			v = math.Max(v, at(u, y))
		}
		return v
	}
	// othersWaited says whether a thread other than self had a
	// drive-bound item end in (from, to]: every thread's marks by time.
	type markAt struct {
		t  int64
		th *thread
	}
	var marksAt []markAt
	for _, th := range all {
		for _, k := range th.marks.marks {
			marksAt = append(marksAt, markAt{k.t, th})
		}
	}
	slices.SortFunc(marksAt, func(a, b markAt) int { return cmp.Compare(a.t, b.t) })
	othersWaited := func(self *thread, from, to int64) bool {
		i := sort.Search(len(marksAt), func(i int) bool { return marksAt[i].t > from })
		for ; i < len(marksAt) && marksAt[i].t <= to; i++ {
			if marksAt[i].th != self {
				return true
			}
		}
		return false
	}
	for _, o := range order {
		th := threads[o.tid]
		s := th.sleeps[o.i]
		if !th.anchored || s.start-th.at > idleTickNs || th.marks.between(th.at, s.start) {
			th.idle, th.polling = 0, false // it worked since: its timeouts before count
		}
		var end float64
		w := threads[s.waker]
		switch {
		case s.waker != 0 && s.waker != o.tid && w != nil && s.woken > 0:
			byWaker := at(w, s.woken) + float64(s.end-s.woken)
			if s.born {
				end = byWaker
			} else {
				end = math.Max(at(th, s.start)-th.idle, byWaker)
			}
			th.idle, th.polling = 0, false
		case s.born || s.wait:
			end = at(th, s.end) // its own items decide
		case th.polling:
			// A timeout after another with nothing done between: the
			// thread polls (fio's main thread for its jobs, every 10 ms),
			// and goes on once what it saw done by then is done on the new
			// drive — no later than its timeout says.
			before := at(th, s.start) - th.idle
			end = math.Min(at(th, s.start)+float64(s.end-s.start), math.Max(before, seen(s.end, th)))
			th.idle = end - before
		default:
			end = at(th, s.start) + float64(s.end-s.start)
			if othersWaited(th, s.start, s.end) {
				// A timeout while other threads waited for the drive:
				// what it waited for, as far as the trace tells, was
				// their work (Chromium's browser gave up on its renderer
				// after 140–200 ms twice on the USB model, never on the
				// VM disk). As a thread polling does, it goes on once
				// what they did by then is done on the new drive, no
				// later than its timeout says.
				end = math.Min(end, math.Max(at(th, s.start), seen(s.end, th)))
			}
			th.idle += float64(s.end - s.start)
			th.polling = true
		}
		th.at, th.atNew, th.anchored = s.end, end, true
	}
	// The run ends when the traced command does: the threads an untraced
	// process (ioshape's launcher) created, the last of them to end — a
	// thread pool's timer that fired after a slow drive's waits does not
	// hold it up. Without one (a recording attached to running
	// processes), the last thread to end.
	var rootRec int64 = math.MinInt64
	rootNew := math.Inf(-1)
	for _, th := range threads {
		for _, s := range th.sleeps {
			if s.born && threads[s.waker] == nil {
				rootRec = max(rootRec, th.last)
				rootNew = math.Max(rootNew, at(th, th.last))
				break
			}
		}
	}
	if !math.IsInf(rootNew, -1) {
		return rootNew - float64(rootRec), true
	}
	var lastRec int64 = math.MinInt64
	lastNew := math.Inf(-1)
	for _, th := range threads {
		lastRec = max(lastRec, th.last)
		lastNew = math.Max(lastNew, at(th, th.last))
	}
	return lastNew - float64(lastRec), true
}
