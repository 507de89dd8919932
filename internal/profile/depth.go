package profile

import "github.com/ioshape/ioshape/internal/order"

// depthSweep walks I/Os in arrival order and keeps the set in flight: the
// depth each arrival sees (itself included, so one I/O at a time is depth
// 1), busy time, idle gaps (from the last completion to the next arrival
// while nothing was in flight), and the sum of latencies, which is the
// integral of depth over time.
//
// Busy time and gaps need no more than the busy period so far — when it
// started and the latest completion of the I/Os in it — since an arrival
// after that completion finds nothing in flight; only the depth an arrival
// sees needs the set itself.
//
// A layer's sweep also keeps the set in flight for its devices' sweeps
// (arriveWith): each I/O in its heap names the device sweep it counts in,
// so a device's depth is a count kept as the layer's heap fills and
// empties, and a device sweep has no heap of its own to keep.
type depthSweep struct {
	inflight  order.Heap[*depthSweep] // completions in flight, each with the sweep it counts in
	live      int                     // I/Os in flight counted in this sweep
	started   bool
	busyStart int64   // the current busy period: from its first arrival
	busyEnd   int64   // to the latest completion of its I/Os
	busy      int64   // ns with depth > 0, in earlier busy periods
	depths    []int64 // arrivals seen at each depth
	gaps      logHist
	n         int64
	latSum    float64 // ns; the integral of depth over time
	// steady counts, in hundredths, the idle share of each run of
	// idleWindow consecutive arrivals (from the first arrival of a run to
	// the first of the next); windowStart and windowIdle are where the run
	// under way began and the idle time (gaps.sum) at its start.
	steady      [101]int64
	windowStart int64
	windowIdle  float64
	// bare keeps only the set in flight and the idle time (gaps.sum): what
	// a program's own sweep in classify reads, at a third of the cost.
	bare bool
}

func newDepthSweep() *depthSweep { return &depthSweep{} }

// newBareSweep is a depthSweep that keeps only the set in flight and the
// idle time.
func newBareSweep() *depthSweep { return &depthSweep{bare: true} }

// clone copies s; the I/Os in flight count where they counted before.
func (s *depthSweep) clone() *depthSweep {
	c := *s
	c.inflight = s.inflight.Clone()
	c.depths = append([]int64(nil), s.depths...)
	c.gaps = s.gaps.clone()
	return &c
}

// arrive records an I/O arriving at a and completing at c.
func (s *depthSweep) arrive(a, c int64) {
	s.arriveWith(a, c, s)
}

// arriveWith records an I/O arriving at a and completing at c in s and in
// dev, the sweep of a part of s's I/Os (a device of s's layer) that s
// keeps in flight for. dev is s for an I/O counted in s alone.
func (s *depthSweep) arriveWith(a, c int64, dev *depthSweep) {
	if c < a {
		c = a
	}
	for s.inflight.Len() > 0 && s.inflight.MinKey() <= a {
		_, done := s.inflight.Pop()
		done.live--
	}
	s.inflight.Push(c, dev)
	dev.live++
	s.count(a, c, s.inflight.Len())
	if dev != s {
		dev.count(a, c, dev.live)
	}
}

// count records an arrival at a, completing at c, that finds d I/Os in
// flight (itself included).
func (s *depthSweep) count(a, c int64, d int) {
	switch {
	case !s.started:
		s.started, s.busyStart, s.busyEnd = true, a, c
	case a >= s.busyEnd: // everything before has completed: a gap, then a new busy period
		s.busy += s.busyEnd - s.busyStart
		if s.bare {
			s.gaps.sum += float64(a - s.busyEnd)
		} else {
			s.gaps.add(a - s.busyEnd)
		}
		s.busyStart, s.busyEnd = a, c
	default:
		s.busyEnd = max(s.busyEnd, c)
	}
	if s.bare {
		return
	}
	for d >= len(s.depths) {
		s.depths = append(s.depths, 0)
	}
	s.depths[d]++
	s.n++
	s.latSum += float64(c - a)
	switch {
	case s.n == 1:
		s.windowStart, s.windowIdle = a, s.gaps.sum
	case (s.n-1)%idleWindow == 0:
		if span := a - s.windowStart; span > 0 {
			share := min(1, (s.gaps.sum-s.windowIdle)/float64(span))
			s.steady[int(share*100+0.5)]++
		}
		s.windowStart, s.windowIdle = a, s.gaps.sum
	}
}

