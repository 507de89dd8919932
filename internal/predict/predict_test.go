package predict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
)

// flat is a drive whose every shape takes latUs at one request in flight
// and depthFactor times that at four.
func flat(name string, latUs, depthFactor float64) *drive.Spec {
	p := &drive.Spec{Name: name}
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

// withWake gives p a measured wake-up of w µs (drive.Spec.WakeUs).
func withWake(p *drive.Spec, w float64) *drive.Spec {
	p.WakeUs = &w
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

// sleptReads adds n reads of process 7, one every everyUs: each call
// lasts callUs, asleep blockedUs of it around a 100 µs block request.
func sleptReads(b *Builder, n, callUs, blockedUs, everyUs int64) (end int64) {
	for i := range n {
		at := i * everyUs * us
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + callUs*us, Size: 4096, Bytes: 4096, Offset: i << 20,
			Pid: 7, Tid: 7, Flags: event.FlagBlocked, Blocked: blockedUs * us})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 5*us, End: at + 105*us, Size: 4096, Bytes: 4096, Offset: i << 20, Pid: 7})
	}
	return n * everyUs * us
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-3*math.Max(1, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// A serial chain with no profile of the recording drive: each call's
// recorded request time is taken out and the new drive's put in; think
// time stays.
func TestSerialChain(t *testing.T) {
	b := NewBuilder()
	end := chain(b, 7, 1000, 0, 100, 96, 50) // 1000 × (100 + 50) µs
	res, err := b.Predict(nil, flat("fast", 19.2, 1), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each 100 µs call keeps its 4 µs outside the request: 4 + 19.2.
	near(t, "recorded", res.RecordedS, 0.150)
	near(t, "predicted", res.PredictedS, 1000*(50+4+19.2)*1e-6)
	near(t, "I/O-bound share", res.IOBoundShare, 100.0/150)
	if res.Tracks != "RND4K Q1T1 read" || res.TracksShare != 1 {
		t.Errorf("tracks %q (%v)", res.Tracks, res.TracksShare)
	}
	if len(res.Processes) != 1 || res.Processes[0].Pid != 7 {
		t.Errorf("processes %+v", res.Processes)
	}
	if len(res.Notes) == 0 || res.From != "" {
		t.Errorf("no note that the recorded latencies stood in: %+v", res)
	}
	// A request alone on its device took what the drive takes for it: the
	// recording drive's profile does not replace its recorded latency.
	res, _ = b.Predict(flat("recorded-on", 80, 1), flat("fast", 19.2, 1), end, nil)
	near(t, "predicted from a profile, requests alone", res.PredictedS, 1000*(50+4+19.2)*1e-6)
	if res.From != "recorded-on" {
		t.Errorf("from %q", res.From)
	}
	// Two chains side by side: each request shares its device, its recorded
	// latency is partly the other's, and the profile's comes out instead;
	// of the 20 µs it leaves, the 12 within its uncertainty (15 % of 80)
	// move with the drive.
	b = NewBuilder()
	chain(b, 7, 1000, 0, 100, 96, 50)
	end = chain(b, 8, 1000, 0, 100, 96, 50)
	res, _ = b.Predict(flat("recorded-on", 80, 1), flat("fast", 19.2, 1), end, nil)
	near(t, "predicted from a profile, requests together", res.PredictedS, 1000*(50+8+12*19.2/80+19.2)*1e-6)
}

// Predicting for the drive a trace was recorded on gives back its
// duration, whatever that drive's profile says.
func TestSelfConsistent(t *testing.T) {
	b := NewBuilder()
	end := chain(b, 7, 500, 0, 100, 96, 30)
	for _, lat := range []float64{10, 96, 400} {
		p := flat("same", lat, 2)
		res, err := b.Predict(p, p, end, nil)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "predicted on the recording drive", res.PredictedS, res.RecordedS)
	}
	res, _ := b.Predict(nil, flat("as-recorded", 96, 1), end, nil)
	near(t, "on a profile of the recorded latencies", res.PredictedS, res.RecordedS)
}

// Four threads with their requests overlapping: each waits its own
// request's latency, at four in flight, not at one.
func TestParallelDepth(t *testing.T) {
	b := NewBuilder()
	var end int64
	for pid := uint32(1); pid <= 4; pid++ {
		end = max(end, chain(b, pid, 200, 0, 100, 96, 0))
	}
	// At 4 in flight the new drive takes 3× its QD1 latency (48 → 144 µs);
	// the recording drive's profile says 96 there: each call grows by 48.
	res, err := b.Predict(flat("was", 32, 3), flat("deep", 48, 3), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, 200*(100+48)*1e-6)
}

// Computation and cache hits (calls no block request answered) do not
// change with the drive.
func TestCPUBoundAndCacheHits(t *testing.T) {
	b := NewBuilder()
	at := int64(0)
	for i := 0; i < 100; i++ { // cache hits: 5 µs calls, 200 µs of work between
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 5*us, Size: 4096, Bytes: 4096, Pid: 3, Tid: 3,
			Flags: event.FlagBlocked})
		at += 205 * us
	}
	res, err := b.Predict(flat("was", 100, 1), flat("any", 1, 1), at, nil)
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
	res, _ = b.Predict(flat("was", 96, 1), flat("fast", 48, 1), at, nil)
	near(t, "predicted with hits", res.PredictedS, 100*52e-6+100*100e-6)
}

// Readahead and writeback nobody waited for are off the critical path:
// adding them changes nothing.
func TestReadaheadAndWritebackOffThePath(t *testing.T) {
	base := NewBuilder()
	end := chain(base, 7, 100, 0, 100, 96, 400)
	want, _ := base.Predict(nil, flat("fast", 24, 1), end, nil)

	b := NewBuilder()
	chain(b, 7, 100, 0, 100, 96, 400)
	for i := int64(0); i < 100; i++ {
		gap := i*500*us + 200*us // inside the think time, with no call outstanding
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: gap, End: gap + 150*us, Size: 128 << 10, Bytes: 128 << 10, Offset: i << 20, Pid: 7,
			Flags: event.FlagReadahead})
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: gap + 10*us, End: gap + 190*us, Size: 1 << 20, Bytes: 1 << 20, Offset: i << 20, Pid: 99, Flags: event.FlagKernel})
	}
	got, _ := b.Predict(nil, flat("fast", 24, 1), end, nil)
	near(t, "predicted with readahead and writeback", got.PredictedS, want.PredictedS)
}

// A copy whose readahead ran alongside its computation (GNU cp's
// copy_file_range: 200 ms copying, 380 ms asleep, while 2,000 readahead
// requests took 540 ms of drive time, 160 ms of it alongside the copying):
// on a faster drive it cannot go below its computation; on a slower one
// all of its copying runs while the next requests are read, and it takes
// the drive's time.
func TestReadaheadOverlap(t *testing.T) {
	end := int64(580_000) * us
	b := copyWithReadahead(2000, end, 380_000*us, 270*us, 270*us)
	was := flat("was", 270, 1)
	res, err := b.Predict(was, flat("faster", 50, 1), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "on a faster drive", res.PredictedS, 0.200)
	res, _ = b.Predict(was, flat("slower", 3350, 1), end, nil)
	near(t, "on a slower drive", res.PredictedS, 6.700)
	res, _ = b.Predict(was, was, end, nil)
	near(t, "on the same drive", res.PredictedS, 0.580)
}

// A streaming call that slept through all its readahead's recorded time
// (a cp behind a throttle: the throttle held the next bios while it
// copied, and the requests show only the device's time) still copies
// while the next requests are read on a drive that keeps ahead: 100 ms of
// copying hides under 500 ms of readahead, not added to it.
func TestStreamingCallHidesItsCopying(t *testing.T) {
	end := int64(1_000_000) * us
	b := copyWithReadahead(100, end, 900_000*us, 10_000*us, 9000*us)
	was := flat("was", 9000, 1)
	res, err := b.Predict(was, flat("faster", 5000, 1), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "on a faster drive", res.PredictedS, 0.500)
	res, _ = b.Predict(was, flat("fastest", 500, 1), end, nil)
	near(t, "on a drive faster than the copying", res.PredictedS, 0.100)
	res, _ = b.Predict(was, was, end, nil)
	near(t, "on the same drive", res.PredictedS, 1.000)
}

// copyWithReadahead is one copy_file_range call from 0 to end, asleep
// for blocked, while n readahead requests of 128 KiB start every apart
// and take lat each.
func copyWithReadahead(n, end, blocked, every, lat int64) *Builder {
	b := NewBuilder()
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Call: event.CallCopyFileRange, Start: 0, End: end,
		Size: n << 17, Bytes: n << 17, Pid: 5, Tid: 5, Flags: event.FlagBlocked, Blocked: blocked})
	for i := range n {
		at := i * every
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + lat, Size: 128 << 10, Bytes: 128 << 10,
			Offset: i << 17, Pid: 5, Tid: 5, Flags: event.FlagReadahead})
	}
	return b
}

// A sleep outside any call (a page fault, a stat reading metadata) waited
// for the request that completed during it, even one a throttle held
// before the block layer saw it (dispatched by a kernel thread, its
// recorded latency short): the recording drive's profile — benched under
// the same throttle — takes the whole wait out.
func TestWaitsAndHiddenThrottle(t *testing.T) {
	b := NewBuilder()
	var at int64
	for i := int64(0); i < 100; i++ {
		b.Add(&event.Event{Layer: event.Syscall, Call: event.CallWait, Op: event.Other, Start: at, End: at + 700*us, Pid: 9, Tid: 9,
			Flags: event.FlagBlocked, Blocked: 700 * us})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 500*us, End: at + 695*us, Size: 16 << 10, Bytes: 16 << 10,
			Offset: (i * 7919 % 1000) << 20, Pid: 77, Flags: event.FlagKernel})
		at += 1000 * us // 300 µs of computation between faults
	}
	b.SetUnthrottled(flat("unthrottled", 195, 1), nil)
	res, err := b.Predict(flat("throttled", 700, 1), flat("fast", 200, 1), at, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, 100*(300+200)*1e-6)
	// Unthrottled, the request alone took what it says: 195 µs of the
	// 700 come out, the rest of the sleep stays.
	b.SetUnthrottled(nil, nil)
	res, _ = b.Predict(flat("throttled", 700, 1), flat("fast", 200, 1), at, nil)
	near(t, "predicted, not throttled", res.PredictedS, 100*(300+700-195+200)*1e-6)
	// Another process's read wakes this one only as it completes (a page
	// that process was reading, which this one faulted on too).
	for _, c := range []struct {
		readEnd int64
		wakes   bool
	}{{695, true}, {400, false}} {
		b := NewBuilder()
		b.Add(&event.Event{Layer: event.Syscall, Call: event.CallWait, Op: event.Other, Start: 0, End: 700 * us, Pid: 9, Tid: 9, Flags: event.FlagBlocked, Blocked: 700 * us})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: 200 * us, End: c.readEnd * us, Size: 4096, Bytes: 4096, Pid: 8})
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: 1000 * us, Size: 4096, Bytes: 4096, Pid: 8, Tid: 8})
		res, _ = b.Predict(flat("disk", 500, 1), flat("fast", 100, 1), 1000*us, nil)
		for _, p := range res.Processes {
			if p.Pid == 9 && (p.PredictedS < p.RecordedS) != c.wakes {
				t.Errorf("another process's read ending at %d µs: the wait %+v, want it shorter %v", c.readEnd, p, c.wakes)
			}
		}
	}
}

// A write that sleeps while the journal's commit, sent just before it,
// goes out waits for those writes: they move with the drive. Had they
// completed before the call came, its sleep would be something else's
// (a lock), and stays.
func TestWriteWaitsForTheCommitInFlight(t *testing.T) {
	predict := func(inFlight bool) float64 {
		b := NewBuilder()
		for i := range int64(10) {
			// One at a time: 15 ms each, the last as the write wakes; or
			// all done by the time it comes.
			end := 155_000*us - (9-i)*15_000*us
			if !inFlight {
				end = 150*us + i*us
			}
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: i * 10 * us, End: end,
				Size: 512 << 10, Bytes: 512 << 10, Offset: 1<<30 + i<<19, Pid: 99, Tid: 99, Comm: "jbd2/sdb-8",
				Flags: event.FlagKernel | event.FlagSync | event.FlagMeta})
		}
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Call: event.CallWrite, Start: 200 * us, End: 155_100 * us,
			Size: 10 << 10, Bytes: 10 << 10, Pid: 7, Tid: 7, Comm: "tar", Flags: event.FlagBlocked, Blocked: 154_800 * us})
		res, err := b.Predict(flat("usb", 15_000, 4), flat("ssd", 150, 4), 155_100*us, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	if got := predict(true); got > 0.155/5 {
		t.Errorf("a write asleep through the commit in flight: %v s on a drive 100 times as fast, want it shorter than %v", got, 0.155/5)
	}
	near(t, "the commit done before the write came", predict(false), 0.1551)
}

// A bio-based drive (zram) serves a request on the caller's CPU: the call
// never slept, yet it waited for its own requests; and a page fault's read
// outside any call or wait is waited for too.
func TestSynchronousDriveAndPageFaults(t *testing.T) {
	b := NewBuilder()
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: 100 * us, Size: 1 << 20, Bytes: 1 << 20, Pid: 4, Tid: 4,
		Flags: event.FlagBlocked})
	b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: 10 * us, End: 90 * us, Size: 1 << 20, Bytes: 1 << 20, Pid: 4, Tid: 4})
	// A page fault later: a read of its own with no call outstanding.
	b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: 200 * us, End: 220 * us, Size: 4096, Bytes: 4096, Offset: 1 << 30, Pid: 4, Tid: 4})
	res, err := b.Predict(flat("zram", 80, 1), flat("slow", 1000, 1), 300*us, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The call: 100 µs on the CPU + (0 − 80 + 1000); the fault took 20 µs
	// where the profile says 80 (the drive's cache): 20 × 1000 / 80.
	near(t, "predicted", res.PredictedS, (300+920+230)*1e-6)
}

// A program whose only waiting is page faults keeps them on the drive it
// was recorded on (a fault's predicted length once started from zero).
func TestPageFaultsOnTheRecordingDrive(t *testing.T) {
	b := NewBuilder()
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: 100 * us, Size: 4096, Bytes: 4096, Pid: 4, Tid: 4, Comm: "app",
		Flags: event.FlagBlocked, Blocked: 80 * us})
	b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: 10 * us, End: 90 * us, Size: 4096, Bytes: 4096, Pid: 4, Tid: 4, Comm: "app"})
	for i := range int64(10) {
		at := 200*us + i*200*us
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 100*us, Size: 4096, Bytes: 4096,
			Offset: (i * 7919 % 1000) << 20, Pid: 5, Tid: 5, Comm: "faulter"})
	}
	for _, d := range []*drive.Spec{flat("disk", 100, 1), flat("other", 50, 1)} {
		res, err := b.Predict(d, d, 2200*us, nil)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "on the recording drive", res.PredictedS, 2200e-6)
		for _, p := range res.Processes {
			near(t, p.Comm+" on the recording drive", p.PredictedS, p.RecordedS)
		}
	}
}

// Phases split the prediction; the naive headline is bytes at SEQ1M Q8T1.
func TestPhasesAndHeadline(t *testing.T) {
	b := NewBuilder()
	mid := chain(b, 7, 100, 0, 100, 96, 0) // 10 ms of drive-bound reads
	end := mid + 10_000*us                 // then 10 ms of computation
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Start: mid, End: mid + 10*us, Size: 1 << 20, Bytes: 1 << 20, Pid: 7, Tid: 7})
	res, _ := b.Predict(flat("was", 96, 1), flat("fast", 48, 1), end, []Boundary{{0, "app launch"}, {mid, "idle"}})
	if len(res.Phases) != 2 {
		t.Fatalf("phases %+v", res.Phases)
	}
	near(t, "phase 1 predicted", res.Phases[0].PredictedS, 100*52e-6)
	near(t, "phase 2 predicted", res.Phases[1].PredictedS, 0.010)
	// 400 KiB read and 1 MiB written at the headline: SEQ1M at 8 in flight
	// takes 48 µs here, so 8 MiB in 48 µs.
	rate := 8 * float64(1<<20) / 48e-6 / 1e6
	near(t, "headline", res.HeadlineS, (100*4096+float64(1<<20))/(rate*1e6))
}

