package profile

import (
	"math/rand/v2"
	"reflect"
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

// A device's sweep kept by its layer's (arriveWith) — from the start, or
// from when a second device came and the layer's sweep began as a copy of
// the first's — counts what the device's own sweep counts: the same
// depths, gaps, busy time and latencies.
func TestDeviceSweepsKeptByTheLayer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, takeover := range []int{0, 1, 500} {
		const devices = 3
		var own, kept [devices]*depthSweep
		for d := range own {
			own[d], kept[d] = newDepthSweep(), newDepthSweep()
		}
		layer := newDepthSweep()
		var at int64
		for i := range 4000 {
			at += rng.Int64N(300)
			c := at + []int64{0, rng.Int64N(50), rng.Int64N(3000)}[rng.IntN(3)]
			d := rng.IntN(devices)
			if i < takeover {
				d = 0 // one device so far: it sweeps alone
			}
			own[d].arrive(at, c)
			switch {
			case i < takeover:
				kept[0].arrive(at, c)
			default:
				if i == takeover && takeover > 0 {
					layer = kept[0].clone()
					kept[0].passInflight()
				}
				layer.arriveWith(at, c, kept[d])
			}
			if kept[d].live != own[d].inflight.Len() {
				t.Fatalf("takeover %d, I/O %d: device %d has %d in flight kept by the layer, %d of its own", takeover, i, d, kept[d].live, own[d].inflight.Len())
			}
		}
		for d := range own {
			own[d].finish()
			kept[d].finish()
			if w, g := own[d].stats(), kept[d].stats(); !reflect.DeepEqual(w, g) || own[d].gaps.sum != kept[d].gaps.sum || own[d].gaps.n != kept[d].gaps.n {
				t.Fatalf("takeover %d, device %d: kept by the layer %+v (gaps %v), own %+v (gaps %v)", takeover, d, g, kept[d].gaps.sum, w, own[d].gaps.sum)
			}
		}
	}
}
