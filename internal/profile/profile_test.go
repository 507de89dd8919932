package profile

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// gen makes a block-layer workload: jobs streams, each issuing its next I/O
// when the previous completes (so depth = jobs), with a fixed latency and
// an optional think time between I/Os.
func gen(n, jobs int, size int64, lat, think int64, sequential bool, op event.Op) []event.Event {
	rng := rand.New(rand.NewPCG(7, 9))
	var out []event.Event
	next := make([]int64, jobs)
	for j := range next { // staggered, as real jobs are
		next[j] = int64(j) * lat / int64(jobs)
	}
	off := make([]int64, jobs)
	for j := range off {
		off[j] = int64(j) << 30
	}
	for i := 0; i < n; i++ {
		j := i % jobs
		e := event.Event{Layer: event.Block, Op: op, Start: next[j], Size: size, Bytes: size,
			Pid: uint32(100 + j), Tid: uint32(100 + j), Comm: "fio", Dev: event.Dev{Major: 254}}
		e.End = e.Start + lat
		if sequential {
			e.Offset = off[j]
			off[j] += size
		} else {
			e.Offset = rng.Int64N(1<<20) * 4096
		}
		e.Flags = event.FlagDispatched
		e.Dispatch = e.Start
		next[j] = e.End + think
		out = append(out, e)
	}
	return out
}

func build(evs []event.Event, opts Options) *Profile {
	b := NewBuilder(opts)
	for i := range evs {
		b.Add(&evs[i])
	}
	return b.Finish()
}

func TestQueueDepthOne(t *testing.T) {
	p := build(gen(1000, 1, 4096, 100_000, 50_000, false, event.Read), Options{})
	l := p.Block
	if l.IOs != 1000 || l.SizeBytes.P50 != 4096 || l.QueueDepth.P50 != 1 || l.QueueDepth.Max != 1 {
		t.Fatalf("ios=%d size=%d qd=%v max=%d", l.IOs, l.SizeBytes.P50, l.QueueDepth.P50, l.QueueDepth.Max)
	}
	if l.SequentialFraction > 0.01 {
		t.Errorf("random workload: sequential %v", l.SequentialFraction)
	}
	if math.Abs(l.IdleGapUs.P50-50) > 1 || l.IdleGapUs.Count != 999 {
		t.Errorf("idle gap p50 = %v (count %d), want 50µs", l.IdleGapUs.P50, l.IdleGapUs.Count)
	}
	if math.Abs(l.LatencyUs.P50-100) > 1.6 {
		t.Errorf("latency p50 = %v, want 100µs", l.LatencyUs.P50)
	}
	if l.QueueDepth.MeanTimeWeighted != 1 || l.QueueDepth.LittlesLawError > 0.001 {
		t.Errorf("time-weighted %v, Little %v", l.QueueDepth.MeanTimeWeighted, l.QueueDepth.LittlesLaw)
	}
	if l.ReadFraction != 1 {
		t.Errorf("read fraction %v", l.ReadFraction)
	}
	// 1000 I/Os in 1000×150µs - 50µs.
	if math.Abs(l.IOPS-1000/0.14995) > 1 {
		t.Errorf("iops %v", l.IOPS)
	}
}

func TestQueueDepthMany(t *testing.T) {
	p := build(gen(4000, 8, 1<<20, 1_000_000, 0, true, event.Write), Options{})
	l := p.Block
	if l.QueueDepth.P50 != 8 || l.QueueDepth.Max != 8 {
		t.Errorf("depth p50 %v max %d, want 8", l.QueueDepth.P50, l.QueueDepth.Max)
	}
	// Eight interleaved sequential streams are all recognised.
	if l.SequentialFraction < 0.99 {
		t.Errorf("sequential fraction %v", l.SequentialFraction)
	}
	if l.SizeBytes.P50ByBytes != 1<<20 || l.ReadFraction != 0 {
		t.Errorf("size %d read %v", l.SizeBytes.P50ByBytes, l.ReadFraction)
	}
	if l.IdleGapUs.Count != 0 {
		t.Errorf("no idle time expected, got %d gaps", l.IdleGapUs.Count)
	}
	if l.DeviceQueueDepth == nil || l.DeviceQueueDepth.P50 != 8 {
		t.Errorf("device depth %+v", l.DeviceQueueDepth)
	}
	// 4000 MiB from 0 until the last job (started 7/8 ms late) finishes.
	want := 4000 * 1048576 / ((500e6 + 875e3) / 1e3)
	if math.Abs(l.ThroughputMBs-want) > 1 {
		t.Errorf("throughput %v", l.ThroughputMBs)
	}
}

// Events delivered out of order within the window give the same profile as
// events in arrival order.
func TestOrderIndependence(t *testing.T) {
	evs := gen(3000, 4, 65536, 200_000, 10_000, false, event.Read)
	want := build(evs, Options{})
	shuffled := append([]event.Event(nil), evs...)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range shuffled { // local shuffles: at most 64 positions
		j := i + rng.IntN(64)
		if j < len(shuffled) {
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
		}
	}
	got := build(shuffled, Options{})
	if got.LateEvents != 0 {
		t.Fatalf("late events %d", got.LateEvents)
	}
	if got.Block.QueueDepth.P50 != want.Block.QueueDepth.P50 || got.Block.QueueDepth.MeanTimeWeighted != want.Block.QueueDepth.MeanTimeWeighted ||
		got.Block.IdleGapUs != want.Block.IdleGapUs {
		t.Fatalf("shuffled: %+v vs %+v", got.Block.QueueDepth, want.Block.QueueDepth)
	}
}

