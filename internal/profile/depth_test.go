package profile

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// The sweep's depths, busy time, idle gaps and latency sum are those
// counted directly from the intervals — the depth an arrival sees is
// itself and every earlier I/O not yet complete; busy time is the length
// of the intervals' union; a gap is the time from the latest completion to
// an arrival that finds nothing in flight — with I/Os that overlap, nest,
// take no time, arrive together and leave gaps, on a full sweep and a
// bare one.
func TestDepthSweepAsCounted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, spread := range []int64{0, 10, 1_000, 100_000} {
		type io struct{ a, c int64 }
		ios := make([]io, 3000)
		var at int64
		for i := range ios {
			at += rng.Int64N(spread + 1)
			lat := []int64{0, rng.Int64N(50), rng.Int64N(5 * (spread + 1))}[rng.IntN(3)]
			ios[i] = io{at, at + lat}
		}
		full, bare := newDepthSweep(), newBareSweep()
		wantDepths := map[int]int64{}
		var wantGaps []int64
		var wantLat float64
		for i, x := range ios {
			full.arrive(x.a, x.c)
			bare.arrive(x.a, x.c)
			d, latest := 1, int64(-1)
			for _, y := range ios[:i] {
				if y.c > x.a {
					d++
				}
				latest = max(latest, y.c)
			}
			if got := bare.inflight.Len(); got != d {
				t.Fatalf("spread %d, I/O %d: bare sweep sees depth %d, want %d", spread, i, got, d)
			}
			wantDepths[d]++
			if i > 0 && d == 1 {
				wantGaps = append(wantGaps, x.a-latest)
			}
			wantLat += float64(x.c - x.a)
		}
		full.finish()
		for d, n := range wantDepths {
			if d >= len(full.depths) || full.depths[d] != n {
				t.Fatalf("spread %d: %d arrivals at depth %d, want %d", spread, full.depths[min(d, len(full.depths)-1)], d, n)
			}
		}
		var gapSum float64
		for _, g := range wantGaps {
			gapSum += float64(g)
		}
		if full.gaps.n != int64(len(wantGaps)) || full.gaps.sum != gapSum || bare.gaps.sum != gapSum {
			t.Fatalf("spread %d: %d gaps summing %v (bare %v), want %d summing %v", spread, full.gaps.n, full.gaps.sum, bare.gaps.sum, len(wantGaps), gapSum)
		}
		// The union's length, from the intervals sorted by start.
		sorted := append([]io(nil), ios...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].a < sorted[j].a })
		var busy, lo, hi int64
		for i, x := range sorted {
			if i == 0 || x.a >= hi {
				busy += hi - lo
				lo, hi = x.a, x.c
			}
			hi = max(hi, x.c)
		}
		busy += hi - lo
		if full.busy != busy || full.latSum != wantLat || full.n != int64(len(ios)) {
			t.Fatalf("spread %d: busy %d, latencies %v, %d I/Os; want %d, %v, %d", spread, full.busy, full.latSum, full.n, busy, wantLat, len(ios))
		}
	}
}