// idleWindow is the run of arrivals whose idle share steadyIdle takes the
// median of: long enough to hold a benchmark's burst and its rest (64
// I/Os then a pause), short enough that a pause or a stretch of another
// program's interference fills few runs.
const idleWindow = 64

// steadyIdle is the median idle share over runs of idleWindow arrivals —
// the workload's own rhythm, which one long pause (a user's, a start-up's)
// or a stretch of a busy CPU does not move — and whether there were runs
// enough (three) to say.
func (s *depthSweep) steadyIdle() (float64, bool) {
	var runs int64
	for _, c := range s.steady {
		runs += c
	}
	if runs < 3 {
		return 0, false
	}
	var seen int64
	for i, c := range s.steady {
		if seen += c; 2*seen >= runs {
			return float64(i) / 100, true
		}
	}
	return 1, true
}

// passInflight empties s's own set in flight: a copy of s (clone) that
// sweeps s's layer keeps it from now on, each I/O still counting in s.
func (s *depthSweep) passInflight() { s.inflight = order.Heap[*depthSweep]{} }

// finish ends the busy period under way.
func (s *depthSweep) finish() {
	s.busy += s.busyEnd - s.busyStart
	s.busyStart = s.busyEnd
}

// DepthStats describes queue depth: the number of I/Os in flight seen by
// each arriving I/O (itself included), and over time.
type DepthStats struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  int     `json:"max"`
	Mean float64 `json:"mean"`
	// MeanTimeWeighted is the average number in flight over busy time (time
	// with at least one I/O in flight).
	MeanTimeWeighted float64 `json:"mean_time_weighted"`
	BusyS            float64 `json:"busy_s"`
	// LittlesLaw is arrival rate over busy time × mean latency, which must
	// equal MeanTimeWeighted; LittlesLawError is their relative difference,
	// a check on the trace's consistency.
	LittlesLaw      float64       `json:"littles_law"`
	LittlesLawError float64       `json:"littles_law_error"`
	Histogram       []DepthBucket `json:"histogram"`
}

// DepthBucket is how many arrivals saw a given depth.
type DepthBucket struct {
	Depth int   `json:"depth"`
	Count int64 `json:"count"`
}

func (s *depthSweep) stats() DepthStats {
	var ds DepthStats
	if s.n == 0 {
		return ds
	}
	var keys []int
	for d, c := range s.depths {
		if c > 0 {
			keys = append(keys, d)
		}
	}
	var sum float64
	for _, d := range keys {
		c := s.depths[d]
		ds.Histogram = append(ds.Histogram, DepthBucket{d, c})
		sum += float64(d) * float64(c)
	}
	q := func(p float64) float64 {
		rank := int64(p*float64(s.n) + 0.999999)
		var seen int64
		for _, b := range ds.Histogram {
			seen += b.Count
			if seen >= rank {
				return float64(b.Depth)
			}
		}
		return float64(keys[len(keys)-1])
	}
	ds.P50, ds.P90, ds.P99 = q(0.5), q(0.9), q(0.99)
	ds.Max = keys[len(keys)-1]
	ds.Mean = round3(sum / float64(s.n))
	if s.busy > 0 {
		ds.BusyS = round3(float64(s.busy) / 1e9)
		ds.MeanTimeWeighted = round3(s.latSum / float64(s.busy))
		lambda := float64(s.n) / float64(s.busy)
		ds.LittlesLaw = round3(lambda * s.latSum / float64(s.n))
		if ds.MeanTimeWeighted > 0 {
			ds.LittlesLawError = round3(abs(ds.LittlesLaw-ds.MeanTimeWeighted) / ds.MeanTimeWeighted)
		}
	}
	return ds
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
