package predict

import (
	"math"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
)

// flat is a drive whose every shape takes latUs at one request in flight
// and depthFactor times that at four.
func flat(name string, latUs, depthFactor float64) *drive.Profile {
	p := &drive.Profile{Name: name}
	for _, op := range []string{"read", "write"} {
		for _, access := range []string{"seq", "rand"} {
			for _, size := range []int64{4096, 1 << 20} {
				for _, d := range []int{1, 4} {
					lat := latUs
					if d == 4 {
						lat *= depthFactor
					}
					p.Points = append(p.Points, drive.Point{Op: op, Access: access, SizeBytes: size, Depth: d, Jobs: 1, LatUs: lat})
				}
			}
		}
	}
	return p
}

const us = int64(1000)

// chain adds n reads, one after the other on one thread: each call lasts
// callUs, with a block request of reqUs inside it, then thinkUs of
// computation. Offsets are scattered: random I/O.
func chain(b *Builder, pid uint32, n int, at, callUs, reqUs, thinkUs int64) int64 {
	for i := range n {
		off := int64(i*7919%1000) * 1 << 20
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + callUs*us, Size: 4096, Bytes: 4096, Offset: off, Pid: pid, Tid: pid})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 2*us, End: at + (2+reqUs)*us, Size: 4096, Bytes: 4096, Offset: off, Pid: pid})
		at += (callUs + thinkUs) * us
	}
	return at
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-3*math.Max(1, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// A serial chain: each call's drive time changes by the drives' ratio;
// think time stays.
func TestSerialChain(t *testing.T) {
	b := NewBuilder()
	end := chain(b, 7, 1000, 0, 100, 96, 50) // 1000 × (100 + 50) µs
	res, err := b.Predict(flat("fast", 19.2, 1), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each 100 µs call becomes 100 × 19.2/96 = 20 µs.
	near(t, "recorded", res.RecordedS, 0.150)
	near(t, "predicted", res.PredictedS, 1000*(50+20)*1e-6)
	near(t, "I/O-bound share", res.IOBoundShare, 100.0/150)
	if res.Tracks != "RND4K Q1T1 read" || res.TracksShare != 1 {
		t.Errorf("tracks %q (%v)", res.Tracks, res.TracksShare)
	}
	if len(res.Processes) != 1 || res.Processes[0].Pid != 7 {
		t.Errorf("processes %+v", res.Processes)
	}
}

// On a profile that gives back the recorded latencies, the prediction is
// the recorded duration.
func TestSelfConsistent(t *testing.T) {
	b := NewBuilder()
	end := chain(b, 7, 500, 0, 100, 96, 30)
	res, err := b.Predict(flat("same", 96, 1), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted on the recording drive", res.PredictedS, res.RecordedS)
}

// Four threads with their requests overlapping: the busy time scales by
// the drive's latency at four in flight, not at one.
func TestParallelDepth(t *testing.T) {
	b := NewBuilder()
	var end int64
	for pid := uint32(1); pid <= 4; pid++ {
		end = max(end, chain(b, pid, 200, 0, 100, 96, 0))
	}
	// At 4 in flight this drive takes 3× its QD1 latency: 48 → 144 µs,
	// against the 96 recorded: each busy stretch grows by half.
	res, err := b.Predict(flat("deep", 48, 3), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	busy := res.IOBoundShare * res.RecordedS
	near(t, "predicted", res.PredictedS, res.RecordedS-busy+busy*144/96)
}

// Computation and cache hits (calls no block request answered) do not
// change with the drive.
func TestCPUBoundAndCacheHits(t *testing.T) {
	b := NewBuilder()
	at := int64(0)
	for i := 0; i < 100; i++ { // cache hits: 5 µs calls, 200 µs of work between
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 5*us, Size: 4096, Bytes: 4096, Pid: 3, Tid: 3})
		at += 205 * us
	}
	res, err := b.Predict(flat("any", 1, 1), at, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, res.RecordedS)
	near(t, "I/O-bound share", res.IOBoundShare, 0)

	// Half hits, half misses: only the misses change.
	b = NewBuilder()
	at = chain(b, 3, 100, 0, 100, 96, 0)
	for i := 0; i < 100; i++ {
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 100*us, Size: 4096, Bytes: 4096, Pid: 3, Tid: 3})
		at += 100 * us
	}
	res, _ = b.Predict(flat("fast", 48, 1), at, nil)
	near(t, "predicted with hits", res.PredictedS, 100*50e-6+100*100e-6)
}