func TestNoIO(t *testing.T) {
	if _, err := NewBuilder().Predict(nil, flat("x", 1, 1), 0, nil); err != ErrNoIO {
		t.Errorf("error %v", err)
	}
}

// A direct read is drive-bound from call to completion, whether block
// requests answered it or not (a throttle may hold it before the block
// layer): its own shape's latency on the recording drive comes out, the
// new drive's goes in.
func TestDirectCallsWithoutBlockLayer(t *testing.T) {
	b := NewBuilder()
	at := int64(0)
	for i := 0; i < 100; i++ {
		off := int64(i*7919%1000) << 20
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 10*us, Size: 4096, Bytes: 4096, Offset: off,
			Pid: 3, Tid: 3, Flags: event.FlagDirect})
		at += 110 * us
	}
	res, err := b.Predict(nil, flat("slow", 50, 1), at, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, 100*(100+50)*1e-6)
	res, _ = b.Predict(flat("was", 8, 1), flat("slow", 50, 1), at, nil)
	near(t, "from a profile", res.PredictedS, 100*(100+2+50)*1e-6)
	res, _ = b.Predict(nil, flat("same", 10, 1), at, nil)
	near(t, "on a drive like the recording one", res.PredictedS, res.RecordedS)
}

// A buffered read that waited for the drive computes as the new drive's
// page cache costs (drive.Spec.CacheReadCPU): behind a throttle the
// readahead between its waits costs more CPU per MiB than on a fast disk.
func TestCacheReadCPU(t *testing.T) {
	b := NewBuilder()
	// One 64 MiB read of 1 s: 0.9 s asleep for 64 requests of 1 MiB, 0.1 s
	// computing; then 50 ms of think time.
	const mib = 1 << 20
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: 1e9, Size: 64 * mib, Bytes: 64 * mib,
		Blocked: 9e8, Flags: event.FlagBlocked, Pid: 3, Tid: 3})
	for i := range int64(64) {
		at := 10*us + i*14*1000*us
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 14000*us, Size: mib, Bytes: mib, Offset: i * mib, Pid: 3})
	}
	end := int64(1.05e9)
	withCPU := func(p *drive.Spec, usPerMiB float64) *drive.Spec {
		p.CacheReadCPU = &usPerMiB
		return p
	}
	slow, fast := withCPU(flat("slow", 14000, 1), 1500), withCPU(flat("fast", 14000, 1), 100)
	res, err := b.Predict(slow, fast, end, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Same latency, so only the computation moves: 0.1 s − 64 × 1.4 ms.
	near(t, "predicted", res.PredictedS, round(1.05-64*1400e-6))
	res, _ = b.Predict(fast, slow, end, nil)
	near(t, "predicted the other way", res.PredictedS, round(1.05+64*1400e-6))
	// Never below what the new drive's page cache costs for the bytes.
	*slow.CacheReadCPU = 3000
	res, _ = b.Predict(slow, fast, end, nil)
	near(t, "at the floor", res.PredictedS, round(1.05-0.1+64*100e-6))
	*slow.CacheReadCPU = 1500
	res, _ = b.Predict(slow, slow, end, nil)
	near(t, "on the recording drive", res.PredictedS, res.RecordedS)
	// Unmeasured on either side: the computation stays.
	res, _ = b.Predict(flat("slow", 14000, 1), fast, end, nil)
	near(t, "without the recording drive's figure", res.PredictedS, 1.05)
}

// A profile a little above or a little below the recorded stretch gives
// nearly the same answer: the share of the profile that fits is taken
// continuously (a hard switch from "subtract" to "scale" once flipped a
// copy's prediction by 3×).
func TestContinuousWhereTheProfileMeetsTheStretch(t *testing.T) {
	b := NewBuilder()
	// One 100 ms read, 30 ms of it asleep, over ten 4 KiB requests one
	// after another.
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: 100_000 * us, Size: 40960, Bytes: 40960,
		Pid: 4, Tid: 4, Flags: event.FlagBlocked, Blocked: 30_000 * us})
	for i := range int64(10) {
		at := i * 10_000 * us
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 3000*us, Size: 4096, Bytes: 4096,
			Offset: (i * 7919 % 1000) << 20, Pid: 4})
	}
	below, _ := b.Predict(flat("below", 9_900, 1), flat("slow", 100_000, 1), 100_000*us, nil)
	above, _ := b.Predict(flat("above", 10_100, 1), flat("slow", 100_000, 1), 100_000*us, nil)
	if below.PredictedS < 0.95 || math.Abs(above.PredictedS/below.PredictedS-1) > 0.02 {
		t.Errorf("profile 1%% below the stretch: %v s, 1%% above: %v s", below.PredictedS, above.PredictedS)
	}
}

// A recording on a bio-based drive (zram) never slept: the drive served
// its readahead on the reader's CPU. That time comes out of its
// computation; on an asynchronous drive the readahead runs alongside the
// rest (the longer of the two), on another bio-based one it adds up.
func TestBioBasedRecording(t *testing.T) {
	b := NewBuilder()
	dev := event.Dev{Major: 252}
	b.SetSynchronous([]event.Dev{dev})
	// A 130 ms copy, asleep 0, over 10 readahead requests of 7 ms each.
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: 130_000 * us, Size: 10 << 20, Bytes: 10 << 20,
		Dev: dev, Pid: 6, Tid: 6, Flags: event.FlagBlocked})
	for i := range int64(10) {
		at := 1000*us + i*12_000*us
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 7000*us, Size: 1 << 20, Bytes: 1 << 20,
			Offset: i << 20, Dev: dev, Pid: 6, Flags: event.FlagReadahead})
	}
	zram := flat("zram", 7000, 1)
	zram.Synchronous = true
	res, err := b.Predict(zram, zram, 130_000*us, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "on the recording drive", res.PredictedS, 0.130)
	// 60 ms of computation beside 100 ms of readahead: 100 ms.
	res, _ = b.Predict(zram, flat("disk", 10_000, 1), 130_000*us, nil)
	near(t, "on an asynchronous drive", res.PredictedS, 0.100)
	// Beside 30 ms of readahead: the computation, 60 ms.
	res, _ = b.Predict(zram, flat("fast disk", 3000, 1), 130_000*us, nil)
	near(t, "on a fast asynchronous drive", res.PredictedS, 0.060)
	// On another bio-based drive, 60 + 10 × 3.5 ms.
	ram := flat("ram", 3500, 1)
	ram.Synchronous = true
	res, _ = b.Predict(zram, ram, 130_000*us, nil)
	near(t, "on another bio-based drive", res.PredictedS, 0.095)
}

// Writeback that the block layer merges: many small sequential requests
// of a bio-based recording drive go to another drive at its merged
// requests' rate, not one by one.
func TestWritebackMerges(t *testing.T) {
	dev := event.Dev{Major: 252}
	b := writebackOf16KiB(dev)
	b.SetSynchronous([]event.Dev{dev})
	res, err := b.Predict(nil, writebackDisk(), 200_000*us, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 16 MB at 1,000 MB/s: 16.4 ms, for the 190 ms the recording's
	// requests took (the 10 ms sync was not waiting for them stays).
	near(t, "predicted", res.PredictedS, round(0.200-0.190+1000*16384/1e9))
}

// The flushers' bios on a bio-based recording drive, written back one
// after another on the flusher's CPU, are one wait for the sync behind
// them on a drive that queues them: its wait's cost once, not once a bio.
func TestFlushersBiosAreOneWait(t *testing.T) {
	dev := event.Dev{Major: 252}
	b := writebackOf16KiB(dev)
	b.SetSynchronous([]event.Dev{dev})
	disk := writebackDisk()
	wait := 50.0
	disk.WaitUs = &wait
	res, err := b.Predict(nil, disk, 200_000*us, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, round(0.200-0.190+1000*16384/1e9+50e-6))
}

// syncsBuffers is a sync (process 8) that writes n buffers of 4 KiB on a
// bio-based device itself, one bio each, every everyUs, each taking
// 190 µs: its file system's metadata, block by block.
func syncsBuffers(n, everyUs int64) (*Builder, int64) {
	dev := event.Dev{Major: 252}
	b := NewBuilder()
	end := n * everyUs * us
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallWait, Start: 0, End: end,
		Pid: 8, Tid: 8, Flags: event.FlagBlocked, Blocked: end})
	for i := range n {
		at := i * everyUs * us
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at, End: at + 190*us, Size: 4096, Bytes: 4096,
			Offset: i * 4096, Dev: dev, Pid: 8, Tid: 8, Flags: event.FlagMeta})
	}
	b.comms[8] = "sync"
	b.SetSynchronous([]event.Dev{dev})
	return b, end
}

// A process's bios that each start where its last ended, right after it
// (a sync writing metadata block by block on zram), are a batch that a
// request-based drive's block layer plugs and merges: they go at its
// merged rate. Bios with the process's computation between them go one
// by one.
func TestBatchOfBuffersMerges(t *testing.T) {
	b, end := syncsBuffers(1000, 200)
	res, err := b.Predict(nil, writebackDisk(), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 4 MB at 1,000 MB/s, for the 190 ms the recording's bios took.
	near(t, "a batch", res.PredictedS, round(0.200-0.190+1000*4096/1e9))
	b, end = syncsBuffers(1000, 400) // 210 µs apart: not one batch
	res, err = b.Predict(nil, writebackDisk(), end, nil)
	if err != nil {
		t.Fatal(err)
	}
	if drive, batch := res.PredictedS-(0.400-0.190), 1000*4096/1e9; drive < 10*batch {
		t.Errorf("bios 210 µs apart: the drive's time %v s, want them one by one (a batch would take %v s)", drive, batch)
	}
}

// A burst of the flushers' bios on a bio-based recording drive goes in
// the order the flushers walked the files; a request-based disk's I/O
// scheduler sorts the burst by place, and its head steps from each to
// the next: two files written back in turn, a block of each, are two
// sequential runs on the disk, not a seek a block. Bios far apart in
// time are not held together: each seeks.
func TestWritebackBurstSortedOnADisk(t *testing.T) {
	interleaved := func(gapUs int64) (*Builder, int64) {
		dev := event.Dev{Major: 252}
		b := NewBuilder()
		var at int64
		for i := range int64(200) {
			off := i / 2 * 4096 // file A's next block, then file B's (2 GiB on)
			if i%2 == 1 {
				off += 2 << 30
			}
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at, End: at + 50*us, Size: 4096, Bytes: 4096,
				Offset: off, Dev: dev, Pid: 30, Comm: "kworker/u8:1", Flags: event.FlagKernel})
			at += (50 + gapUs) * us
		}
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallWait, Start: 0, End: at,
			Pid: 8, Tid: 8, Flags: event.FlagBlocked, Blocked: at})
		b.comms[8] = "sync"
		b.SetSynchronous([]event.Dev{dev})
		return b, at
	}
	disk, _ := diskAndFlash()
	predict := func(gapUs int64) float64 {
		b, end := interleaved(gapUs)
		res, err := b.Predict(nil, disk, end, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS - float64(end-200*50*us)/1e9 // the disk's time
	}
	// Sorted: two runs of 400 KiB, a seek or two; as they came: 200 seeks
	// of 2 GiB (12 ms each).
	if burst, apart := predict(5), predict(1000); burst > 0.1 || apart < 200*0.010 {
		t.Errorf("disk's time for the interleaved writeback: %v s in a burst, %v s 1 ms apart", burst, apart)
	}
}

// A reader's readahead on a bio-based recording drive is served on its
// CPU as it comes. On a drive that queues it, a stream's next window goes
// while the reader computes through the last one; a file's first window
// (each window elsewhere: small files, a request each) it waits for.
func TestStreamOnABioBasedRecordingRunsAhead(t *testing.T) {
	reader := func(streaming bool) (*Builder, int64) {
		dev := event.Dev{Major: 252}
		b := NewBuilder()
		b.SetSynchronous([]event.Dev{dev})
		var at int64
		for i := range int64(100) {
			off := i * 128 << 10
			if !streaming {
				off = (i*7919%1000 + 1) << 24
			}
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 100*us, Size: 128 << 10, Bytes: 128 << 10,
				Offset: i * 128 << 10, Pid: 7, Tid: 7})
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 10*us, End: at + 60*us, Size: 128 << 10, Bytes: 128 << 10,
				Offset: off, Dev: dev, Pid: 7, Tid: 7, Flags: event.FlagReadahead})
			at += 400 * us // 300 µs of computation after each read
		}
		return b, at
	}
	zram := flat("zram", 50, 1)
	zram.Synchronous = true
	predict := func(streaming bool) float64 {
		b, end := reader(streaming)
		res, err := b.Predict(zram, flat("disk", 200, 1), end, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// The stream: the disk's 200 µs a window behind the 300 µs of
	// computation; the scattered reads wait for it: 150 µs more a read
	// than zram's 50.
	near(t, "a stream", predict(true), round(100*(400-50)*1e-6+200e-6))
	near(t, "scattered windows", predict(false), round(100*(400+150)*1e-6))
}

// A request-based drive's writeback requests are what the block layer
// made of the files (each small file its own request): they go to another
// drive as they are, each at its share of the drive's deepest queue at
// that size (a disk's command costs a turn of the platter).
func TestWritebackAtItsOwnSize(t *testing.T) {
	b := writebackOf16KiB(event.Dev{Major: 7})
	res, err := b.Predict(nil, writebackDisk(), 200_000*us, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1,000 requests at 100 µs each (32 in flight at 3.2 ms), not 16 MB
	// at the merged rate.
	near(t, "predicted", res.PredictedS, round(0.200-0.190+1000*100e-6))
}

// Writes submitted together and waited for one by one (a sync that slept
// once for each of its writes as they completed) wait on the new drive
// for its time for all of them once, not for each one's latency at its
// depth once a wait: four writes that a FIFO drive serves in 1 ms each
// take 4 ms, not 1 + 2 + 3 + 4.
func TestWritesWaitedForOneByOne(t *testing.T) {
	b := NewBuilder()
	for i := range int64(4) {
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: i * us, End: (i + 1) * 100 * us, Size: 4096, Bytes: 4096,
			Offset: i * 4096, Pid: 8, Tid: 8})
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallWait, Start: i * 100 * us, End: (i + 1) * 100 * us,
			Pid: 8, Tid: 8, Flags: event.FlagBlocked, Blocked: 100 * us})
	}
	b.comms[8] = "sync"
	// 100 µs a write on the recording drive, 1 ms on the new one; four in
	// flight take four times as long.
	res, err := b.Predict(flat("was", 100, 4), flat("slower", 1000, 4), 400*us, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, 0.004)
}

// writebackOf16KiB is a recording where sync sleeps 200 ms while the
// flusher writes 1,000 requests of 16 KiB on dev one after another.
func writebackOf16KiB(dev event.Dev) *Builder {
	b := NewBuilder()
	b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallWait, Start: 0, End: 200_000 * us,
		Pid: 8, Tid: 8, Flags: event.FlagBlocked, Blocked: 200_000 * us})
	for i := range int64(1000) {
		at := i * 200 * us
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at, End: at + 190*us, Size: 16 << 10, Bytes: 16 << 10,
			Offset: i * 16 << 10, Dev: dev, Pid: 30, Comm: "kworker/u8:1", Flags: event.FlagKernel})
	}
	b.comms[8] = "sync"
	return b
}

// writebackDisk writes 16 KiB at 100 µs a command (164 MB/s) and 1 MiB
// at 1,000 MB/s with 32 in flight.
func writebackDisk() *drive.Spec {
	disk := flat("disk", 0, 1)
	disk.Points = nil
	for _, d := range []int{1, 32} {
		disk.Points = append(disk.Points,
			drive.Point{Op: "write", Access: "seq", SizeBytes: 16 << 10, Depth: d, Jobs: 1, LatUs: 100 * float64(d)},
			drive.Point{Op: "write", Access: "seq", SizeBytes: 1 << 20, Depth: d, Jobs: 1, LatUs: float64(d) * (1 << 20) / 1000})
	}
	disk.MaxRequestKB = 1024
	return disk
}

// streamed runs the model on events as they come, for one pair of drives.
func streamed(evs []event.Event, from, to *drive.Spec, recordedNs int64) (*Result, *front, error) {
	b := NewBuilder()
	b.Stream([]To{{Profile: to}}, []From{{Profile: from}})
	for i := range evs {
		b.Add(&evs[i])
	}
	res, err := b.Predict(from, to, recordedNs, nil)
	return res, b.stream, err
}

