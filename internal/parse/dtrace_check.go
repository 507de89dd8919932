package parse

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/order"
)

// Why a block record from DTrace cannot be right. Under load, DTrace (Oracle's
// on Linux, seen in real runs) loses probe firings and its dynamic variables
// then hand one request's saved start to another: sizes of 0 B or of a
// timestamp, device 0:0, starts seconds before the request was issued. Such
// a record describes nothing that happened, so it is dropped and counted.
const (
	CorruptDevice   = "device 0:0 or past the largest device number"
	CorruptSize     = "a size no block request has (0, not whole sectors, or 4 GiB and more)"
	CorruptBytes    = "more bytes done than requested"
	CorruptTimes    = "completed before it started, or started before tracing did"
	CorruptStale    = "a start shared with another request"
	CorruptOvertook = "in flight while 1,024 later requests of its thread came and went"
)

// overtakeLimit is how many later requests of the same thread may complete
// while one stays in flight before its start is taken as stale: deeper than
// any queue a drive keeps (SATA 32, SCSI 256, virtio 256; NVMe allows more
// but schedules fairly), so a real request is never dropped by it.
const overtakeLimit = 1024

// maxTrackedThreads bounds the threads whose recent starts are kept.
const maxTrackedThreads = 512

// startRing holds the start times of one thread's latest requests, with
// their counts and their minimum, each kept in constant time per request.
type startRing struct {
	starts [overtakeLimit]int64
	n, at  int
	seen   map[int64]int
	mins   []int64 // the window's starts in a non-decreasing deque
}

func (s *startRing) add(t int64) {
	if s.n == overtakeLimit {
		old := s.starts[s.at]
		if s.seen[old]--; s.seen[old] == 0 {
			delete(s.seen, old)
		}
		if s.mins[0] == old {
			s.mins = s.mins[1:]
		}
	}
	s.starts[s.at] = t
	s.at = (s.at + 1) % overtakeLimit
	s.n = min(s.n+1, overtakeLimit)
	s.seen[t]++
	for len(s.mins) > 0 && s.mins[len(s.mins)-1] > t {
		s.mins = s.mins[:len(s.mins)-1]
	}
	s.mins = append(s.mins, t)
}

// overtaken says whether a full window's every start is later than t.
func (s *startRing) overtaken(t int64) bool {
	return s.n == overtakeLimit && s.mins[0] > t
}

// checkIO says why a block record (start done major minor blkno bcount
// bytes error flags pid tid) cannot be right, or "".
func (r *DTraceReader) checkIO(n [11]int64) string {
	start, done, major, minor, bcount, bytes := n[0], n[1], n[2], n[3], n[5], n[6]
	switch {
	case major == 0 && minor == 0, major < 0 || major > 4095, minor < 0 || minor >= 1<<24:
		return CorruptDevice // Linux's majors have 12 bits, xnu's 8
	case bcount <= 0, bcount%512 != 0, bcount >= 1<<32:
		return CorruptSize // b_bcount is 32 bits wide on both systems
	case bytes > bcount:
		return CorruptBytes
	case done < start, r.ready != 0 && start < r.ready:
		return CorruptTimes
	}
	return ""
}

// stale says whether a request's start was handed on from another's: a
// start this thread's requests already had, or one so early that a full
// queue of later requests came and went meanwhile.
func (r *DTraceReader) stale(tid uint32, start int64) string {
	ring := r.recent[tid]
	if ring == nil {
		if len(r.recent) >= maxTrackedThreads {
			clear(r.recent)
		}
		ring = &startRing{seen: map[int64]int{}}
		r.recent[tid] = ring
	}
	if ring.seen[start] > 0 {
		return CorruptStale
	}
	if ring.overtaken(start) {
		return CorruptOvertook
	}
	ring.add(start)
	return ""
}

// CorruptText says, in one line, what was dropped; "" if nothing was.
func CorruptText(byWhy map[string]int64) string {
	var total int64
	whys := make([]string, 0, len(byWhy))
	for w, c := range byWhy {
		total += c
		whys = append(whys, w)
	}
	if total == 0 {
		return ""
	}
	sort.Slice(whys, func(i, j int) bool { return byWhy[whys[i]] > byWhy[whys[j]] })
	s := fmt.Sprintf("%d corrupted records from the tracer dropped (DTrace under load): ", total)
	for i, w := range whys {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%d %s", byWhy[w], w)
	}
	return s
}

// aioWindow is how far behind the latest line a libaio reaping must be
// before it is matched: DTrace prints each CPU's buffer in turn, so a
// reaping can come before the submission it reaps (switchrate is 10 Hz).
const aioWindow = 1_000_000_000

// maxAioPending bounds the libaio requests awaiting their reaping, per
// process: a program that never reaps must not grow the reader.
const maxAioPending = 1 << 16

// aioMatch pairs libaio submissions with reapings in time order, whatever
// order the lines came in.
type aioMatch struct {
	subs  map[uint32][]event.Event // per process, not yet reaped, by start
	reaps order.Heap[aioReap]      // by end
}

type aioReap struct {
	pid    uint32
	end, n int64
}

