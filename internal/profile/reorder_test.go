package profile

import (
	"math/rand/v2"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// completionOrder is n I/Os of depth qd (each 100 µs ± 50 µs), in the
// order they complete, as tracers emit them.
func completionOrder(n, qd int) []event.Event {
	rng := rand.New(rand.NewPCG(1, 2))
	evs := make([]event.Event, n)
	var at int64
	for i := range evs {
		at += int64(100_000 / qd)
		evs[i] = event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 50_000 + rng.Int64N(100_000), Size: 4096}
	}
	// Sort by End (insertion sort: nearly sorted already).
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].End < evs[j-1].End; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	return evs
}

// The re-sorting releases every item once, in key order, whatever the
// input order.
func TestReorderReleasesInOrder(t *testing.T) {
	evs := completionOrder(100_000, 32)
	var out []int64
	r := newReorder(int64(minWindow), func(e *event.Event) { out = append(out, e.Start) })
	for i := range evs {
		r.push(evs[i].Start, evs[i].End, &evs[i])
	}
	r.flush()
	if len(out) != len(evs) || r.late != 0 {
		t.Fatalf("%d released of %d, %d late", len(out), len(evs), r.late)
	}
	for i := 1; i < len(out); i++ {
		if out[i] < out[i-1] {
			t.Fatalf("released out of order at %d: %d after %d", i, out[i], out[i-1])
		}
	}
}

// BenchmarkReorder re-sorts I/Os of depth 32 from completion order.
func BenchmarkReorder(b *testing.B) {
	evs := completionOrder(1_000_000, 32)
	b.ResetTimer()
	for range b.N {
		n := 0
		r := newReorder(int64(minWindow), func(*event.Event) { n++ })
		for i := range evs {
			r.push(evs[i].Start, evs[i].End, &evs[i])
		}
		r.flush()
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