// chainEvents is chain's events, in the order a tracer writes them: each
// when it completes.
func chainEvents(pid uint32, n int, at, callUs, reqUs, thinkUs int64) ([]event.Event, int64) {
	var evs []event.Event
	for i := range n {
		off := int64(i*7919%1000) * 1 << 20
		evs = append(evs,
			event.Event{Layer: event.Block, Op: event.Read, Start: at + 2*us, End: at + (2+reqUs)*us, Size: 4096, Bytes: 4096, Offset: off, Pid: pid},
			event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + callUs*us, Size: 4096, Bytes: 4096, Offset: off, Pid: pid, Tid: pid})
		at += (callUs + thinkUs) * us
	}
	return evs, at
}

// Streamed, the model holds the I/O of about ten seconds of trace, not the
// trace: 200 s of a serial chain (400,000 events) predict as the chain's
// arithmetic says with at most 12 s of its I/O held at once.
func TestStreamHoldsAWindow(t *testing.T) {
	evs, end := chainEvents(7, 200_000, 0, 100, 96, 900) // 1,000 calls a second
	res, en, err := streamed(evs, nil, flat("fast", 19.2, 1), end)
	if err != nil {
		t.Fatal(err)
	}
	// Each call waits 96 µs of its 100; the new drive takes 19.2.
	near(t, "predicted", res.PredictedS, 200-200_000*(96-19.2)*1e-6)
	if perSecond := 2000; en.peakHeld > 12*perSecond || en.peakHeld < 2*perSecond {
		t.Errorf("held %d I/Os at most, want about ten seconds' (%d a second)", en.peakHeld, perSecond)
	}
}

// The order events come in does not matter within the ten seconds the
// model re-sorts: completion order, arrival order and a shuffle of
// everything within 5 s predict alike, for calls that wait for their own
// reads, an fsync that waits 6 s for a flusher's writes, and a process
// that faults pages in outside its calls.
func TestStreamOrder(t *testing.T) {
	evs, at := chainEvents(7, 3000, 0, 100, 96, 900)
	sync := event.Event{Layer: event.Syscall, Op: event.Flush, Start: at, End: at + 6e9, Pid: 9, Tid: 9, Flags: event.FlagBlocked, Blocked: 59e8}
	evs = append(evs, sync)
	for k := int64(0); k < 600; k++ {
		s := at + k*10e6
		evs = append(evs, event.Event{Layer: event.Block, Op: event.Write, Start: s, End: s + 9e6, Size: 1 << 20, Bytes: 1 << 20, Offset: k << 20, Pid: 40, Comm: "kworker/u8:1", Flags: event.FlagKernel})
	}
	for k := int64(0); k < 400; k++ {
		s := at + 7e9 + k*2e6
		evs = append(evs, event.Event{Layer: event.Block, Op: event.Read, Start: s, End: s + 1e6, Size: 4096, Bytes: 4096, Offset: k * 7 << 20, Pid: 11, Comm: "launch"})
	}
	end := at + 8e9
	sortBy := func(key func(*event.Event) int64) []event.Event {
		out := append([]event.Event(nil), evs...)
		sort.SliceStable(out, func(i, j int) bool { return key(&out[i]) < key(&out[j]) })
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	orders := map[string][]event.Event{
		"completion": sortBy(func(e *event.Event) int64 { return e.End }),
		"arrival":    sortBy(func(e *event.Event) int64 { return e.Start }),
		"shuffled":   sortBy(func(e *event.Event) int64 { return e.End + rng.Int64N(5e9) }),
	}
	from, to := flat("was", 96, 1), flat("fast", 24, 1)
	want, en, err := streamed(orders["completion"], from, to, end)
	if err != nil {
		t.Fatal(err)
	}
	if en.late != 0 || !(want.PredictedS < want.RecordedS) || len(want.Processes) != 3 {
		t.Fatalf("completion order: %d late, %+v", en.late, want)
	}
	for name, evs := range orders {
		got, _, err := streamed(evs, from, to, end)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s order predicts %+v, want %+v", name, got, want)
		}
	}
}

// A call that outlasts the re-sorting window is matched with what is
// still held, and the prediction says so.
func TestStreamLongerThanTheWindow(t *testing.T) {
	var evs []event.Event
	for k := int64(0); k < 1500; k++ {
		s := k * 10e6
		evs = append(evs, event.Event{Layer: event.Block, Op: event.Write, Start: s, End: s + 9e6, Size: 1 << 20, Bytes: 1 << 20, Offset: k << 20, Pid: 40, Comm: "kworker/u8:1", Flags: event.FlagKernel})
	}
	evs = append(evs, event.Event{Layer: event.Syscall, Op: event.Flush, Start: 0, End: 15e9, Pid: 9, Tid: 9, Flags: event.FlagBlocked, Blocked: 149e8})
	res, en, err := streamed(evs, flat("was", 9000, 1), flat("fast", 900, 1), 15e9)
	if err != nil {
		t.Fatal(err)
	}
	if en.late != 1 || !(res.PredictedS < 15) || !strings.Contains(strings.Join(res.Notes, " "), "matched as they came") {
		t.Errorf("%d late, %+v", en.late, res)
	}
}

// Streamed for several drives the trace may have been recorded on (one
// re-sorting, an engine each), each predicts what the model predicts for
// that drive alone.
func TestStreamForEveryFrom(t *testing.T) {
	evs, end := chainEvents(7, 3000, 0, 100, 96, 900)
	to := flat("fast", 24, 1)
	froms := []*drive.Spec{nil, flat("was", 96, 1), flat("slower", 300, 2)}
	b := NewBuilder()
	var fs []From
	for _, f := range froms {
		fs = append(fs, From{Profile: f})
	}
	b.Stream([]To{{Profile: to}}, fs)
	for i := range evs {
		b.Add(&evs[i])
	}
	for _, from := range froms {
		got, err := b.Predict(from, to, end, nil)
		if err != nil {
			t.Fatal(err)
		}
		alone := NewBuilder()
		for i := range evs {
			alone.Add(&evs[i])
		}
		want, _ := alone.Predict(from, to, end, nil)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("from %v: %+v, want %+v", from, got, want)
		}
	}
	if _, err := b.Predict(flat("unknown", 1, 1), to, end, nil); err == nil {
		t.Error("a drive the model did not stream for predicted")
	}
}

// Only the devices named move: an application on an external drive still
// reads the system's libraries from the internal one, whose time stays.
func TestMoveOnly(t *testing.T) {
	onTwo := func(move []event.Dev) *Result {
		b := NewBuilder()
		b.MoveOnly(move)
		at := int64(0)
		for i := range 400 {
			dev := event.Dev{Major: 8, Minor: 0}
			if i%2 == 1 {
				dev = event.Dev{Major: 7, Minor: 3}
			}
			off := int64(i*7919%1000) << 20
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 100*us, Size: 4096, Bytes: 4096, Offset: off, Pid: 9, Tid: 9, Dev: dev})
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 2*us, End: at + 98*us, Size: 4096, Bytes: 4096, Offset: off, Pid: 9, Dev: dev})
			at += 150 * us
		}
		res, err := b.Predict(nil, flat("slow", 960, 1), at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	all, one := onTwo(nil), onTwo([]event.Dev{{Major: 7, Minor: 3}})
	// Each request: 96 µs recorded, 960 µs on the new drive.
	near(t, "all moved", all.PredictedS, 400*(150-96+960)*1e-6)
	near(t, "one moved", one.PredictedS, 200*(150-96+960)*1e-6+200*150e-6)
}

// What stays stays at the recording's time, also where the recording
// beat its drive's profile: only the moving devices' time is taken at the
// new drive's.
func TestStayingDeviceAtTheRecordingsShare(t *testing.T) {
	b := NewBuilder()
	b.SetRecordedThrottled(true) // the profile stands for the latencies
	b.MoveOnly([]event.Dev{{Major: 7, Minor: 3}})
	end := chain(b, 7, 1000, 0, 120, 96, 50) // all on 0:0, which stays
	from := flat("cached", 400, 1)
	on, _ := b.Predict(from, flat("cached", 400, 1), end, nil)
	other, _ := b.Predict(from, flat("other", 900, 1), end, nil)
	near(t, "nothing moved", other.PredictedS, on.PredictedS)
}

// A device that stays keeps its recorded time: the profiles are the moving
// drive's. (Here the recording drive's profile, 96 µs a read, would have
// the staying disk's 10 µs reads take 96, more than the whole trace.)
func TestStayingDeviceKeepsItsRecordedTime(t *testing.T) {
	moving, staying := event.Dev{Major: 7, Minor: 3}, event.Dev{Major: 8, Minor: 0}
	b := NewBuilder()
	b.SetRecordedThrottled(true) // the profile stands for the latencies
	b.MoveOnly([]event.Dev{moving})
	var at int64
	for i := range 1000 {
		dev, call, req := moving, int64(120), int64(96)
		if i%2 == 1 {
			dev, call, req = staying, 12, 10
		}
		off := int64(i*7919%1000) << 20
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + call*us, Size: 4096, Bytes: 4096, Offset: off, Pid: 7, Tid: 7, Dev: dev})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + us, End: at + (1+req)*us, Size: 4096, Bytes: 4096, Offset: off, Pid: 7, Dev: dev})
		at += call * us
	}
	res, _ := b.Predict(flat("disk", 96, 1), flat("fast", 30, 1), at, nil)
	// Each moving call is 66 µs shorter, and of the 24 µs the profile
	// leaves unexplained in it, the 14.4 within its uncertainty moves with
	// the drive.
	near(t, "the moving reads' 66 µs each off", res.PredictedS, float64(at)/1e9-500*(66+0.15*96*(1-30.0/96))*1e-6)
}

// faults adds n page faults of one process: a readahead request of size
// at each offset, 100 µs apart, each taking 50 µs.
func faults(b *Builder, offsets []int64, size int64) int64 {
	var at int64
	for _, off := range offsets {
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 50*us, Size: size, Bytes: size, Offset: off,
			Pid: 6, Tid: 6, Comm: "app", Flags: event.FlagReadahead})
		at += 100 * us
	}
	return at
}

// predictFaults is the prediction, from one drive to another, of page
// faults at offsets, each a readahead request of size (see faults).
func predictFaults(t *testing.T, from, to *drive.Spec, offsets []int64, size int64) float64 {
	t.Helper()
	b := NewBuilder()
	end := faults(b, offsets, size)
	res, err := b.Predict(from, to, end, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.PredictedS
}

// A recording drive whose window is wider than its largest request (a
// disk's 2.5 MiB in requests of 1.25 MiB) cut each fault into requests of
// that size: the new drive's wider window reads around the first.
func TestWindowWiderThanARequest(t *testing.T) {
	from := flat("disk", 50, 1)
	from.ReadaheadKB, from.MaxRequestKB = 2560, 1280
	// 40 ms a request, four in flight at once: 1 MiB streams in 10 ms.
	narrow, wide := flat("to-same", 40e3, 1), flat("to-wide", 40e3, 1)
	narrow.ReadaheadKB, narrow.MaxRequestKB, wide.ReadaheadKB, wide.MaxRequestKB = 2560, 1280, 8192, 1280
	var together []int64
	for i := range int64(6) {
		together = append(together, (1<<30)+(i*5%6)*1280<<10) // 6 × 1.25 MiB within 7.5 MiB, out of order
	}
	predict := func(to *drive.Spec) float64 { return predictFaults(t, from, to, together, 1280<<10) }
	const outside = 6 * 50e-6 // between the faults
	// All six within the first fault's 8 MiB window: one random request
	// and the rest streamed, against six random requests.
	if n, w := predict(narrow), predict(wide); !(w-outside < 0.9*(n-outside)) {
		t.Errorf("faults within one wide window: %v s with it, %v s without", w, n)
	}
}

// A drive whose readahead window is wider reads around a fault what the
// recording drive fetched in several requests: those within a window
// already read cost it nothing, the first costs the whole window. A
// request smaller than the recording drive's window was not cut by it
// and costs the same either way.
func TestWiderReadaheadWindow(t *testing.T) {
	from := flat("narrow", 50, 1)
	from.ReadaheadKB = 128
	narrow, wide := flat("to-narrow", 400, 1), flat("to-wide", 400, 1)
	narrow.ReadaheadKB, wide.ReadaheadKB, wide.MaxRequestKB = 128, 2048, 1024
	predict := func(to *drive.Spec, offsets []int64, size int64) float64 {
		return predictFaults(t, from, to, offsets, size)
	}
	var together, apart []int64
	for i := range int64(16) {
		together = append(together, (1<<30)+(i*7%16)<<17) // 16 × 128 KiB within 2 MiB, out of order
		apart = append(apart, i<<30)
	}
	const outside = 16 * 50e-6 // between the faults
	// (The narrow drive streams the faults that continue one another.)
	if n, w := predict(narrow, together, 128<<10), predict(wide, together, 128<<10); !(w-outside < (n-outside)/3) {
		t.Errorf("faults within one wide window: %v s with it, %v s without", w, n)
	}
	if n, w := predict(narrow, apart, 128<<10), predict(wide, apart, 128<<10); !(w > n) {
		t.Errorf("faults far apart: %v s with a wide window, %v s without (each reads a whole window)", w, n)
	}
	near(t, "requests smaller than the window", predict(wide, together, 16<<10), predict(narrow, together, 16<<10))
	// Faults 1 MiB apart: each 2 MiB window half read by the one before,
	// the kernel reads only the other half — which it would have streamed
	// behind the first request (here 0.1 of 0.5 ms a window).
	var stepped []int64
	for i := range int64(16) {
		stepped = append(stepped, (1<<30)+i<<20)
	}
	if s, a := predict(wide, stepped, 128<<10), predict(wide, apart, 128<<10); !(s-outside < 0.9*(a-outside)) {
		t.Errorf("windows half read already: %v s, none read: %v s", s, a)
	}
}

// What the wider windows read stays in the page cache: faults on 200
// windows, then again beside each, find the second round's pages read
// (a program's start reads its 200 MB binary around hundreds of faults;
// 64 windows remembered had the HDD model reading it twice).
func TestWiderWindowsAllRemembered(t *testing.T) {
	from := flat("narrow", 50, 1)
	from.ReadaheadKB = 128
	wide := flat("to-wide", 400, 1)
	wide.ReadaheadKB, wide.MaxRequestKB = 2048, 1024
	var once, twice []int64
	for i := range int64(200) {
		once = append(once, i<<30)
	}
	twice = append(twice, once...)
	for _, off := range once {
		twice = append(twice, off+256<<10)
	}
	predict := func(offsets []int64) float64 { return predictFaults(t, from, wide, offsets, 128<<10) }
	if o, tw := predict(once), predict(twice); tw-200*100e-6 > 1.01*o {
		t.Errorf("200 windows, then beside each: %v s, against %v s for the first round alone", tw, o)
	}
}

// A stream's requests in flight together, all its own, took what the
// drive took: the recorded latencies come out, whatever the recording
// drive's profile says. Beside another process's request, part of the
// latency is the other's, and the profile's comes out.
func TestOwnRequestsTogether(t *testing.T) {
	predict := func(from *drive.Spec, other bool) float64 {
		b := NewBuilder()
		var at int64
		for i := range int64(100) {
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 200*us, Size: 256 << 10, Bytes: 256 << 10,
				Offset: i << 30, Pid: 3, Tid: 3, Flags: event.FlagBlocked, Blocked: 200 * us})
			for k := range int64(2) {
				pid := uint32(3)
				if other && k == 1 {
					pid = 4
				}
				b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 5*us, End: at + 195*us, Size: 128 << 10, Bytes: 128 << 10,
					Offset: i<<30 + k<<17, Pid: pid, Tid: pid})
			}
			at += 300 * us
		}
		res, err := b.Predict(from, flat("new", 100, 1), at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	near(t, "own requests, whatever the profile says", predict(flat("says-400", 400, 1), false), predict(flat("says-50", 50, 1), false))
	if a, b := predict(flat("says-400", 400, 1), true), predict(flat("says-50", 50, 1), true); a >= b {
		t.Errorf("beside another's request the profile's time comes out: %v s (400 µs) against %v s (50 µs)", a, b)
	}
}