func TestWritebackExclusion(t *testing.T) {
	evs := gen(100, 1, 4096, 1000, 0, true, event.Write)
	for i := range evs[:40] {
		evs[i].Flags |= event.FlagKernel
		evs[i].Comm = "kworker/u8:1"
	}
	in := build(evs, Options{})
	out := build(evs, Options{ExcludeWriteback: true})
	if in.Block.IOs != 100 || out.Block.IOs != 60 || out.Writeback.IOs != 40 || out.Writeback.Included {
		t.Fatalf("included %d, excluded %d, writeback %+v", in.Block.IOs, out.Block.IOs, out.Writeback)
	}
}

// A thread's waits outside its calls (sync(2), a page fault) are counted
// apart: no layer holds them.
func TestWaitsOutsideCalls(t *testing.T) {
	evs := gen(10, 1, 4096, 1000, 0, true, event.Read)
	for i, d := range []int64{270e6, 3e6} {
		evs = append(evs, event.Event{Layer: event.Syscall, Call: event.CallWait, Start: int64(i) * 1e9, End: int64(i)*1e9 + d, Pid: 7, Tid: 7, Comm: "sync"})
	}
	p := build(evs, Options{})
	if p.Waits != 2 || math.Abs(p.WaitedS-0.273) > 1e-9 || p.Syscall != nil || p.Block.IOs != 10 || p.Events != 10 {
		t.Fatalf("waits %d, %v s; syscall %+v, block %d I/Os, events %d", p.Waits, p.WaitedS, p.Syscall, p.Block.IOs, p.Events)
	}
}

func TestServiceFit(t *testing.T) {
	// latency = 20µs + size / (2 GB/s), with a few wild outliers.
	var evs []event.Event
	var at int64
	for i := 0; i < 2000; i++ {
		size := int64(4096) << (i % 9)
		lat := 20_000 + size/2
		if i%97 == 0 {
			lat *= 50
		}
		evs = append(evs, event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + lat, Size: size, Bytes: size, Offset: -1})
		at += lat + 1000
	}
	f := build(evs, Options{}).Block.ServiceFit
	if math.Abs(f.OverheadUs-20) > 1 || math.Abs(f.RateMBs-2000) > 40 {
		t.Fatalf("fit %+v, want 20µs and 2000 MB/s", f)
	}
}

func TestEmpty(t *testing.T) {
	p := build(nil, Options{})
	if p.Block != nil || p.Syscall != nil || len(p.Devices) != 0 {
		t.Fatalf("%+v", p)
	}
}

// The steady idle share is the workload's rhythm: a QD1 stream idle a
// third of its time stays a third idle with a pause ten times its length
// in the middle, or with a stretch of stalled gaps (a busy CPU) in 20 of
// its 64-I/O runs; bursts of 64 I/Os with rests four times as long stay
// 80 % idle; a trace too short for three runs is its whole span's share.
func TestSteadyIdleFraction(t *testing.T) {
	steady := gen(6400, 1, 4096, 100_000, 50_000, false, event.Read) // 50 of 150 µs idle
	paused := append([]event.Event(nil), steady...)
	stalled := append([]event.Event(nil), steady...)
	for i := range paused {
		if i >= 3200 {
			paused[i].Start += 10 * 960_000_000 // ten times the span
			paused[i].End += 10 * 960_000_000
		}
		if i >= 1000 && i < 1000+20*64 { // each gap 2 ms, not 50 µs
			shift := int64(i-999) * 1_950_000
			stalled[i].Start += shift
			stalled[i].End += shift
		} else if i >= 1000+20*64 {
			stalled[i].Start += 20 * 64 * 1_950_000
			stalled[i].End += 20 * 64 * 1_950_000
		}
	}
	var bursts []event.Event
	at := int64(0)
	for i := 0; i < 64*50; i++ {
		bursts = append(bursts, event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 100_000, Size: 4096, Bytes: 4096,
			Offset: int64(i) * 4096, Pid: 1, Tid: 1, Comm: "b", Dev: event.Dev{Major: 254}, Flags: event.FlagDispatched, Dispatch: at})
		at += 100_000
		if i%64 == 63 {
			at += 4 * 64 * 100_000
		}
	}
	for _, c := range []struct {
		name       string
		evs        []event.Event
		want, idle float64 // steady share, whole span's share
	}{
		{"steady", steady, 0.33, 0.33},
		{"paused", paused, 0.33, 0.94},
		{"stalled", stalled, 0.33, 0.815},
		{"bursts", bursts, 0.8, 0.8},
		{"short", steady[:150], 0.33, 0.33},
	} {
		l := build(c.evs, Options{}).Block
		if math.Abs(l.SteadyIdleFraction-c.want) > 0.015 || math.Abs(l.IdleS/l.SpanS-c.idle) > 0.015 {
			t.Errorf("%s: steady idle %.3f, whole %.3f; want %.2f, %.2f", c.name, l.SteadyIdleFraction, l.IdleS/l.SpanS, c.want, c.idle)
		}
	}
}
