package predict

import (
	"slices"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
)

// takenLog holds, per thread, what a virtual machine's host took of its
// time on a CPU (event.CallSteal records), as running sums by the records'
// ends: the accumulator takes what falls in each item's stretch, since the
// thread's previous item, out of the computation it moves. A busy host
// adds it to a recording (grep -r on the USB model: 1.25 s on a CPU by the
// clock, 0.98 s by its run time, a busier minute 3.12 against 1.64 s); the
// work would not take it on another drive.
type takenLog struct {
	byTid map[uint32]*takenSeries
	total int64 // ns, all threads
}

// takenSeries is one thread's: ends[i] and the sum of what was taken up
// to it. Records closer than takenMergeNs to the entry before share it, so
// that a thread keeps at most one entry a millisecond.
type takenSeries struct {
	ends []int64
	sums []float64
}

const takenMergeNs = 1_000_000

func (l *takenLog) add(e *event.Event) {
	if e.Blocked <= 0 {
		return
	}
	if l.byTid == nil {
		l.byTid = map[uint32]*takenSeries{}
	}
	s := l.byTid[e.Tid]
	if s == nil {
		s = &takenSeries{}
		l.byTid[e.Tid] = s
	}
	l.total += e.Blocked
	ns, n := float64(e.Blocked), len(s.ends)
	i := sort.Search(n, func(i int) bool { return s.ends[i] > e.End })
	if i == n && n >= 2 && e.End-s.ends[n-2] < takenMergeNs {
		s.ends[n-1], s.sums[n-1] = e.End, s.sums[n-1]+ns
		return
	}
	// In its place (records from several CPUs come a little out of
	// order), and the sums after it grow by it.
	before := s.upTo(e.End)
	s.ends = slices.Insert(s.ends, i, e.End)
	s.sums = slices.Insert(s.sums, i, before)
	for j := i; j < len(s.sums); j++ {
		s.sums[j] += ns
	}
}

// between is what was taken from thread tid in records ending in
// (from, to].
func (l *takenLog) between(tid uint32, from, to int64) float64 {
	s := l.byTid[tid]
	if s == nil || to <= from {
		return 0
	}
	return s.upTo(to) - s.upTo(from)
}

func (s *takenSeries) upTo(x int64) float64 {
	if i := sort.Search(len(s.ends), func(i int) bool { return s.ends[i] > x }) - 1; i >= 0 {
		return s.sums[i]
	}
	return 0
}