// A journal's writes continue one another, but a file's data lands
// between them: a disk's head has moved, and each journal write seeks
// back; a drive whose latency does not depend on position writes them
// as a sequence.
func TestHeadMovedBetweenWrites(t *testing.T) {
	b := NewBuilder()
	var at int64
	write := func(off int64) {
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Start: at, End: at + 1000*us, Size: 4096, Bytes: 4096, Offset: off,
			Pid: 2, Tid: 2, Flags: event.FlagDirect | event.FlagBlocked, Blocked: 1000 * us})
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 5*us, End: at + 995*us, Size: 4096, Bytes: 4096, Offset: off,
			Pid: 2, Tid: 2})
		at += 1100 * us
	}
	for i := range int64(50) {
		write((i*7919%500 + 1) << 21) // the file's data, scattered
		write(3<<30 + i*4096)         // the journal's next block
	}
	disk, flash := diskAndFlash()
	predict := func(to *drive.Spec) float64 {
		res, err := b.Predict(flat("recorded-on", 1000, 1), to, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// The journal's 50 writes: a seek each on the disk (over 3 GiB: the
	// longest span's 12 ms), 100 µs each on the other.
	if d, f := predict(disk), predict(flash); d-f < 50*0.010 {
		t.Errorf("journal writes between data writes: %v s on a disk, %v s on flash", d, f)
	}
}

// A drive whose readahead window is narrower than the recording drive's
// reads around a fault only its own window: the recording's requests
// beyond it are that drive's own faults, later — on a disk, a seek each
// (Chromium's start from the VM disk's 8 MiB windows onto the HDD
// model's 2.5 MiB: −36 → −6 %). A drive without a head does not care.
func TestNarrowerWindowFaultsAgain(t *testing.T) {
	from := flat("wide", 50, 1)
	from.ReadaheadKB, from.MaxRequestKB = 8192, 1280
	var offsets []int64
	const windows = 8
	for w := range int64(windows) {
		for i := range int64(6) { // 7.5 MiB read around each fault
			offsets = append(offsets, w<<30+i*1280<<10)
		}
	}
	predict := func(to *drive.Spec, readaheadKB int) float64 {
		to.ReadaheadKB, to.MaxRequestKB = readaheadKB, 1280
		return predictFaults(t, from, to, offsets, 1280<<10)
	}
	disk, _ := diskAndFlash()
	narrow := predict(disk, 2560)
	disk, _ = diskAndFlash()
	wide := predict(disk, 8192)
	// Two more random reads in each window (at 2.5 and 5 MiB), each 12 ms
	// where it streamed in 0.1.
	if extra := narrow - wide; extra < windows*2*11e-3 || extra > windows*2*13e-3 {
		t.Errorf("a disk with 2.5 MiB windows: %v s more than with 8 MiB, want about %v", extra, windows*2*12e-3)
	}
	_, flash := diskAndFlash()
	narrow = predict(flash, 2560)
	_, flash = diskAndFlash()
	near(t, "a drive without a head", narrow, predict(flash, 8192))
}

// Reads around faults come at most a window at a time: on a drive that
// takes one command at a time, 64 faults of a 128 KiB window take 64
// commands however few the requests' shares add up to (Chromium's start
// onto the USB model: 8.7 s predicted at its best rate, 12.6 measured).
func TestFaultsReadAWindowAtATime(t *testing.T) {
	from := flat("fast", 50, 1)
	from.ReadaheadKB = 128
	b := NewBuilder()
	const n = 64
	for i := range int64(n) {
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: i * us, End: 1000 * us, Size: 128 << 10, Bytes: 128 << 10, Offset: i << 30,
			Pid: 6, Tid: 6, Comm: "app", Flags: event.FlagReadahead})
	}
	predict := func(depthFactor float64) float64 {
		to := flat("bridge", 1000, depthFactor) // 1 ms a command, whatever its size
		to.ReadaheadKB = 128
		res, err := b.Predict(from, to, 1000*us, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	if got := predict(4); got < n*1e-3*0.95 {
		t.Errorf("one command at a time: %v s, want at least %v", got, n*1e-3)
	}
	// Four at a time: a quarter of it.
	if got := predict(1); got > n*1e-3/4*1.05 {
		t.Errorf("four commands at a time: %v s, want at most %v", got, n*1e-3/4)
	}
}

// diskAndFlash are two drives alike but for position: 12 ms random, 100
// µs sequential; the disk's random latency grows with distance (2 ms
// within 1 MiB to 12 ms over 4 GiB), the flash drive's does not.
func diskAndFlash() (disk, flash *drive.Spec) {
	flatDisk := func(name string) *drive.Spec {
		d := flat(name, 12000, 1)
		for i := range d.Points {
			if d.Points[i].Access == "seq" {
				d.Points[i].LatUs = 100
			}
		}
		return d
	}
	disk, flash = flatDisk("disk"), flatDisk("flash")
	disk.Spans = []drive.Span{{Bytes: 1 << 20, LatUs: 2000}, {Bytes: 16 << 20, LatUs: 5000}, {Bytes: 128 << 20, LatUs: 9000}, {Bytes: 4 << 30, LatUs: 12000}}
	disk.SpanBytes = 4 << 30
	return disk, flash
}

// A file's next block continues its last read, but a read elsewhere (a
// directory's) came between: a disk's cache now holds what follows that,
// and the file's read seeks back. A write elsewhere moves the head, not
// the cache: the file's next block is still there.
func TestHeadMovedBetweenReads(t *testing.T) {
	disk, flash := diskAndFlash()
	predict := func(between event.Op, to *drive.Spec) float64 {
		b := NewBuilder()
		var at int64
		io := func(op event.Op, off int64) {
			b.Add(&event.Event{Layer: event.Syscall, Op: op, Start: at, End: at + 1000*us, Size: 4096, Bytes: 4096, Offset: off,
				Pid: 2, Tid: 2, Flags: event.FlagDirect | event.FlagBlocked, Blocked: 1000 * us})
			b.Add(&event.Event{Layer: event.Block, Op: op, Start: at + 5*us, End: at + 995*us, Size: 4096, Bytes: 4096, Offset: off,
				Pid: 2, Tid: 2})
			at += 1100 * us
		}
		for i := range int64(50) {
			io(event.Read, 3<<30+i*4096)    // the file's next block
			io(between, (i*7919%500+1)<<21) // elsewhere
		}
		res, err := b.Predict(flat("recorded-on", 1000, 1), to, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// The file's 50 reads: a seek back each on the disk (over 3 GiB: the
	// longest span's 12 ms), 100 µs each on flash.
	if d, f := predict(event.Read, disk), predict(event.Read, flash); d-f < 50*0.010 {
		t.Errorf("file reads between other reads: %v s on a disk, %v s on flash", d, f)
	}
	if d, f := predict(event.Write, disk), predict(event.Write, flash); math.Abs(d-f) > 50*0.002 {
		t.Errorf("file reads between writes elsewhere: %v s on a disk, %v s on flash; want its cache to serve them", d, f)
	}
}

// An fsync's flush takes the new drive's measured flush, and the commit
// block written right after it the write of its write-and-flush cycle (a
// disk without a write cache waits most of a turn); a drive whose cycle
// was not measured keeps the flush as recorded.
func TestFlushAndTheWriteAfterIt(t *testing.T) {
	b := NewBuilder()
	var at int64
	for i := range int64(20) {
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallFsync, Start: at, End: at + 500*us, Pid: 2, Tid: 2,
			Flags: event.FlagBlocked, Blocked: 500 * us})
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 10*us, End: at + 200*us, Size: 8192, Bytes: 8192,
			Offset: 1<<30 + i*8192, Pid: 99, Comm: "jbd2/vdb-8", Flags: event.FlagKernel})
		b.Add(&event.Event{Layer: event.Block, Op: event.Flush, Start: at + 210*us, End: at + 300*us, Offset: -1, Pid: 98, Comm: "kworker/0:1H",
			Flags: event.FlagKernel | event.FlagPreflush})
		b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 310*us, End: at + 490*us, Size: 4096, Bytes: 4096,
			Offset: 1<<30 + i*8192 + 8192, Pid: 98, Comm: "kworker/0:1H", Flags: event.FlagKernel})
		at += 1000 * us
	}
	from := flat("was", 180, 1)
	plain, cycle := flat("plain", 180, 1), flat("cycle", 180, 1)
	cycle.SyncWrite = &drive.SyncWrite{WriteUs: 9000, FlushUs: 2000}
	predict := func(to *drive.Spec) float64 {
		res, err := b.Predict(from, to, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// Per fsync: the flush 90 → 2000 µs, the commit block 180 → 9000 µs.
	near(t, "with its cycle measured", predict(cycle)-predict(plain), 20*((2000-90)+(9000-180))*1e-6)
}

// fsync'd files: each file's data, then the journal's blocks and its
// commit block. How far the files lie from the journal is the recording's
// file system's layout, not the workload's: on a disk whose file system's
// size is known both recordings take a quarter of it for the head's move
// between the two, whichever they were; without it, what was recorded.
func TestJournalDistanceIsTheNewFileSystems(t *testing.T) {
	const journal = int64(4 << 30)
	predict := func(data int64, to *drive.Spec) float64 {
		b := NewBuilder()
		var at int64
		for i := range int64(20) {
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallFsync, Start: at, End: at + 3000*us, Pid: 2, Tid: 2,
				Flags: event.FlagBlocked, Blocked: 3000 * us})
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 10*us, End: at + 1000*us, Size: 8192, Bytes: 8192,
				Offset: data + i*8192, Pid: 2, Tid: 2, Comm: "dd", Flags: event.FlagSync})
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 1010*us, End: at + 2000*us, Size: 8192, Bytes: 8192,
				Offset: journal + i*12288, Pid: 99, Comm: "jbd2/vdb-8", Flags: event.FlagKernel | event.FlagMeta | event.FlagSync})
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 2010*us, End: at + 2990*us, Size: 4096, Bytes: 4096,
				Offset: journal + i*12288 + 8192, Pid: 98, Comm: "kworker/0:1H", Flags: event.FlagKernel | event.FlagMeta | event.FlagSync})
			at += 4000 * us
		}
		res, err := b.Predict(flat("was", 1000, 1), to, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	disk, _ := diskAndFlash()
	const nearby, far = journal + 30<<20, journal - 2<<30
	if n, f := predict(nearby, disk), predict(far, disk); f-n < 20*2*0.001 {
		t.Errorf("file system's size unknown: %v s with the files 30 MiB from the journal, %v s 2 GiB from it; want the farther slower", n, f)
	}
	disk.FSBytes = 8 << 30
	near(t, "files near the journal against far from it", predict(nearby, disk), predict(far, disk))
}

// throttled is a drive behind a cgroup's 1,500 requests and 40 MB/s a
// second, at any depth, with an 8 MiB readahead window.
func throttled() *drive.Spec {
	d := &drive.Spec{Name: "throttle", ReadaheadKB: 8192, MaxRequestKB: 1280}
	for _, access := range []string{"seq", "rand"} {
		for _, size := range []int64{4096, 1 << 20} {
			for _, depth := range []int{1, 4} {
				lat := max(1e6/1500, float64(size)/40) * float64(depth)
				d.Points = append(d.Points, drive.Point{Op: "read", Access: access, SizeBytes: size, Depth: depth, Jobs: 1, LatUs: lat})
			}
		}
	}
	return d
}

// No drive reads faster than its best rate benched, whatever the model
// makes of each request: 50 page faults far apart, each read as two
// requests of 1.25 MiB in flight together (a disk's 2.5 MiB window), read
// 8 MiB windows behind the throttle — 400 MiB at 40 MB/s.
func TestNoFasterThanTheDrivesBestRate(t *testing.T) {
	b := NewBuilder()
	for i := range int64(50) {
		at := i * 10_000 * us
		for half := range int64(2) {
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at, End: at + 8_000*us, Size: 1280 << 10, Bytes: 1280 << 10,
				Offset: i<<26 + half*1280<<10, Pid: 6, Tid: 6, Comm: "app", Flags: event.FlagReadahead})
		}
	}
	from := flat("disk", 8_000, 1)
	from.ReadaheadKB, from.MaxRequestKB = 2560, 1280
	res, err := b.Predict(from, throttled(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "400 MiB behind 40 MB/s", res.PredictedS, 50*8<<20/40e6)
}

// A drive without a write cache takes an fsync's writes and no flush (the
// kernel sends none to zram): on a drive that has one, the same fsync
// flushes before its journal's commit block and after it, and the commit
// block waits as the write after a flush does; an fdatasync of data alone
// flushes once. A trace with its flushes recorded does not take them twice.
func TestFlushesTheRecordingDriveNeverTook(t *testing.T) {
	trace := func(journal, flushes bool) *Builder {
		b := NewBuilder()
		var at int64
		for i := range int64(200) {
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallFsync, Start: at, End: at + 500*us, Pid: 2, Tid: 2,
				Flags: event.FlagBlocked, Blocked: 500 * us})
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 10*us, End: at + 100*us, Size: 8192, Bytes: 8192,
				Offset: i * 1 << 20, Pid: 2, Tid: 2})
			if journal {
				b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 110*us, End: at + 200*us, Size: 8192, Bytes: 8192,
					Offset: 1<<30 + i*12288, Pid: 99, Comm: "jbd2/vdb-8", Flags: event.FlagKernel})
				if flushes {
					b.Add(&event.Event{Layer: event.Block, Op: event.Flush, Start: at + 210*us, End: at + 300*us, Offset: -1, Pid: 98,
						Comm: "kworker/0:1H", Flags: event.FlagKernel | event.FlagPreflush})
				}
				b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 310*us, End: at + 400*us, Size: 4096, Bytes: 4096,
					Offset: 1<<30 + i*12288 + 8192, Pid: 99, Comm: "jbd2/vdb-8", Flags: event.FlagKernel})
			}
			if flushes {
				b.Add(&event.Event{Layer: event.Block, Op: event.Flush, Start: at + 410*us, End: at + 490*us, Offset: -1, Pid: 98,
					Comm: "kworker/0:1H", Flags: event.FlagKernel | event.FlagPreflush})
			}
			at += 1000 * us
		}
		return b
	}
	from := flat("was", 90, 1)
	// Against a drive whose flushes cost nothing and whose write after
	// one costs what any other does: what the flushes add.
	free, cycle := flat("free", 90, 1), flat("cycle", 90, 1)
	free.SyncWrite = &drive.SyncWrite{WriteUs: 90, FlushUs: 0}
	cycle.SyncWrite = &drive.SyncWrite{WriteUs: 9000, FlushUs: 2000}
	gain := func(b *Builder) float64 {
		pc, err := b.Predict(from, cycle, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := b.Predict(from, free, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pc.PredictedS - pf.PredictedS
	}
	// Per fsync (the predictions are rounded to the ms: 200 of them): two
	// flushes, the commit block 90 → 9000 µs — whether the recording took
	// the flushes or not.
	perFsync := 2*2000 + (9000 - 90)
	near(t, "a commit without flushes", gain(trace(true, false)), 200*float64(perFsync)*1e-6)
	near(t, "flushes recorded", gain(trace(true, true)), 200*float64(perFsync)*1e-6)
	near(t, "data without flushes", gain(trace(false, false)), 200*2000*1e-6)
}

// Writes that follow one another with time between them find a disk's
// sector gone (the cycle's write); on a bio-based recording drive that
// time is the submitter's computation between requests the device
// serves on its CPU, not a pause.
func TestPauseNotOnABioBasedRecording(t *testing.T) {
	predict := func(sync bool) float64 {
		b := NewBuilder()
		if sync {
			b.SetSynchronous([]event.Dev{{}})
		}
		var at int64
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallFsync, Start: 0, End: 100 * 300 * us, Pid: 2, Tid: 2,
			Flags: event.FlagBlocked, Blocked: 100 * 300 * us})
		for i := range int64(100) {
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at, End: at + 10*us, Size: 4096, Bytes: 4096,
				Offset: i * 4096, Pid: 2, Tid: 2})
			at += 300 * us
		}
		cycle := flat("cycle", 100, 1)
		cycle.SyncWrite = &drive.SyncWrite{WriteUs: 9000, FlushUs: 100}
		res, err := b.Predict(flat("was", 10, 1), cycle, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	if paused, computing := predict(false), predict(true); !(paused > 0.5 && computing < 0.1) {
		t.Errorf("100 writes 290 µs apart: %v s after pauses, %v s between a bio-based device's requests", paused, computing)
	}
}