func newAioMatch() aioMatch { return aioMatch{subs: map[uint32][]event.Event{}} }

func (a *aioMatch) pending() bool { return a.reaps.Len() > 0 }

// submit queues n libaio requests submitted together. The script reads the
// first iocb only: the others take its size, and offsets the trace does
// not know.
func (a *aioMatch) submit(e *event.Event, n int64) {
	q := a.subs[e.Pid]
	for i := int64(0); i < n && len(q) < maxAioPending; i++ {
		s := *e
		s.Flags |= event.FlagAsync
		if i > 0 {
			s.Offset = -1
		}
		// Lines come nearly in order: the place is near the end.
		k := len(q)
		for k > 0 && q[k-1].Start > s.Start {
			k--
		}
		q = slices.Insert(q, k, s)
	}
	a.subs[e.Pid] = q
}

func (a *aioMatch) reap(pid uint32, end, n int64) {
	a.reaps.Push(end, aioReap{pid, end, n})
}

// match turns the reapings that ended before until into events, in time
// order (and the earliest ones past maxAioPending, to bound memory). Not
// later ones: a reaping still unread may have ended earlier and taken the
// submissions they would. Each takes its process's earliest submissions
// made before it ended, so the depth is exact; which of several in flight
// completed is not said, so latencies are approximate.
func (a *aioMatch) match(until int64) []Record {
	var out []Record
	for a.reaps.Len() > 0 && (a.reaps.MinKey() <= until || a.reaps.Len() > maxAioPending) {
		_, rp := a.reaps.Pop()
		q := a.subs[rp.pid]
		taken := 0
		for taken < len(q) && int64(taken) < rp.n && q[taken].Start <= rp.end {
			e := q[taken]
			e.End = rp.end
			e.Bytes = e.Size
			if e.Op != event.Read && e.Op != event.Write {
				e.Offset = -1
			}
			out = append(out, Record{Kind: KindEvent, Event: e})
			taken++
		}
		a.subs[rp.pid] = q[taken:]
	}
	return out
}

// DTraceLossText explains, for a D capture, the requests seen started and
// never completed: a few are in flight when tracing stops; more than a
// drive's queue holds were lost by DTrace, which drops probe firings under
// load without a word (Oracle's on Linux, in real runs).
func DTraceLossText(unfinished int64) []string {
	if unfinished <= event.InFlightAllowance {
		return nil
	}
	return []string{fmt.Sprintf("DTrace lost the completions of about %d block requests: they started and never completed in the trace (more than a drive keeps in flight); their I/O is missing from the block layer", unfinished)}
}

// staleWindowNs is how long a record waits, in completion time, before it
// is passed on: a stale start is handed on within a burst of lost firings,
// and DTrace prints each CPU's buffer in turn, so lines come up to a few
// drain intervals (switchrate 10 Hz) out of order.
const staleWindowNs = 2 * aioWindow // longer: the reaped come out in order

// maxWindow bounds the records the window holds.
const maxWindow = 1 << 16

// staleWindow holds events for a second of completions and passes them on
// in completion order. Two requests cannot start at the same nanosecond on
// one thread: when a second block record brings a start already held, both
// are stale (the first was handed on as well) and both are dropped.
type staleWindow struct {
	heap    order.Heap[Record]
	keys    map[staleKey]bool // block starts held
	dropped map[staleKey]bool // held, then found stale
	latest  int64
}

type staleKey struct {
	tid   uint32
	start int64
}

func newStaleWindow() staleWindow {
	return staleWindow{keys: map[staleKey]bool{}, dropped: map[staleKey]bool{}}
}

func (w *staleWindow) len() int { return w.heap.Len() }

// add takes an event and appends to out what leaves the window. A block
// record whose Text is set was found stale already: it is dropped, and so
// is a held one with its start.
func (w *staleWindow) add(rec Record, out []Record) []Record {
	if rec.Event.Layer == event.Block {
		k := staleKey{rec.Event.Tid, rec.Event.Start}
		if w.keys[k] || rec.Text != "" {
			why := rec.Text
			if w.keys[k] && !w.dropped[k] {
				w.dropped[k] = true
				why = CorruptStale
				out = append(out, Record{Kind: KindCounter, Name: CounterCorrupt, N: 1, Text: CorruptStale})
			}
			return append(out, Record{Kind: KindCounter, Name: CounterCorrupt, N: 1, Text: why})
		}
		w.keys[k] = true
	}
	w.heap.Push(rec.Event.End, rec)
	w.latest = max(w.latest, rec.Event.End)
	if w.heap.Len() >= maxWindow {
		return w.flush(math.MaxInt64, out)
	}
	return w.flush(w.latest-staleWindowNs, out)
}

// flush passes on, in completion order, the events that completed before
// until.
func (w *staleWindow) flush(until int64, out []Record) []Record {
	for w.heap.Len() > 0 && w.heap.MinKey() < until {
		_, r := w.heap.Pop()
		if r.Event.Layer == event.Block {
			k := staleKey{r.Event.Tid, r.Event.Start}
			delete(w.keys, k)
			if w.dropped[k] {
				delete(w.dropped, k)
				continue
			}
		}
		out = append(out, r)
	}
	return out
}
