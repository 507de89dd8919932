package profile

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// The series keeps every I/O and byte whatever the coarsening, and its mean
// in-flight count matches the queue depth the workload was built with.
func TestSeriesTotalsAndDepth(t *testing.T) {
	for _, n := range []int{500, 200000} { // one bin width, and many doublings
		evs := gen(n, 4, 4096, 200e3, 0, false, event.Read)
		p := build(evs, Options{Series: true})
		s := p.Series
		if s == nil || s.Block == nil {
			t.Fatalf("n=%d: no block series", n)
		}
		if len(s.Block.IOs) > maxBins {
			t.Errorf("n=%d: %d bins, want at most %d", n, len(s.Block.IOs), maxBins)
		}
		var ios, bytes int64
		var busy float64
		for i := range s.Block.IOs {
			ios += s.Block.IOs[i]
			bytes += s.Block.ReadBytes[i]
			busy += s.Block.InFlight[i]
		}
		// Bytes are spread over each I/O's duration and rounded per bin.
		if d := bytes - int64(n)*4096; ios != int64(n) || d < -int64(len(s.Block.IOs)) || d > int64(len(s.Block.IOs)) {
			t.Errorf("n=%d: series has %d I/Os and %d bytes, want %d and %d", n, ios, bytes, n, n*4096)
		}
		// Away from the edges, four streams keep four I/Os in flight.
		mid := s.Block.InFlight[len(s.Block.InFlight)/2]
		if math.Abs(mid-4) > 0.05 {
			t.Errorf("n=%d: in flight mid-trace %.3f, want 4", n, mid)
		}
		var latN int64
		for _, b := range s.Block.Latency {
			latN += b.Count
			if b.Count > 0 && (b.FromUs > 200 || b.ToUs <= 200) {
				t.Errorf("n=%d: latency bucket [%v,%v) has %d I/Os, all took 200 µs", n, b.FromUs, b.ToUs, b.Count)
			}
		}
		if latN != int64(n) {
			t.Errorf("n=%d: latency histogram holds %d I/Os, want %d", n, latN, n)
		}
		if len(s.Offsets) != 1 || s.Offsets[0].IOs != int64(n) {
			t.Fatalf("n=%d: offset maps %+v", n, s.Offsets)
		}
		m := s.Offsets[0]
		var cells int64
		for _, c := range m.Cells {
			cells += c.Reads + c.Writes
			if c.Writes != 0 {
				t.Fatalf("writes in a read-only workload")
			}
		}
		if cells != int64(n) || len(m.Cells) > maxCells {
			t.Errorf("n=%d: offset cells hold %d I/Os in %d cells", n, cells, len(m.Cells))
		}
	}
}

func TestSeriesOnlyWhenAsked(t *testing.T) {
	if p := build(gen(100, 1, 4096, 1e5, 0, true, event.Write), Options{}); p.Series != nil {
		t.Fatal("series built without Options.Series")
	}
}

func TestBinsOutOfOrderAndCoarsening(t *testing.T) {
	b := newBins(1)
	b.add(0, 5e9, 1)
	b.add(0, 1e6, 1) // before the first: bins grow to the left
	b.add(0, 30e9, 1)
	var sum float64
	for _, v := range b.cols[0] {
		sum += v
	}
	if sum != 3 || len(b.cols[0]) > maxBins {
		t.Fatalf("sum %v over %d bins", sum, len(b.cols[0]))
	}
	if b.width*int64(maxBins) < 29e9 {
		t.Fatalf("width %d cannot span 29 s in %d bins", b.width, maxBins)
	}
}

// Times before zero (an imported trace's relative clock) bin like others.
func TestBinsNegativeTimes(t *testing.T) {
	b := newBins(1)
	b.add(0, -41e6, 1)
	b.add(0, 3e6, 1)
	b.spread(0, -2e6, 2e6)
	var sum float64
	for _, v := range b.cols[0] {
		sum += v
	}
	if sum != 2+4e6 {
		t.Fatalf("sum %v, want %v", sum, 2+4e6)
	}
	g := newOffsetGrid()
	g.add(-5e6, 1<<20, true)
	g.add(5e6, 1<<40, false)
	if g.ios != 2 || len(g.cells) != 2 {
		t.Fatalf("grid %+v", g)
	}
}

// A long I/O's bytes are spread over the bins it spans, not put in the
// first.
func TestSeriesSpreadsBytesOverDuration(t *testing.T) {
	e := event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: 100e6, Size: 100 << 20, Bytes: 100 << 20, Dev: event.Dev{Major: 8}}
	b := NewBuilder(Options{Series: true})
	b.Add(&e)
	s := b.Finish().Series.Syscall
	var peak, total int64
	for _, v := range s.ReadBytes {
		peak = max(peak, v)
		total += v
	}
	if total != 100<<20 || peak > (100<<20)/50 {
		t.Fatalf("total %d, peak bin %d over %d bins", total, peak, len(s.ReadBytes))
	}
}

// Bins filled apart and absorbed are the bins filled together: the same
// width (the narrowest that holds both spans) and the same sums, whichever
// was wider, earlier or longer.
func TestBinsAbsorb(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		together, a, b := newBins(2), newBins(2), newBins(2)
		for range 1 + rng.IntN(300) {
			to := a
			if rng.IntN(2) == 0 {
				to = b
			}
			span := int64(1) << rng.IntN(40)
			at := rng.Int64N(span) - span/3
			col := rng.IntN(2)
			v := float64(rng.IntN(1000))
			to.add(col, at, v)
			together.add(col, at, v)
		}
		a.absorb(b)
		if a.width != together.width || a.base != together.base || !reflect.DeepEqual(a.cols, together.cols) {
			t.Fatalf("round %d: absorbed bins (width %d, base %d, %d bins) differ from bins filled together (width %d, base %d, %d bins)",
				round, a.width, a.base, len(a.cols[0]), together.width, together.base, len(together.cols[0]))
		}
	}
}

// An I/O within one bin is counted by addWithin as by add, spreadValue and
// spread, bin for bin, through coarsening and out-of-order times; one that
// spans bins or takes no time is left to them.
func TestBinsAddWithinAsSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fast, slow := newBins(3), newBins(3)
	within := 0
	for i := range 200_000 {
		a := int64(i)*50_000 + rng.Int64N(20_000_000) - 10_000_000
		c := a + []int64{0, rng.Int64N(300_000), rng.Int64N(50_000_000)}[rng.IntN(3)] // none, short, long
		v := float64(rng.Int64N(1 << 20))
		if fast.addWithin(0, 1, 2, a, c, v) {
			within++
		} else {
			addInSteps(fast, a, c, v)
		}
		addInSteps(slow, a, c, v)
	}
	if within < 50_000 || within > 190_000 {
		t.Fatalf("%d of 200000 within one bin: the test does not try both ways", within)
	}
	if fast.width != slow.width || fast.base != slow.base || !reflect.DeepEqual(fast.cols, slow.cols) {
		t.Fatalf("bins differ: width %d/%d, base %d/%d", fast.width, slow.width, fast.base, slow.base)
	}
}

// addInSteps is what the series does for an I/O without addWithin.
func addInSteps(b *bins, a, c int64, v float64) {
	b.add(0, a, 1)
	if c > a {
		b.spreadValue(1, a, c, v)
	} else {
		b.add(1, a, v)
	}
	b.spread(2, a, c)
}