// A loop device's request reaches the block layer twice: on the loop
// device, and issued again by a kernel worker on the disk its backing file
// is on. Moving the loop device moves both: the lower request's time is
// inside the loop device's, not another wait.
func TestStackedLoopDevice(t *testing.T) {
	loop, disk := event.Dev{Major: 7, Minor: 1}, event.Dev{Major: 254, Minor: 0}
	predict := func(stacked bool) float64 {
		b := NewBuilder()
		b.MoveOnly([]event.Dev{loop})
		if stacked {
			b.SetStacked([]event.Device{{Major: 7, Minor: 1, Name: "loop1", Lower: []event.Dev{disk}}, {Major: 254, Minor: 0, Name: "vda"}})
		}
		at := int64(0)
		for i := range 400 {
			off := int64(i*7919%1000) << 20
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 100*us, Size: 4096, Bytes: 4096, Offset: off,
				Pid: 9, Tid: 9, Dev: loop, Flags: event.FlagBlocked, Blocked: 96 * us})
			// Two requests of the loop device in flight together, the
			// first issued again below it between them.
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 2*us, End: at + 98*us, Size: 4096, Bytes: 4096, Offset: off, Pid: 9, Dev: loop})
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 5*us, End: at + 90*us, Size: 4096, Bytes: 4096, Offset: 1<<30 + off,
				Pid: 50, Tid: 50, Comm: "kworker/u8:1", Flags: event.FlagKernel, Dev: disk})
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 8*us, End: at + 98*us, Size: 4096, Bytes: 4096, Offset: off + 8192, Pid: 9, Dev: loop})
			at += 150 * us
		}
		res, err := b.Predict(nil, flat("slow", 960, 1), at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// The loop device's requests: 96 µs and 90 µs recorded, the second
	// in flight beside the first (half of it waited for); 960 µs each on
	// the new drive, the second at depth 2.
	want := 400 * (150 - 96 - 90.0/2 + 960 + 960.0/2) * 1e-6
	near(t, "stacked", predict(true), want)
	if twice := predict(false); math.Abs(twice-want) < 0.01*want {
		t.Errorf("without the stacking known, %v s: the test does not see the lower requests", twice)
	}
}

// bench's page cache CPU on a bio-based drive holds the drive's own
// service (zram decompresses on the reader's CPU); the model counts that
// as the drive's time, so only the rest is the page cache's.
func TestPageCacheCPUBesideABioBasedDrive(t *testing.T) {
	cpu := 400.0
	d := flat("ram", 50, 1)
	d.ReadaheadKB, d.MaxRequestKB, d.CacheReadCPU = 1024, 1024, &cpu
	near(t, "an asynchronous drive's", pageCacheCPU(d), 400)
	d.Synchronous = true
	stream := d.StreamUs(1<<20, 0)
	if !(stream > 0 && stream < 400) {
		t.Fatalf("stream of 1 MiB: %v µs", stream)
	}
	near(t, "a bio-based drive's", pageCacheCPU(d), 400-stream)
	cpu = stream / 2
	near(t, "never below zero", pageCacheCPU(d), 0)
}

// Waiting for a read costs beside the device's time (drive.Spec.WaitUs):
// a trace's requests show the device's, a profile's latencies hold the
// wait too. Between two drives that sleep their waiter the wait stays in
// the computation; a bio-based drive serves the read on the reader's CPU:
// the recording's waits come out, or the new drive's go in.
func TestWaitCostWhereOneDriveSleeps(t *testing.T) {
	withWait := func(p *drive.Spec, w float64) *drive.Spec {
		p.WaitUs = &w
		return p
	}
	// 1000 reads, each a 120 µs call around a 96 µs request, 50 µs apart.
	b := NewBuilder()
	end := chain(b, 7, 1000, 0, 120, 96, 50)
	ram := flat("ram", 5, 1)
	ram.Synchronous = true
	res, _ := b.Predict(withWait(flat("disk", 106, 1), 10), ram, end, nil)
	// Each call: 50 + 24 around the request, less the 10 µs wait, + 5.
	near(t, "to a bio-based drive", res.PredictedS, 1000*(50+24-10+5)*1e-6)
	res, _ = b.Predict(flat("disk", 106, 1), ram, end, nil)
	near(t, "the wait unmeasured", res.PredictedS, 1000*(50+24+5)*1e-6)
	// To another drive that sleeps: its latency less its wait (one wait,
	// whose cost is in the recording's computation already).
	res, _ = b.Predict(withWait(flat("disk", 106, 1), 10), withWait(flat("other", 60, 1), 8), end, nil)
	near(t, "to a drive that sleeps too", res.PredictedS, 1000*(50+24+60-8)*1e-6)

	// Recorded on a bio-based drive: no wait to take out; the new drive's
	// whole latency goes in (its device time and its wait).
	b = NewBuilder()
	b.SetSynchronous([]event.Dev{{}})
	end = chain(b, 7, 1000, 0, 100, 5, 50)
	res, _ = b.Predict(withWait(ram, 1), withWait(flat("disk", 106, 1), 10), end, nil)
	near(t, "from a bio-based drive", res.PredictedS, 1000*(50+100-5+106)*1e-6)
}

// A recording that beat its drive's profile (the drive's own cache served
// it): the recording drive's time is taken at the share that fits, the
// new drive's at its profile's whole — what made the recording fast was
// its drive's — and on the recording drive itself it is as recorded.
func TestBeatingTheProfileIsTheRecordingDrives(t *testing.T) {
	// 1000 reads, each a 120 µs call around a 96 µs request, 50 µs apart;
	// the profile says 400 µs a read. (Recorded where the latencies may not
	// be the drive's own, so the profile stands for them.)
	b := NewBuilder()
	b.SetRecordedThrottled(true)
	end := chain(b, 7, 1000, 0, 120, 96, 50)
	cached := flat("cached", 400, 1)
	res, _ := b.Predict(cached, flat("cached", 400, 1), end, nil)
	near(t, "on the recording drive", res.PredictedS, float64(end)/1e9)
	slower, _ := b.Predict(cached, flat("slower", 900, 1), end, nil)
	faster, _ := b.Predict(cached, flat("faster", 300, 1), end, nil)
	near(t, "two drives' difference", slower.PredictedS-faster.PredictedS, 1000*(900-300)*1e-6)
}

// The computation after each wait moves with the two drives' wake-ups
// (drive.Spec.WakeUs): a reader runs colder after waiting for a drive
// whose driver kept the CPUs busy — in the call that waited and in what
// the thread does until its next, which the trace does not hold — by
// (coldRefUs + the new drive's) ÷ (coldRefUs + the recording drive's),
// for the first coldCapNs of it after each wait, and by no more than the
// wake-ups' difference a wait: what bench's reader pays for one.
func TestWakeCostPerWait(t *testing.T) {
	// 1000 reads, each a 150 µs call asleep 100 µs around its request, one
	// every 200 µs: 50 µs computing in each call and 50 between. The
	// profiles take 96 µs for the request that took 100: 196 µs a read.
	b := NewBuilder()
	end := sleptReads(b, 1000, 150, 100, 200)
	// Wake-ups of 100 and 120 µs: the computation after a wait ×(coldRefUs
	// + 120) ÷ (coldRefUs + 100) — in the calls and the 999 gaps after a
	// wait: 18.5 µs more a wait, less than the 20 the wake-ups differ by.
	ratio := (coldRefUs + 120.0) / (coldRefUs + 100)
	colder := (1000*50 + 999*50) * (ratio - 1) * 1e-6
	res, _ := b.Predict(withWake(flat("disk", 96, 1), 100), withWake(flat("colder", 96, 1), 120), end, nil)
	near(t, "to a drive that wakes colder", res.PredictedS, 1000*196e-6+colder)
	res, _ = b.Predict(withWake(flat("disk", 96, 1), 120), withWake(flat("warmer", 96, 1), 100), end, nil)
	near(t, "to a drive that wakes warmer", res.PredictedS, 1000*196e-6-colder/ratio)
	res, _ = b.Predict(withWake(flat("disk", 96, 1), 30), flat("unmeasured", 96, 1), end, nil)
	near(t, "one drive's unmeasured", res.PredictedS, 1000*196e-6)
	res, _ = b.Predict(withWake(flat("disk", 96, 1), 10), withWake(flat("disk", 96, 1), 30), end, nil)
	near(t, "the same drive", res.PredictedS, float64(end)/1e9)

	// Wake-ups of 10 and 30 µs: the ratio would make each wait's 100 µs
	// 111 µs longer (cp -r's copy of a file after its read); a wait moves
	// it by the 20 µs bench's reader pays.
	res, _ = b.Predict(withWake(flat("disk", 96, 1), 10), withWake(flat("colder", 96, 1), 30), end, nil)
	near(t, "colder by the wake-ups' difference", res.PredictedS, 1000*(196+20)*1e-6)
	res, _ = b.Predict(withWake(flat("disk", 96, 1), 30), withWake(flat("warmer", 96, 1), 10), end, nil)
	near(t, "warmer by the wake-ups' difference", res.PredictedS, 1000*(196-20)*1e-6)

	// 1 ms computing after each wait: only its first coldCapNs runs cold
	// (wake-ups of 1000 and 1300 µs: the ratio's 179 µs within the 300
	// they differ by).
	b = NewBuilder()
	end = sleptReads(b, 100, 150, 100, 1150)
	slowRatio := (coldRefUs + 1300.0) / (coldRefUs + 1000)
	res, _ = b.Predict(withWake(flat("disk", 96, 1), 1000), withWake(flat("colder", 96, 1), 1300), end, nil)
	near(t, "a long computation", res.PredictedS, (float64(end)/1e3-100*4+100*coldCapNs/1e3*(slowRatio-1))*1e-6)
	res, _ = b.Predict(withWake(flat("disk", 96, 1), 10), withWake(flat("colder", 96, 1), 30), end, nil)
	near(t, "a long computation, by the difference", res.PredictedS, (float64(end)/1e3-100*4+100*20)*1e-6)

	// What a wait's computation left of its step, a later one may take: 1000
	// reads computing 5 µs each, then 1 ms before the last read — the
	// drive's own work held the CPU after that wait (cp -r's computation
	// after a wait on the HDD model: 48–66 µs at the median, 328–616 µs at
	// the 99th percentile). That gap's first coldCapNs moves by the ratio:
	// the earlier waits left enough.
	lastAfter := func(gapUs int64) float64 {
		b := NewBuilder()
		at := sleptReads(b, 1000, 105, 100, 105) + gapUs*us
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 105*us, Size: 4096, Bytes: 4096, Offset: 1000 << 20,
			Pid: 7, Tid: 7, Flags: event.FlagBlocked, Blocked: 100 * us})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 5*us, End: at + 105*us, Size: 4096, Bytes: 4096, Offset: 1000 << 20, Pid: 7})
		res, _ := b.Predict(withWake(flat("disk", 96, 1), 10), withWake(flat("colder", 96, 1), 30), at+105*us, nil)
		return res.PredictedS
	}
	near(t, "a long stretch after short ones", lastAfter(1000)-lastAfter(0), (1000+coldCapNs/1e3*((coldRefUs+30.0)/(coldRefUs+10)-1))*1e-6)

	// 1000 reads, each asleep 100 of its 150 µs, and 10 µs after each a
	// call of 30 µs the page cache served (cached gives it, at at).
	hitAfterEach := func(cached func(i, at int64) *event.Event) float64 {
		b := NewBuilder()
		for i := range int64(1000) {
			at := i * 200 * us
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 150*us, Size: 4096, Bytes: 4096, Offset: i << 20,
				Pid: 7, Tid: 7, Flags: event.FlagBlocked, Blocked: 100 * us})
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 5*us, End: at + 105*us, Size: 4096, Bytes: 4096, Offset: i << 20, Pid: 7})
			b.Add(cached(i, at+160*us))
		}
		res, _ := b.Predict(withWake(flat("disk", 96, 1), 100), withWake(flat("colder", 96, 1), 120), 1000*200*us, nil)
		return res.PredictedS
	}
	// A call the page cache served between two reads, and the gap before
	// it, stay as they were (untar writing each file between its archive's
	// reads); the gap after it moves as the next read's.
	write := hitAfterEach(func(i, at int64) *event.Event {
		return &event.Event{Layer: event.Syscall, Op: event.Write, Start: at, End: at + 30*us, Size: 4096, Bytes: 4096, Offset: i << 12, Inode: 9,
			Pid: 7, Tid: 7}
	})
	near(t, "a cache hit between", write, 1000*196e-6+(1000*50+999*10)*(ratio-1)*1e-6)

	// A read the cache served right after the wait (grep reading a small
	// file to its end), and the gap before it, move with it.
	readToEnd := hitAfterEach(func(i, at int64) *event.Event {
		return &event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 30*us, Size: 4096, Offset: i << 20, Inode: 9,
			Pid: 7, Tid: 7, Flags: event.FlagBlocked}
	})
	near(t, "the read to the end after it", readToEnd, 1000*196e-6+(1000*(50+10+30)+999*10)*(ratio-1)*1e-6)
}

// A stretch of computation after a wait that runs far beyond the thread's
// typical one (stolenTimes its median) is the host's — a virtual
// machine's CPU taken away — beyond that point, and moves with the
// wake-ups as the cold start does; a thread whose every stretch is long
// keeps them (the 1 ms one of TestWakeCostPerWait).
func TestStolenStretchesMoveWithTheWake(t *testing.T) {
	// 1000 reads, each a 150 µs call asleep 100 µs around its request, the
	// next 50 µs after it: 100 µs computing from one wait to the next —
	// and, once stretchMin are counted, every every-th 3 ms more.
	reads := func(every int64) (*Builder, int64) {
		b := NewBuilder()
		var at int64
		for i := range int64(1000) {
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 150*us, Size: 4096, Bytes: 4096, Offset: i << 20,
				Pid: 7, Tid: 7, Flags: event.FlagBlocked, Blocked: 100 * us})
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 5*us, End: at + 105*us, Size: 4096, Bytes: 4096, Offset: i << 20, Pid: 7})
			at += 200 * us
			if every > 0 && i > stretchMin && i%every == 0 {
				at += 3000 * us
			}
		}
		return b, at
	}
	stalls := func(every int64) (n float64) {
		for i := int64(stretchMin + 1); i < 1000; i++ {
			if i%every == 0 {
				n++
			}
		}
		return n
	}
	var typical stretchHist
	for range stretchMin {
		typical.add(100e3)
	}
	median, _ := typical.median()
	stolenAt := math.Max(stolenTimes*median, coldCapNs) / 1e3 // µs
	// Wake-ups of 1000, 700 and 1300 µs: the ratio moves the cold start
	// (179 µs) by less than the 300 µs they differ by.
	factor := (coldRefUs+700.0)/(coldRefUs+1000) - 1
	from, to := withWake(flat("disk", 96, 1), 1000), withWake(flat("warmer", 96, 1), 700)

	b, end := reads(0)
	steady, _ := b.Predict(from, to, end, nil)
	b, end = reads(20)
	stalled, _ := b.Predict(from, to, end, nil)
	// Each stall's stretch (3,100 µs) keeps what lies between coldCapNs
	// and stolenAt; the rest moves — 1,559 µs of its 3,000 more, not
	// 2,737 as with the cold start's alone.
	each := 3000 + factor*(3100-stolenAt+coldCapNs/1e3-100)
	near(t, "the stalls onto a drive that wakes warmer", stalled.PredictedS-steady.PredictedS, stalls(20)*each*1e-6)

	// On the recording drive, or with a wake-up unmeasured, it stays; onto
	// a drive that wakes colder, only its cold start moves.
	same, _ := b.Predict(from, withWake(flat("disk", 96, 1), 1000), end, nil)
	near(t, "the same drive", same.PredictedS, float64(end)/1e9)
	unmeasured, _ := b.Predict(from, flat("unmeasured", 96, 1), end, nil)
	b0, end0 := reads(0)
	steadyUnmeasured, _ := b0.Predict(from, flat("unmeasured", 96, 1), end0, nil)
	near(t, "one drive's unmeasured", unmeasured.PredictedS-steadyUnmeasured.PredictedS, stalls(20)*3000e-6)
	colder := withWake(flat("colder", 96, 1), 1300)
	stalledColder, _ := b.Predict(from, colder, end, nil)
	steadyColder, _ := b0.Predict(from, colder, end0, nil)
	colderFactor := (coldRefUs+1300.0)/(coldRefUs+1000) - 1
	near(t, "the stalls onto a drive that wakes colder", stalledColder.PredictedS-steadyColder.PredictedS, stalls(20)*(3000+colderFactor*(coldCapNs/1e3-100))*1e-6)

	// A stall every fourth stretch: the thread computes them (more than
	// stolenShare of its stretches), and only their cold start moves — but
	// for the first few, before they pass that share.
	b, end = reads(4)
	busy, _ := b.Predict(from, to, end, nil)
	kept := stalls(4) * (3000 + factor*(coldCapNs/1e3-100)) * 1e-6
	if taken := kept - (busy.PredictedS - steady.PredictedS); taken < 0 || taken > 5*-factor*(3100-stolenAt)*1e-6 {
		t.Errorf("many long stretches: %v s of them taken as the host's, want those of the first few at most", taken)
	}
}