// Readahead and writeback nobody waited for are off the critical path:
// adding them changes nothing.
func TestReadaheadAndWritebackOffThePath(t *testing.T) {
	base := NewBuilder()
	end := chain(base, 7, 100, 0, 100, 96, 400)
	want, _ := base.Predict(flat("fast", 24, 1), end, nil)

	b := NewBuilder()
	chain(b, 7, 100, 0, 100, 96, 400)
	for i := int64(0); i < 100; i++ {
		gap := i*500*us + 200*us // inside the think time, with no call outstanding
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: gap, End: gap + 150*us, Size: 128 << 10, Bytes: 128 << 10, Offset: i << 20, Pid: 7})
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: gap + 10*us, End: gap + 190*us, Size: 1 << 20, Bytes: 1 << 20, Offset: i << 20, Pid: 99, Flags: event.FlagKernel})
	}
	got, _ := b.Predict(flat("fast", 24, 1), end, nil)
	near(t, "predicted with readahead and writeback", got.PredictedS, want.PredictedS)
}

// Phases split the prediction; the naive headline is bytes at SEQ1M Q8T1.
func TestPhasesAndHeadline(t *testing.T) {
	b := NewBuilder()
	mid := chain(b, 7, 100, 0, 100, 96, 0) // 10 ms of drive-bound reads
	end := mid + 10_000*us                 // then 10 ms of computation
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Start: mid, End: mid + 10*us, Size: 1 << 20, Bytes: 1 << 20, Pid: 7, Tid: 7})
	res, _ := b.Predict(flat("fast", 48, 1), end, []Boundary{{0, "app launch"}, {mid, "idle"}})
	if len(res.Phases) != 2 {
		t.Fatalf("phases %+v", res.Phases)
	}
	near(t, "phase 1 predicted", res.Phases[0].PredictedS, 0.005)
	near(t, "phase 2 predicted", res.Phases[1].PredictedS, 0.010)
	// 400 KiB read and 1 MiB written at the headline: SEQ1M at 8 in flight
	// takes 48 µs here, so 8 MiB in 48 µs.
	rate := 8 * float64(1<<20) / 48e-6 / 1e6
	near(t, "headline", res.HeadlineS, (100*4096+float64(1<<20))/(rate*1e6))
}

func TestNoIO(t *testing.T) {
	if _, err := NewBuilder().Predict(flat("x", 1, 1), 0, nil); err != ErrNoIO {
		t.Errorf("error %v", err)
	}
}

// A direct read no block request answered (a bio-based drive such as zram,
// which the block tracepoints do not see) is drive-bound all the same: its
// time becomes the profile's for its own shape.
func TestDirectCallsWithoutBlockLayer(t *testing.T) {
	b := NewBuilder()
	at := int64(0)
	for i := 0; i < 100; i++ {
		off := int64(i*7919%1000) << 20
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 10*us, Size: 4096, Bytes: 4096, Offset: off,
			Pid: 3, Tid: 3, Flags: event.FlagDirect})
		at += 110 * us
	}
	res, err := b.Predict(flat("slow", 50, 1), at, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, 100*(100+50)*1e-6)
	res, _ = b.Predict(flat("same", 10, 1), at, nil)
	near(t, "on a drive like the recording one", res.PredictedS, res.RecordedS)
}
