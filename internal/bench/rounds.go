package bench

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/ioshape/ioshape/internal/drive"
)

// A drive's speed moves over seconds, not only between requests: the VM
// disk here read 1 MiB at depth 32 at 1.5 GB/s for 43 s, then at 2.1 GB/s,
// and a test that ran once measured whichever moment it fell in (1 MiB at
// depth 4: 1.18 ms a request one bench, 2.61 ms the one before, while a
// copy on the same disk took the same time both days). So the grid runs
// in rounds spread over the whole bench, and each test's rounds are
// combined: pooled when they agree within what their own requests vary
// (a slow disk's few random reads a round), the median round when they do
// not (the drive moved).

// minRoundRun is the shortest run of a test in rounds.
const minRoundRun = 150 * time.Millisecond

// roundsFor is how many times the grid runs when each test has each in
// all: three rounds of a third, where a third is long enough, else one.
func roundsFor(each time.Duration) int {
	if each >= 3*minRoundRun {
		return 3
	}
	return 1
}

// run is one fio run of a test: its point and what pooling needs.
type run struct {
	pt   drive.Point
	ios  float64 // requests completed
	sdUs float64 // their latencies' standard deviation
	secs float64 // the run's time
}

// runOf is the test's run in fio's report.
func runOf(r *fioResult, t Test) (run, error) {
	pt, err := pointOf(r, t)
	if err != nil {
		return run{}, err
	}
	side := r.side(t.Op)
	return run{pt: pt, ios: float64(side.TotalIOs), sdUs: side.LatNs.Stddev / 1e3, secs: float64(side.RuntimeMs) / 1e3}, nil
}

// agreeSE is how many standard errors apart two rounds' mean latencies may
// be and still be one drive's: beyond it the drive moved between them.
const agreeSE = 4

// combine is a test's point from its rounds: as one run of their length
// where their means agree, the round with the median mean where they do not.
func combine(rs []run) drive.Point {
	if len(rs) == 1 {
		return rs[0].pt
	}
	if agree(rs) {
		if pt, ok := pooled(rs); ok {
			return pt
		}
	}
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b run) int { return cmp.Compare(a.pt.LatUs, b.pt.LatUs) })
	return sorted[(len(sorted)-1)/2].pt
}

// agree reports whether every two rounds' means are within agreeSE
// standard errors of their difference (unknown spreads: they do not).
func agree(rs []run) bool {
	for i, a := range rs {
		for _, b := range rs[i+1:] {
			if a.ios < 2 || b.ios < 2 {
				return false
			}
			se := math.Sqrt(a.sdUs*a.sdUs/a.ios + b.sdUs*b.sdUs/b.ios)
			if math.Abs(a.pt.LatUs-b.pt.LatUs) > agreeSE*se {
				return false
			}
		}
	}
	return true
}

// pooled is the rounds as one run: their requests over their time, the
// mean latency over all their requests, the 99th percentile weighted by
// requests (not the pooled one's, which fio did not see, but near it).
func pooled(rs []run) (drive.Point, bool) {
	var ios, secs, lat, p99, bytesPerSec float64
	for _, r := range rs {
		ios += r.ios
		secs += r.secs
		lat += r.ios * r.pt.LatUs
		p99 += r.ios * r.pt.LatP99Us
		bytesPerSec += r.secs * r.pt.MBs
	}
	if ios <= 0 || secs <= 0 {
		return drive.Point{}, false
	}
	pt := rs[0].pt
	pt.IOPS = round(ios / secs)
	pt.MBs = round(bytesPerSec / secs)
	pt.LatUs = round(lat / ios)
	pt.LatP99Us = round(p99 / ios)
	return pt, true
}