// A call that streams sleeps again and again for readahead that overlaps
// (the next window goes while the reader is in the last): a completion
// wakes it as often as it was asleep, and the computation after each of
// those wakes moves with the drives' wake-ups — GNU cp's copy_file_range
// from the USB model to zram, one call of 256 MiB: +77 % → −21 %.
func TestStreamingCallWakesAsOftenAsItSlept(t *testing.T) {
	// 100 requests of 128 KiB, one every 10 ms, 20 ms each (two in
	// flight): the call asleep 980 of its 1,000 ms, 20 ms computing — 98
	// wakes, each followed by less than coldCapNs of it.
	end := int64(1000) * 1000 * us
	b := copyWithReadahead(100, end, 980*1000*us, 10*1000*us, 20*1000*us)
	was := withWake(flat("was", 20_000, 1), 70)
	unmeasured, _ := b.Predict(was, flat("fast", 10, 1), end, nil)
	warmer, _ := b.Predict(was, withWake(flat("fast", 10, 1), 10), end, nil)
	// Each wake's 204 µs would be 157 µs shorter by the ratio; it is 60,
	// the wake-ups' difference.
	near(t, "the computation after its wakes", warmer.PredictedS-unmeasured.PredictedS, -98*60e-6)

	// A bio-based drive serves the stream on the reader's CPU: nothing
	// wakes it there, and its computation stays, the page cache's cost
	// per MiB aside (what moves is its one wait in waitCost, not 98).
	bio := withWake(flat("bio", 10, 1), 10)
	bio.Synchronous = true
	bioUnmeasured := flat("bio", 10, 1)
	bioUnmeasured.Synchronous = true
	onBio, _ := b.Predict(was, bio, end, nil)
	onBioUnmeasured, _ := b.Predict(was, bioUnmeasured, end, nil)
	if d := onBio.PredictedS - onBioUnmeasured.PredictedS; math.Abs(d) > 0.1*98*60e-6+1e-3 { // PredictedS is in whole ms
		t.Errorf("a stream on a bio-based drive moved %v by the wake-ups, want about its one wait's", d)
	}
}

// A call that waits for two requests one after the other wakes twice, and
// each wake-up costs the drive's wait; where the tracer's sleep covered
// only the device's time (the wake-up waited for a CPU the drive's own
// work held), the cost comes out of the computation.
func TestWaitCostPerWait(t *testing.T) {
	w := 10.0
	disk := flat("disk", 106, 1) // 96 µs on the device, 10 waiting
	disk.WaitUs = &w
	ram := flat("ram", 5, 1)
	ram.Synchronous = true
	b := NewBuilder()
	var at int64
	for i := range int64(1000) {
		off := i * 7919 % 1000 << 20
		// 260 µs: asleep for the two requests' 192, computing 68 (20 of it
		// the two wake-ups), then 50 µs before the next call.
		b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 260*us, Size: 8192, Bytes: 8192, Offset: off,
			Pid: 7, Tid: 7, Flags: event.FlagBlocked, Blocked: 192 * us})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 2*us, End: at + 98*us, Size: 4096, Bytes: 4096, Offset: off, Pid: 7})
		b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 110*us, End: at + 206*us, Size: 4096, Bytes: 4096, Offset: off + 4096, Pid: 7})
		at += 310 * us
	}
	res, err := b.Predict(disk, ram, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each call: 50 + 68 − 2 × 10 + 2 × 5.
	near(t, "two waits a call, to a bio-based drive", res.PredictedS, 1000*(50+68-20+10)*1e-6)
}

// Sleep the recording drive does not explain stays where it was (a
// lock's, a journal's) — unless the profile is a cgroup's limits:
// a token bucket's debt is the throttle's, and goes with it.
func TestThrottlesUnexplainedSleepMoves(t *testing.T) {
	b := NewBuilder()
	// 160 µs: asleep 140 around a 100 µs request, computing 20.
	at := sleptReads(b, 1000, 160, 140, 200)
	predict := func(from *drive.Spec) float64 {
		res, err := b.Predict(from, flat("fast", 10, 1), at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	throttle := flat("throttle", 100, 1)
	throttle.Cgroup = "/sys/fs/cgroup/blkio/slow"
	// Each call: 40 + 20 computing and 10 on the new drive, with the 40 µs
	// the recorded latency leaves unexplained asleep, or without it.
	near(t, "from a disk", predict(flat("disk", 100, 1)), 1000*(40+20+40+10)*1e-6)
	near(t, "from a throttle", predict(throttle), 1000*(40+20+10)*1e-6)
	// On the throttle itself, what was recorded.
	res, err := b.Predict(throttle, throttle, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "from the throttle to itself", res.PredictedS, 1000*200e-6-40e-6)
}

// Behind a throttle a program that computes between its reads sleeps less
// than the profile's back-to-back reads say (the token bucket filled
// meanwhile): its sleep is all the throttle's, and the new drive's time
// comes in whole.
func TestThrottleSleepLessThanItsProfile(t *testing.T) {
	b := NewBuilder()
	b.SetRecordedThrottled(true)
	// 160 µs: asleep 100 around a 100 µs request, computing 60, then 40.
	at := sleptReads(b, 1000, 160, 100, 200)
	throttle := flat("throttle", 150, 1)
	throttle.Cgroup = "/sys/fs/cgroup/blkio/slow"
	res, err := b.Predict(throttle, flat("fast", 10, 1), at, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "from the throttle", res.PredictedS, 1000*(60+40+10)*1e-6)
}

// Behind a cgroup's limits a request that finds its device idle for as
// long as the limits take for it goes at the device's own pace (their
// token bucket filled meanwhile); requests closer together wait for it.
func TestThrottleBucketFillsWhileIdle(t *testing.T) {
	onThrottle := func(n, everyUs int64) float64 {
		b := NewBuilder()
		at := sleptReads(b, n, 110, 100, everyUs)
		throttle := flat("throttle", 700, 4) // 1,429 IOPS at any depth, 143 a slice
		throttle.Cgroup = "/sys/fs/cgroup/blkio/slow"
		disk := flat("disk", 100, 1)
		b.SetUnthrottled(nil, disk)
		res, err := b.Predict(disk, throttle, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// A read every 1 ms: the budget refills faster than it is spent, and
	// every read goes at the disk's 100 µs, as recorded.
	near(t, "sparse reads", onThrottle(100, 1000), 100*1000e-6)
	// A read every 200 µs, 100 of them: within a slice's budget.
	near(t, "a burst", onThrottle(100, 200), 100*200e-6)
	// 400 of them: the budget (143, and 0.29 more a read) is spent after
	// 200; the other 200 each wait for their turn, one every 700 µs: 500
	// µs beside the 100 computed and the 100 on the disk.
	near(t, "a burst longer than the budget", onThrottle(400, 200), 400*200e-6+200*500e-6)
}

// The computation after the CPUs idled for a drive runs cold: each
// stretch between two waits takes the host's extra for an idle that long
// (for as long as its measured task) — and on a drive whose waits are
// shorter, the extra for theirs.
func TestComputingAfterIdle(t *testing.T) {
	slow, fast := NewBuilder(), NewBuilder()
	slowAt := chain(slow, 7, 100, 0, 10_000, 9_990, 2_000) // 2 ms of computation after each 10 ms wait
	fastAt := chain(fast, 7, 100, 0, 100, 90, 2_000)
	wake := &drive.IdleWake{TaskUs: 1000, Points: []drive.IdlePoint{{IdleUs: 1000, ExtraUs: 0}, {IdleUs: 4000, ExtraUs: 500}}}
	// saved is what the idles' costs take off the prediction.
	saved := func(b *Builder, at int64, from, to *drive.Spec) float64 {
		var got [2]float64
		for i, w := range []*drive.IdleWake{nil, wake} {
			from.IdleWake, to.IdleWake = w, w
			res, err := b.Predict(from, to, at, nil)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = res.PredictedS
		}
		return got[0] - got[1]
	}
	disk := func() *drive.Spec { return flat("disk", 10_000, 1) }
	// 99 stretches each 0.5 ms colder than on a drive waited for 0.1 ms
	// (the last one, after the last wait, is the trace's end).
	near(t, "onto a fast drive", saved(slow, slowAt, disk(), flat("fast", 100, 1)), 99*500e-6)
	// Waited for 4 ms: as cold.
	near(t, "onto a drive as cold", saved(slow, slowAt, disk(), flat("mid", 4_000, 1)), 0)
	// A bio-based drive's CPUs never idle.
	mid := flat("mid", 4_000, 1)
	mid.Synchronous = true
	near(t, "onto a bio-based drive", saved(slow, slowAt, disk(), mid), 99*500e-6)
	// From a fast drive onto a slow one: each stretch (2 ms, longer than
	// the task) takes the whole extra.
	near(t, "onto a slow drive", saved(fast, fastAt, flat("fast", 100, 1), disk()), -99*500e-6)
	// The same drive: as recorded.
	near(t, "the same drive", saved(slow, slowAt, disk(), disk()), 0)
	// A stretch shorter than the task (and its extra: 1.5 ms cold) was
	// cold its share of the way: 0.3 ms of it, 0.1 ms extra.
	short := NewBuilder()
	shortAt := chain(short, 7, 100, 0, 10_000, 9_990, 300)
	near(t, "short stretches", saved(short, shortAt, disk(), flat("fast", 100, 1)), 99*100e-6)
	// A longer task measured with twice the extra for four times the
	// length: a 2 ms stretch's extra grows with the square root of what of
	// it ran warm (w + 0.5 ms × √(w / 1 ms) = 2 ms).
	wake.LongTaskUs, wake.Points[1].LongExtraUs = 4000, 1000
	extra := 0.0
	for range 50 {
		extra = 500e-6 * math.Sqrt((2e-3-extra)/1e-3)
	}
	near(t, "a stretch longer than the task", saved(slow, slowAt, disk(), flat("fast", 100, 1)), 99*extra)
	wake.LongTaskUs, wake.Points[1].LongExtraUs = 0, 0
	// A profile from a review's numbers has no measure of the machine: the
	// work runs on the recording's, whose measure stands in.
	var got [2]float64
	for i, w := range []*drive.IdleWake{nil, wake} {
		from, review := disk(), flat("review", 100, 1)
		from.IdleWake = w
		res, err := slow.Predict(from, review, slowAt, nil)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = res.PredictedS
	}
	near(t, "onto a drive from a review", got[0]-got[1], 99*500e-6)
}

// A program that slept less than its drive time says, with readahead in
// flight longer than it computed beside it, had windows in flight
// together: that share of the readahead is hidden on a faster drive too,
// proportionally less of it.
func TestParallelReadaheadHidesItsShare(t *testing.T) {
	p := programTime{waitSums: waitSums{asleep: 10, from: 15, fromAhead: 14, cpu: 1, cpuTo: 1, overlap: 4, to: 6, toAhead: 5.6}, whole: 20}
	// Asleep 10 of the 1 + 13 the drive explains beside its computation;
	// 3 of the 4 over ran beside its other readahead: 60 % of it is
	// left on the new drive's 5.6, beside the same computation.
	near(t, "parallel", p.rescale(false), 10-1-13+3*(1-5.6/14)+0.4+(5.6-1))
	// Its readahead ran beside nothing but its computation: the drive's
	// time as the profiles say.
	p.overlap = 1
	near(t, "not parallel", p.rescale(false), 10-1-13+0.4+(5.6-1))
}

// The threads whose writes go past a cgroup v1 throttle: the flushers,
// the journal, and kblockd's high-priority workers sending on a flush
// sequence's steps; not a per-CPU worker dispatching a throttled cgroup's
// held bios, nor a process.
func TestFlushers(t *testing.T) {
	for comm, want := range map[string]bool{
		"kworker/u8:2": true, "jbd2/loop1-8": true, "kworker/1:0H": true, "kworker/0:1H": true,
		"kworker/1:1": false, "kworker/0:2": false, "dd": false, "H": false,
	} {
		if got := pastThrottle(comm); got != want {
			t.Errorf("pastThrottle(%q) = %v", comm, got)
		}
	}
}

// bridge is a drive that takes one command at a time, 1 ms each plus 40
// MB/s, with 128 KiB readahead and 1,280 KiB requests: how big the
// stream's chunks are is most of its rate.
func bridge() *drive.Spec {
	p := &drive.Spec{Name: "bridge", ReadaheadKB: 128, MaxRequestKB: 1280}
	for _, size := range []int64{4 << 10, 128 << 10, 256 << 10, 1 << 20} {
		for _, d := range []int{1, 2, 4} {
			lat := float64(d) * (1000 + float64(size)/40)
			p.Points = append(p.Points, drive.Point{Op: "read", Access: "seq", SizeBytes: size, Depth: d, Jobs: 1, LatUs: lat},
				drive.Point{Op: "read", Access: "rand", SizeBytes: size, Depth: d, Jobs: 1, LatUs: lat})
		}
	}
	return p
}

// A stream goes to the new drive through its reader's window there, not
// the recording drive's cut: twice the drive's window for a file advised
// sequential (cp, cat), a read call's size where larger (dd bs=1M).
func TestReadersWindowOnTheNewDrive(t *testing.T) {
	disk := flat("disk", 50, 1)
	disk.ReadaheadKB, disk.MaxRequestKB = 2560, 1280
	const n, chunk = 40, 1280 << 10
	stream := func(advise bool, callSize int64, dispatcher ...uint32) float64 {
		b := NewBuilder()
		if advise {
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Other, Call: event.CallFadvise, Start: 0, End: us, Offset: -1,
				Pid: 5, Tid: 5, Flags: event.FlagAdviceSequential})
		}
		at := 10 * us
		if callSize == 0 { // one copy, all of it asleep
			end := at + n*1000*us
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallCopyFileRange, Start: at, End: end, Size: n * chunk,
				Bytes: n * chunk, Pid: 5, Tid: 5, Flags: event.FlagBlocked | event.FlagCopySource, Blocked: end - at})
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Call: event.CallCopyFileRange, Start: at, End: end, Size: n * chunk,
				Bytes: n * chunk, Pid: 5, Tid: 5, Flags: event.FlagBlocked, Blocked: end - at})
		}
		for i := range int64(n) {
			s := at + i*1000*us
			if callSize > 0 {
				b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallRead, Start: s, End: s + 1000*us, Size: callSize,
					Bytes: callSize, Offset: i * chunk, Pid: 5, Tid: 5, Flags: event.FlagBlocked, Blocked: 1000 * us})
			}
			r := event.Event{Layer: event.Block, Op: event.Read, Start: s + us, End: s + 999*us, Size: chunk, Bytes: chunk,
				Offset: 1<<30 + i*chunk, Pid: 5, Tid: 5, Flags: event.FlagReadahead}
			if len(dispatcher) > 0 {
				r.Pid, r.Tid, r.Comm, r.Flags = dispatcher[0], dispatcher[0], "kworker/1:2", r.Flags|event.FlagKernel
			}
			b.Add(&r)
		}
		res, err := b.Predict(disk, bridge(), at+n*1000*us, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// Two in flight, one at a time: each chunk its command and its bytes.
	at := func(c float64) float64 { return n * chunk / c * (1000 + c/40) / 1e6 }
	for _, c := range []struct {
		what     string
		advise   bool
		call     int64
		chunk    float64
		kthreads []uint32
	}{
		{"a copy", false, 0, 128 << 10, nil},
		{"a copy of a file advised sequential", true, 0, 256 << 10, nil},
		{"reads of 64 KiB", false, 64 << 10, 128 << 10, nil},
		{"reads of 64 KiB advised sequential", true, 64 << 10, 256 << 10, nil},
		{"reads of 1 MiB", false, 1 << 20, 1 << 20, nil},
		// A throttle holds the bios; a kernel worker issues them.
		{"a copy advised sequential, its readahead dispatched by a kernel thread", true, 0, 256 << 10, []uint32{99}},
		{"reads of 1 MiB, their readahead dispatched by a kernel thread", false, 1 << 20, 1 << 20, []uint32{99}},
	} {
		if got, want := stream(c.advise, c.call, c.kthreads...), at(c.chunk); math.Abs(got/want-1) > 0.02 {
			t.Errorf("%s: %.3f s, want %.3f (%.0f KiB chunks)", c.what, got, want, c.chunk/1024)
		}
	}
}

