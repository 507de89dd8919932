package profile

import (
	"reflect"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// shapeFields are the figures a ShapeTracker keeps of a layer.
func shapeFields(l *Layer) any {
	if l == nil {
		return nil
	}
	return []any{l.IOs, l.Reads, l.Writes, l.ReadBytes, l.WriteBytes, l.ReadFraction, l.ReadFractionByBytes,
		l.SpanS, l.IOPS, l.ThroughputMBs, l.SizeBytes, l.QueueDepth.P50, l.QueueDepth.P90, l.QueueDepth.P99,
		l.QueueDepth.Max, l.QueueDepth.Mean, l.QueueDepth.Histogram, l.IdleS, l.SequentialFraction}
}

// A bucket counting what a Builder's sweeps report of each arrival holds
// the Builder's shape fields, and so does a Sweep of the same arrivals:
// events in completion order, both layers, copies, errors, unknown
// offsets, flushes, writeback.
func TestShapeBucketIsTheProfilesShape(t *testing.T) {
	evs := mixedTrace(20000)
	next := map[event.Dev]int64{}
	for i := range evs {
		e := &evs[i]
		e.Dev.Minor %= 8 // within the profile's device table: no folding
		if i%97 == 0 && e.Layer == event.Syscall {
			e.Flags |= event.FlagCopySource
		}
		shift := int64(i/2000) * 5e6 // a pause every 2,000 I/Os: idle time
		e.Start, e.End = e.Start+shift, e.End+shift
		if e.Flags&event.FlagDispatched != 0 {
			e.Dispatch += shift
		}
		if i%3 > 0 && e.Offset >= 0 { // two in three continue their device's stream
			e.Inode, e.Offset = 0, next[e.Dev]
			next[e.Dev] = e.Offset + e.Size
		}
	}
	for _, wb := range []bool{false, true} {
		// One bucket counting what the profile's sweeps report, and one
		// counting what a Sweep of its own makes of the same arrivals.
		var reported, swept ShapeBucket
		sweeps := [2]*Sweep{NewSweep(), NewSweep()}
		opts := Options{ExcludeWriteback: wb, Parallel: true}
		for l := range opts.OnArrival {
			opts.OnArrival[l] = func(a *Arrival) {
				reported.Add(a)
				sweeps[l].Apply(a)
				swept.Add(a)
			}
		}
		b := NewBuilder(opts)
		for i := range evs {
			b.Add(&evs[i])
		}
		want := b.Finish()
		if s := want.Block; s.SequentialFraction < 0.2 || s.QueueDepth.Max < 4 || s.IdleS == 0 {
			t.Fatalf("the trace does not exercise the shape: %+v", s)
		}
		for name, bucket := range map[string]*ShapeBucket{"reported": &reported, "swept again": &swept} {
			got := bucket.Profile(false)
			for _, l := range []event.Layer{event.Block, event.Syscall} {
				w, g := want.Syscall, got.Syscall
				if l == event.Block {
					w, g = want.Block, got.Block
				}
				if !reflect.DeepEqual(shapeFields(g), shapeFields(w)) {
					t.Errorf("writeback excluded %v, %v layer, %s: bucket\n%v\nprofile\n%v", wb, l, name, shapeFields(g), shapeFields(w))
				}
			}
		}
	}
}

// Buckets merge exactly: arrivals counted in two buckets and merged give
// the one bucket that counted them all.
func TestShapeBucketsMerge(t *testing.T) {
	evs := mixedTrace(20000)
	var whole, even, odd ShapeBucket
	var opts Options
	for l := range opts.OnArrival {
		opts.OnArrival[l] = func(a *Arrival) {
			whole.Add(a)
			if (a.Start/1e6)%2 == 0 {
				even.Add(a)
			} else {
				odd.Add(a)
			}
		}
	}
	b := NewBuilder(opts)
	for i := range evs {
		b.Add(&evs[i])
	}
	b.Finish()
	if even.IOs(event.Block) == 0 || odd.IOs(event.Block) == 0 {
		t.Fatal("a bucket is empty: the test splits nothing")
	}
	even.Merge(&odd)
	if got, want := even.Profile(false), whole.Profile(false); !reflect.DeepEqual(got, want) {
		t.Errorf("merged buckets differ from one:\n%+v\n%+v", got.Block, want.Block)
	}
}