// A stream its reader leaves ends with a window nobody read: on a drive
// whose window is narrower, that window is the drive's own. Ten video
// players, a process each, read a frame's stream (windows of 128 KiB,
// 512 KiB and 1 MiB on a disk of 8 MiB readahead) and exit, having read
// 96 KiB of it; onto a bridge of 128 KiB windows, which reads what its
// reader reads and a window ahead, the other 1,440 KiB of each stream
// comes off the next player's readahead (896 KiB, the last window's rest,
// where the reader's reads are not known). A player that read on to its file's end (a read
// that came back short) read its last window; a reader whose stream
// jumps on the device where its file's extents do, its reads going on
// in the file, has not left it.
func TestStreamsLeftBehindOnANarrowerDrive(t *testing.T) {
	disk := flat("disk", 50, 1)
	disk.ReadaheadKB, disk.MaxRequestKB = 8192, 1280
	windows := []int64{128 << 10, 512 << 10, 1 << 20}
	type reader struct {
		pid       uint32
		comm      string
		device    int64 // where its stream starts on the device
		jump      int64 // how far the device jumps before its last window
		readToEnd bool
	}
	// predict gives the prediction and how many streams' last windows came
	// off.
	predict := func(to *drive.Spec, rs []reader) (float64, int) {
		var evs []event.Event
		at := int64(0)
		for _, r := range rs {
			dev, file := r.device, int64(0)
			for i, w := range windows {
				if i == len(windows)-1 {
					dev += r.jump
				}
				evs = append(evs, event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallRead, Start: at, End: at + 2000*us, Size: 32 << 10,
					Bytes: 32 << 10, Offset: file, Inode: 42, Pid: r.pid, Tid: r.pid, Comm: r.comm, Flags: event.FlagBlocked, Blocked: 1900 * us})
				evs = append(evs, event.Event{Layer: event.Block, Op: event.Read, Start: at + 10*us, End: at + 1900*us, Size: w, Bytes: w,
					Offset: dev, Pid: r.pid, Tid: r.pid, Comm: r.comm, Flags: event.FlagReadahead})
				dev, file, at = dev+w, file+32<<10, at+3000*us
			}
			if r.readToEnd {
				evs = append(evs, event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallRead, Start: at, End: at + 10*us, Size: 32 << 10,
					Bytes: 100, Offset: file, Inode: 42, Pid: r.pid, Tid: r.pid, Comm: r.comm})
			}
			at += 1000 * us
		}
		res, f, err := streamed(evs, disk, to, at)
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, e := range f.engines {
			left += e.leftStreams
		}
		return res.PredictedS, left
	}
	players := func(toEnd bool) []reader {
		var rs []reader
		for i := range int64(10) {
			rs = append(rs, reader{pid: uint32(100 + i), comm: "ffmpeg", device: (1 + i*7%10) << 28, readToEnd: toEnd})
		}
		return rs
	}
	left, n := predict(bridge(), players(false))
	toEnd, _ := predict(bridge(), players(true))
	// 1,440 KiB of each of nine streams at the bridge's 128 KiB requests,
	// two in flight: 11.25 × 4.2 ms each.
	unread := 9 * 11.25 * bridge().ServiceUs("read", "seq", 128<<10, 2) / 2 / 1e6
	if saved := toEnd - left; n < 9 || saved < 0.8*unread || saved > 1.05*unread {
		t.Errorf("%d streams left: %v s, read to their end: %v s; want %v s less", n, left, toEnd, unread)
	}
	if a, n := predict(disk, players(false)); n > 0 {
		t.Errorf("on the recording drive: %d streams' windows came off (%v s)", n, a)
	}
	// One reader reading on in its file across an extent's end: its stream
	// jumps on the device, but it has not left it.
	tar := []reader{{pid: 5, comm: "tar", device: 1 << 30, jump: 64 << 20}}
	if a, n := predict(bridge(), tar); n > 0 {
		t.Errorf("a file read across two extents: %d streams' windows came off (%v s)", n, a)
	}
}

// sleepEv is an interruptible sleep of thread tid (its own process) from
// startMs to endMs, woken at wokenMs by waker (0: a timer).
func sleepEv(tid uint32, startMs, wokenMs, endMs float64, waker uint32, born bool) *event.Event {
	ms := func(v float64) int64 { return int64(v * 1e6) }
	e := &event.Event{Layer: event.Syscall, Call: event.CallSleep, Op: event.Other, Start: ms(startMs), End: ms(endMs),
		Flags: event.FlagDispatched, Dispatch: ms(wokenMs), Inode: uint64(waker), Offset: -1, Pid: tid, Tid: tid, Comm: "app"}
	if born {
		e.Flags |= event.FlagBorn
	}
	return e
}

// startsAReader adds a program's first thread (1), started by no traced
// thread, which starts threads 2 and 3 at 50 ms (0.02 ms for those in
// early); reader reads for the next 100 ms: ten 10 ms reads, 9.6 ms of
// each the drive's.
func startsAReader(b *Builder, early []uint32, reader uint32) {
	b.Add(sleepEv(1, 0, 0, 0.01, 0, true))
	for _, tid := range []uint32{2, 3} {
		at := 50.0
		if slices.Contains(early, tid) {
			at = 0.02
		}
		b.Add(sleepEv(tid, at, at, at+0.01, 1, true))
	}
	evs, _ := chainEvents(reader, 10, 50_010*us, 10_000, 9_600, 0)
	for i := range evs {
		evs[i].Comm = "app"
		b.Add(&evs[i])
	}
}

// A program of three processes: the first starts the other two at 50 ms
// and sleeps until one of them wakes it at 150 ms, then computes until
// 250 ms. The second reads for those 100 ms (ten 10 ms reads, 9.6 ms of
// each the drive's), the third computes. Woken by the reader, the first
// goes on when the reads are done on the new drive (ten 1.36 ms reads:
// 63.6 ms), as the busy periods say too; woken by the computing process,
// it goes on at 150 ms whatever the drive — the busy periods alone
// would take the reads' saving off the run.
func TestComputationBehindAnothersWaits(t *testing.T) {
	for _, tc := range []struct {
		waker uint32
		want  float64
	}{{2, 0.1636}, {3, 0.25}} {
		b := NewBuilder()
		startsAReader(b, nil, 2)
		b.Add(sleepEv(1, 50, 150.02, 150.03, tc.waker, false))
		res, err := b.Predict(nil, flat("fast", 960, 1), 250e6, nil)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "predicted with the first woken by "+string(rune('0'+tc.waker)), res.PredictedS, tc.want)
	}
}

// A timeout that ended while other threads waited for the drive was,
// as far as the trace tells, a wait for their work (a browser giving up on
// its renderer): on the new drive it ends when their work is done there.
// One while no other thread waited keeps its length.
func TestTimeoutWhileOthersWaited(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sleeps []*event.Event
		want   float64
	}{
		// (The third thread's short sleep, ended by the reader, puts the
		// run on the wake graph.)
		{"a timeout while the reader read", []*event.Event{sleepEv(1, 50.02, 150.02, 150.03, 0, false), sleepEv(3, 50.03, 60, 60.01, 2, false)}, 0.1636},
		// Woken by the thread that computed (as in
		// TestComputationBehindAnothersWaits: 250 ms whatever the drive),
		// then a timeout after the reads.
		{"a timeout after the reads", []*event.Event{sleepEv(1, 50.02, 150.02, 150.03, 3, false), sleepEv(1, 150.5, 200, 200.01, 0, false)}, 0.25},
	} {
		b := NewBuilder()
		startsAReader(b, nil, 2)
		for _, e := range tc.sleeps {
			b.Add(e)
		}
		res, err := b.Predict(nil, flat("fast", 960, 1), 250e6, nil)
		if err != nil {
			t.Fatal(err)
		}
		near(t, tc.name, res.PredictedS, tc.want)
	}
}

// A thread pool's worker that woke from a timeout with nothing to do and
// slept again is idle: when the reader wakes it, it goes on when the
// reads are done on the new drive, not after its timeout (100 ms) —
// and the program's first thread, woken by it, with it.
func TestIdleTimeoutsDoNotHoldAWokenThread(t *testing.T) {
	b := NewBuilder()
	startsAReader(b, []uint32{2}, 3)
	b.Add(sleepEv(2, 0.03, 100, 100, 0, false)) // a timeout
	b.Add(sleepEv(2, 100.05, 150.01, 150.02, 3, false))
	b.Add(sleepEv(1, 50.02, 150.03, 150.04, 2, false))
	res, err := b.Predict(nil, flat("fast", 960, 1), 250e6, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, 0.1637)
}

// The run ends when the traced command does: a thread of it whose timer
// fires after the command's end on the recording (a thread pool's
// delayed task) does not make the new drive's run longer.
func TestTheCommandsEndNotATimersThread(t *testing.T) {
	b := NewBuilder()
	startsAReader(b, []uint32{2}, 3)
	b.Add(sleepEv(1, 50.02, 150.03, 150.04, 3, false))
	b.Add(sleepEv(2, 0.03, 260, 260, 0, false)) // past the command's end
	res, err := b.Predict(nil, flat("fast", 960, 1), 250e6, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "predicted", res.PredictedS, 0.1637)
}

// A drive that compresses takes longer for data that compresses, in
// proportion to what the trace's samples say compression saves of the
// device's data, up to the bench's text; data not sampled, or random, costs
// it nothing more, and a drive that stores all alike is unmoved.
func TestCompressingDrive(t *testing.T) {
	zram := flat("zram", 10, 1)
	zram.Content = &drive.ContentCost{TextSaved: 0.5, ReadUsPerMiB: 1024, WriteUsPerMiB: 2048}
	predicted := func(to *drive.Spec, saved float64, sampled bool) float64 {
		b := NewBuilder()
		if sampled {
			c := &event.Content{Samples: 10, Bytes: 40960, Saved: int64(saved * 40960)}
			b.SetContent([]event.Device{{Name: "vda", Content: c}})
		}
		end := sleptReads(b, 1000, 150, 100, 200) // asleep as long as each request: the drive's time alone moves
		res, err := b.Predict(flat("disk", 100, 1), to, end, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	base := predicted(zram, 0, false)
	perRead := 1024 * 4096.0 / (1 << 20) * 1e-6 // s, for text's share or more
	for _, c := range []struct {
		name    string
		saved   float64
		sampled bool
		extra   float64
	}{
		{"not sampled", 0, false, 0},
		{"random", 0, true, 0},
		{"text", 0.5, true, perRead},
		{"half of the text's", 0.25, true, perRead / 2},
		{"more than the text", 0.9, true, perRead},
	} {
		near(t, c.name, predicted(zram, c.saved, c.sampled)-base, 1000*c.extra)
	}
	plain := flat("zram", 10, 1)
	near(t, "a drive that takes all alike", predicted(plain, 0.5, true), predicted(plain, 0, false))
}

// What a program slept beyond its drive time, within the profile's own
// uncertainty, moves with the drive; only what is beyond that stays (a
// lock, a commit the profile does not know). On the recording drive it is
// what was recorded.
func TestUnexplainedWithinTheProfilesUncertainty(t *testing.T) {
	p := programTime{waitSums: waitSums{asleep: 15, from: 13.3, fromEstimated: 13.3, to: 0.04}, whole: 15}
	// 1.7 over: within 15 % of 13.3 (2.0), all the drive's, at 0.04/13.3.
	near(t, "within", p.rescale(false), 0.04+1.7*0.04/13.3)
	p.asleep, p.whole = 18, 18
	// 4.7 over: 2.0 of it the drive's, 2.7 stays.
	near(t, "beyond", p.rescale(false), 0.04+0.15*13.3*0.04/13.3+(4.7-0.15*13.3))
	ahead := p
	ahead.asleep, ahead.whole, ahead.fromAhead, ahead.toAhead = 15, 15, 13.3, 0.04
	near(t, "all of it readahead", ahead.rescale(false), 0.04+1.7*0.04/13.3)
	p.fromEstimated = 0
	near(t, "recorded latencies, no estimate", p.rescale(false), 0.04+4.7)
	p.same, p.to = true, 13.3
	near(t, "the same drive", p.rescale(false), 18)
}

// Drive time a program did not sleep through ran beside its computation;
// on a bio-based drive its callers do the drive's work themselves, so the
// new drive's time all comes after their computation, none beside it.
func TestSynchronousDriveTimeHidesBehindNothing(t *testing.T) {
	p := programTime{waitSums: waitSums{asleep: 20.6, from: 20.7, to: 0.12, cpu: 0.6}, whole: 21.2}
	near(t, "onto a drive that queues", p.rescale(false), 20.6-20.7+0.12)
	near(t, "onto a bio-based drive", p.rescale(true), 0.12)
	p.asleep, p.whole = 20.9, 21.5 // slept more than its drive time: the rest stays either way
	near(t, "slept more, onto a bio-based drive", p.rescale(true), 0.12+0.2)
}

// lateWritebackCopy is a copy recorded on a drive that took 20 ms a MiB:
// one copy_file_range call of process 2 over 300 sequential 1 MiB reads
// (6 s), and from 5 s on a flusher writing 50 MiB back far away, between
// the reads. With sync, process 3 syncs over the writeback.
func lateWritebackCopy(writeback, sync bool) []event.Event {
	var evs []event.Event
	const n = 300
	for k := int64(0); k < n; k++ {
		s := k * 20e6
		evs = append(evs, event.Event{Layer: event.Block, Op: event.Read, Start: s, End: s + 19e6, Size: 1 << 20, Bytes: 1 << 20,
			Offset: 1<<30 + k<<20, Pid: 2, Tid: 2})
		if writeback && s >= 5e9 {
			evs = append(evs, event.Event{Layer: event.Block, Op: event.Write, Start: s + 5e6, End: s + 15e6, Size: 1 << 20, Bytes: 1 << 20,
				Offset: 3<<30 + (k-250)<<20, Pid: 40, Tid: 40, Comm: "kworker/u8:1", Flags: event.FlagKernel})
		}
	}
	evs = append(evs, event.Event{Layer: event.Syscall, Op: event.Write, Call: event.CallCopyFileRange, Start: 0, End: n * 20e6, Size: n << 20, Bytes: n << 20,
		Pid: 2, Tid: 2, Comm: "cp", Flags: event.FlagBlocked, Blocked: n * 19e6})
	if sync {
		evs = append(evs, event.Event{Layer: event.Syscall, Op: event.Flush, Start: 4.9e9, End: 6.1e9, Pid: 3, Tid: 3, Comm: "sync", Flags: event.FlagBlocked, Blocked: 1.2e9})
	}
	return evs
}

// Writeback the recording held only because it lasted longer than the
// work does on the new drive comes after the work there: between a disk's
// reads it would cost a seek each. Kept or streamed (then predicted again
// with SetWritebackAfter), the copy predicts as the same copy with no
// writeback at all; where the new drive is slower, or a sync waited for the
// writes, they stay.
func TestLateWritebackLeftOut(t *testing.T) {
	disk, _ := diskAndFlash()
	from := flat("was", 20000, 1)
	kept := func(evs []event.Event, to *drive.Spec) *Result {
		b := NewBuilder()
		for i := range evs {
			b.Add(&evs[i])
		}
		res, err := b.Predict(from, to, 6e9, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	noted := func(r *Result) bool {
		return strings.Contains(strings.Join(r.Notes, " "), "writeback of 50 MiB from 5.0 s on")
	}
	clean := kept(lateWritebackCopy(false, false), disk)
	got := kept(lateWritebackCopy(true, false), disk)
	if !(clean.PredictedS < 1) || got.PredictedS != clean.PredictedS || !noted(got) {
		t.Errorf("copy onto a disk: %v s (notes %q), want %v s as without the writeback, and a note", got.PredictedS, got.Notes, clean.PredictedS)
	}

	first, _, err := streamed(lateWritebackCopy(true, false), from, disk, 6e9)
	if err != nil {
		t.Fatal(err)
	}
	at, ok := first.LateWriteback()
	if !ok || at < int64(first.PredictedS*1e9) || at > 5e9 {
		t.Fatalf("streamed: late writeback %v at %d, predicted %v s", ok, at, first.PredictedS)
	}
	if first.PredictedS < clean.PredictedS*1.1 {
		t.Errorf("streamed with the writeback: %v s, want the writes between reads to cost more than %v s", first.PredictedS, clean.PredictedS)
	}
	b := NewBuilder()
	b.SetWritebackAfter(at)
	b.Stream([]To{{Profile: disk}}, []From{{Profile: from}})
	for _, e := range lateWritebackCopy(true, false) {
		b.Add(&e)
	}
	again, err := b.Predict(from, disk, 6e9, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := again.LateWriteback(); ok || again.PredictedS != got.PredictedS || !noted(again) {
		t.Errorf("streamed again: %+v, want %v s", again, got.PredictedS)
	}

	if slower := kept(lateWritebackCopy(true, false), flat("slower", 40000, 1)); noted(slower) || !(slower.PredictedS > 6) {
		t.Errorf("onto a slower drive: %v s, notes %q; want the writeback kept", slower.PredictedS, slower.Notes)
	}
	if synced := kept(lateWritebackCopy(true, true), disk); noted(synced) {
		t.Errorf("a sync waited for the writeback: notes %q, want it kept", synced.Notes)
	}
}

// stealEv is what the host took of thread tid's time on a CPU (ns) in a
// record from start to end (µs).
func stealEv(tid uint32, startUs, endUs, takenNs int64) *event.Event {
	return &event.Event{Layer: event.Syscall, Call: event.CallSteal, Op: event.Other, Flags: event.FlagBlocked,
		Start: startUs * us, End: endUs * us, Blocked: takenNs, Offset: -1, Pid: tid, Tid: tid, Comm: "app"}
}

// What the host took of a thread's time on a CPU comes out of the
// prediction on every drive, the recording's own included: between
// drive-bound calls, and in computation outside any busy period. Records
// come in any order; a thread's records do not touch another's.
func TestHostsTakingsLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		add    func(b *Builder) int64
		taken  float64 // s
		toFast float64 // s, without the takings
	}{{
		// 1000 reads of 100 µs, 50 µs between them; 10 µs taken in each
		// gap but the first, added last to first.
		name: "between drive-bound calls",
		add: func(b *Builder) int64 {
			end := chain(b, 7, 1000, 0, 100, 96, 50)
			for i := int64(999); i >= 1; i-- {
				b.Add(stealEv(7, i*150-45, i*150-5, 10*us))
			}
			b.Add(stealEv(8, 0, 140_000, 100_000*us)) // another thread's, with no items
			return end
		},
		taken:  999 * 10e-6,
		toFast: 1000 * (50 + 4 + 19.2) * 1e-6,
	}, {
		// Reads the cache served, 100 µs of computation each, then one
		// that waits: 2 ms taken among the cached ones.
		name: "computation outside the busy periods",
		add: func(b *Builder) int64 {
			at := int64(0)
			for i := range 100 {
				b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 100*us, Size: 4096, Bytes: 4096,
					Offset: int64(i) * 4096, Pid: 7, Tid: 7, Flags: event.FlagBlocked})
				at += 100 * us
			}
			for i := range int64(20) {
				b.Add(stealEv(7, i*500, i*500+400, 100*us))
			}
			return chain(b, 7, 1, at, 100, 96, 0)
		},
		taken:  2e-3,
		toFast: 10e-3 + (4+19.2)*1e-6,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder()
			end := tc.add(b)
			same := flat("same", 96, 1)
			res, err := b.Predict(same, same, end, nil)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "on the recording drive", res.PredictedS, float64(end)/1e9-tc.taken)
			res, _ = b.Predict(same, flat("fast", 19.2, 1), end, nil)
			near(t, "on a faster drive", res.PredictedS, tc.toFast-tc.taken)
			if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "host took") }) {
				t.Errorf("no note of the host's takings: %q", res.Notes)
			}
		})
	}
}

func TestTakenLogOutOfOrder(t *testing.T) {
	var l takenLog
	for _, e := range []struct{ end, ns int64 }{{5_000, 1}, {1_000, 2}, {9_000, 4}, {3_000, 8}, {2_500_000, 16}, {2_000_000, 32}} {
		ev := stealEv(1, 0, 0, e.ns)
		ev.End = e.end
		l.add(ev)
	}
	for _, q := range []struct {
		from, to int64
		want     float64
	}{{0, 1_000_000 * us, 63}, {-1, 999, 0}, {999, 1_000, 2}, {1_000, 4_000, 8}, {4_000, 9_000, 5}, {9_000, 2_000_000, 32}, {2_000_000, 2_500_000, 16}} {
		if got := l.between(1, q.from, q.to); got != q.want {
			t.Errorf("(%d, %d]: %v, want %v", q.from, q.to, got, q.want)
		}
	}
	if l.between(2, 0, 1e9) != 0 || l.total != 63 {
		t.Errorf("another thread %v, total %d", l.between(2, 0, 1e9), l.total)
	}
}

// A flusher's write that came while one of a writer's calls was out and
// completed in its next is the next one's alone: the first returned
// before it, without waiting for it. Coming during the first call or
// between the two, it is the same prediction.
func TestAnothersRequestIsTheCallsItCompletedIn(t *testing.T) {
	predict := func(arrivesUs int64) float64 {
		b := NewBuilder()
		var at int64
		for i := range int64(100) {
			// The writer's own synchronous write, then a call that sleeps
			// until the flusher's write completes: asleep as long as the
			// two took.
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Start: at, End: at + 1000*us, Size: 4096, Bytes: 4096, Offset: i << 20,
				Pid: 2, Tid: 2, Flags: event.FlagBlocked, Blocked: 980 * us})
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 10*us, End: at + 990*us, Size: 4096, Bytes: 4096, Offset: i << 20,
				Pid: 2, Tid: 2, Comm: "dd", Flags: event.FlagSync})
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + arrivesUs*us, End: at + 1490*us, Size: 64 << 10, Bytes: 64 << 10,
				Offset: 1<<30 + i<<20, Pid: 40, Comm: "kworker/1:1H", Flags: event.FlagKernel})
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Start: at + 1000*us, End: at + 1500*us, Size: 4096, Bytes: 4096, Offset: i<<20 + 4096,
				Pid: 2, Tid: 2, Flags: event.FlagBlocked, Blocked: 485 * us})
			at += 2000 * us
		}
		// The recording drive's profile gives the flusher's write the 485
		// µs it took arriving alone.
		res, err := b.Predict(flat("was", 485, 1), flat("fast", 20, 1), at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	near(t, "arriving during the first call", predict(500), predict(1005))
	// Each pair computes 535 µs, and waits the fast drive's 20 µs twice.
	near(t, "arriving between the two", predict(1005), 100*(535+2*20)*1e-6)
}

// Behind a cgroup's limits, the budget refills while the device idles
// between a thread's requests: its wake-up and computation after each
// wait, which run as the new drive's wake-ups let them. A recording on a
// drive that woke its threads slowly had wider gaps than they are behind
// the throttle.
func TestThrottleBudgetRefillsAtTheNewDrivesPace(t *testing.T) {
	// 2,000 reads, one every 1000 µs: 900 µs between one's completion and
	// the next.
	b := NewBuilder()
	at := sleptReads(b, 2000, 110, 100, 1000)
	predict := func(fromWake float64, limited bool) float64 {
		to := withWake(flat("throttle", 700, 4), 8) // 1,429 IOPS at any depth, 143 a slice
		if limited {
			to.Cgroup = "/sys/fs/cgroup/blkio/slow"
		} else {
			to = withWake(flat("unlimited", 100, 1), 8)
		}
		disk := withWake(flat("disk", 100, 1), fromWake)
		b.SetUnthrottled(nil, withWake(flat("disk", 100, 1), 8))
		res, err := b.Predict(disk, to, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// Woken as fast on both: each read finds 1000 µs since the last, more
	// than the limits' 700: no read waits.
	near(t, "the same wake-ups", predict(8, true), predict(8, false))
	// Recorded on a drive that woke its threads in 600 µs: the gaps' first
	// 600 µs at 16/608 of it — 584 µs shorter, within the 592 the wake-ups
	// differ by — and the disk's 100: each read finds 416 µs, and once the
	// budget's 143 reads are spent (after about 350) waits the rest of the
	// limits' 700.
	waits := predict(600, true) - predict(600, false)
	if lo, hi := float64(2000-365)*284e-6, float64(2000-340)*284e-6; waits < lo || waits > hi {
		t.Errorf("waits for the budget = %.3f s, want %.3f–%.3f", waits, lo, hi)
	}
	// In 92 µs: the ratio would take 504 µs off each gap; the wake-ups'
	// difference takes 84, and each read finds 916 µs: none waits.
	near(t, "woken 84 µs later", predict(92, true), predict(92, false))
}

// What a thread did between and in its items is computation — that may
// run beside readahead and runs colder after a slow drive's waits — only
// where it was on a CPU: an uninterruptible sleep no request explains (a
// lock another thread held while it waited for the drive) and a sleep on
// another thread between two items are not. Counted as computation,
// Chromium's processes on the HDD model computed 2.3 s beside readahead
// where they computed 0.6, and that hid the VM disk's whole readahead
// (its start predicted there at −29 %; −19 % without).
func TestSleepIsNoComputation(t *testing.T) {
	var g wakeGraph
	a := &accumulator{wakes: &g}
	a.init()
	item := func(kind itemKind, start, end, blocked int64, bound bool) *item {
		it := &item{call: call{start: start * us, end: end * us, blocked: blocked * us, pid: 9, tid: 9, kind: kind, reads: true}, bound: bound}
		if bound {
			it.asleep = float64(blocked * us)
			it.fromAheadNs, it.toAheadNs = 5000*float64(us), 5000*float64(us)
		}
		return it
	}
	// A fault that waited 700 µs for its readahead, 100 µs of
	// computation, a futex 1 ms, 100 µs more, a lock held 2 ms by another
	// thread, then the next fault.
	a.add(item(kindWait, 0, 700, 700, true))
	g.add(&event.Event{Layer: event.Syscall, Call: event.CallSleep, Start: 800 * us, End: 1800 * us, Pid: 9, Tid: 9})
	a.add(item(kindWait, 1900, 3900, 2000, false))
	a.add(item(kindWait, 3900, 4600, 700, true))
	if got := a.pids[9].cpu; math.Abs(got-200*float64(us)) > 1 {
		t.Errorf("computation = %.0f µs, want 200", got/float64(us))
	}
}

// A thread's computation after an item runs beside the readahead that
// item set going only as long as that readahead lasts: on the recording
// drive its own, on the new drive the new drive's — 2 ms of computation
// after a fault hides 5 ms of a disk's readahead for 2 ms, and of a fast
// drive's 0.5 ms no more than those 0.5.
func TestComputationBesideTheNewDrivesReadahead(t *testing.T) {
	a := &accumulator{wakes: &wakeGraph{}}
	a.init()
	fault := func(start int64) *item {
		return &item{call: call{start: start * us, end: (start + 700) * us, blocked: 700 * us, pid: 9, tid: 9, kind: kindWait, reads: true},
			bound: true, asleep: 700 * float64(us), fromAheadNs: 5000 * float64(us), toAheadNs: 500 * float64(us)}
	}
	a.add(fault(0))
	a.add(fault(2700))
	p := a.pids[9]
	near(t, "beside the recording drive's readahead (µs)", p.cpu/float64(us), 2000)
	near(t, "beside the new drive's (µs)", p.cpuTo/float64(us), 500)
}

// A call that read a file page by page on a bio-based drive — each page
// its own bio, one right after the other (cp on zram, in runs of 64) —
// reads it on a drive with a request queue in the requests the block
// layer merges them into: the bytes at the drive's streaming rate, not a
// request's latency per page. Pages read by calls of their own (direct
// I/O, one page a call) are a request each anywhere.
func TestPagesOfOneCallMerge(t *testing.T) {
	dev := event.Dev{Major: 252}
	predict := func(direct bool) float64 {
		b := NewBuilder()
		b.SetSynchronous([]event.Dev{dev})
		const pages = 256
		at := int64(0)
		if !direct {
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 0, End: pages * 3 * us, Size: pages * 4096, Bytes: pages * 4096,
				Dev: dev, Inode: 5, Offset: 0, Pid: 6, Tid: 6, Flags: event.FlagBlocked})
		}
		for i := range int64(pages) {
			if direct {
				b.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 3*us, Size: 4096, Bytes: 4096,
					Dev: dev, Inode: 5, Offset: i * 4096, Pid: 6, Tid: 6, Flags: event.FlagBlocked | event.FlagDirect})
			}
			b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: at + 500, End: at + 2500, Size: 4096, Bytes: 4096,
				Offset: i * 4096, Dev: dev, Pid: 6, Tid: 6})
			at += 3 * us
		}
		zram := flat("zram", 2, 1)
		zram.Synchronous = true
		disk := flat("disk", 1000, 1)
		disk.ReadaheadKB, disk.MaxRequestKB = 128, 128
		res, err := b.Predict(zram, disk, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// The first page a request's 1 ms, the other 255 at 128 KiB every 0.5
	// ms (two requests in flight), besides the call's computation.
	if got := predict(false); got > 0.006 {
		t.Errorf("a call's pages, one bio each, on a disk = %.4f s, want about 0.0052", got)
	}
	if got := predict(true); got < 0.2 {
		t.Errorf("a page a call on a disk = %.4f s, want about 0.256", got)
	}
}

// An fsync's journal write goes into an idle device, after the file's
// data: the journal's thread writes it, but it is waited for alone — a
// command on a drive that takes one at a time, not a share of a stream
// written back behind others (a quarter of one at four in flight here);
// recorded on a request-based device or a bio-based one (zram).
func TestJournalWriteAloneIsACommand(t *testing.T) {
	for _, bios := range []bool{false, true} {
		testJournalWriteAlone(t, bios)
	}
}

func testJournalWriteAlone(t *testing.T, bios bool) {
	predict := func(journalComm string, journalPid uint32, after int64) float64 {
		b := NewBuilder()
		was := flat("was", 100, 1)
		if bios {
			b.SetSynchronous([]event.Dev{{}})
			was.Synchronous = true
		}
		var at int64
		for i := range int64(20) {
			b.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Call: event.CallFsync, Start: at, End: at + 400*us, Pid: 2, Tid: 2,
				Flags: event.FlagBlocked, Blocked: 400 * us})
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: at + 10*us, End: at + 110*us, Size: 8192, Bytes: 8192,
				Offset: 1<<30 + i*1<<20, Pid: 2, Tid: 2, Comm: "dd", Flags: event.FlagSync})
			j := at + 110*us + after
			b.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: j, End: j + 100*us, Size: 8192, Bytes: 8192,
				Offset: 4<<30 + i*8192, Pid: journalPid, Tid: journalPid, Comm: journalComm, Flags: event.FlagKernel | event.FlagMeta | event.FlagSync})
			at += 1000 * us
		}
		res, err := b.Predict(was, flat("one command", 1000, 1), at, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	// 1,000 µs each, as the same write by the process itself; the code
	// before took 250 (0.015 s short in all).
	near(t, fmt.Sprintf("the journal's write alone (bio-based: %v)", bios), predict("jbd2/vdb-8", 99, 100*us), predict("dd", 2, 100*us))
	// Sent as the last request completed, it is a stream's: its share
	// (on a bio-based device, a stream is its thread's bios one after
	// another: TestWritebackMerges).
	if bios {
		return
	}
	if alone, stream := predict("jbd2/vdb-8", 99, 100*us), predict("jbd2/vdb-8", 99, 2*us); alone-stream < 0.01 {
		t.Errorf("bio-based %v: the journal's write alone %.4f s, right behind the data %.4f s: want it a command's 0.75 ms more each", bios, alone, stream)
	}
}
