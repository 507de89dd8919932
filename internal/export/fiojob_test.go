package export

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

// layerOf profiles synthetic syscall-layer I/O in a steady state: n I/Os
// of the sizes given in turn, sequential or random, a read every readEvery
// (0: none), depth in flight (from depth threads, or one async queue), each
// followed by think time in its thread.
func layerOf(t *testing.T, n int, sizes []int64, sequential bool, readEvery int, depth int, async bool, thinkNs int64) (*profile.Layer, JobCounter) {
	t.Helper()
	b := profile.NewBuilder(profile.Options{})
	var c JobCounter
	var off int64
	const service = int64(100_000)
	step := (service + thinkNs) / int64(depth)
	for i := 0; i < n; i++ {
		size := sizes[i%len(sizes)]
		op, call := event.Write, event.CallPwrite64
		if readEvery > 0 && i%readEvery == 0 {
			op, call = event.Read, event.CallPread64
		}
		if async {
			call = map[event.Op]event.Call{event.Read: event.CallAioRead, event.Write: event.CallAioWrite}[op]
		}
		o := off
		if !sequential {
			o = int64(i*7919%4096) << 20
		}
		tid := uint32(100)
		if !async {
			tid += uint32(i % depth)
		}
		start := 1_000_000 + int64(i)*step
		e := event.Event{Layer: event.Syscall, Op: op, Call: call, Start: start, End: start + service, Dev: event.Dev{Major: 8, Minor: 1},
			Inode: 5, Offset: o, Size: size, Bytes: size, Pid: 100, Tid: tid, Comm: "app"}
		b.Add(&e)
		c.Add(&e)
		off += size
	}
	return b.Finish().Syscall, c
}

func jobFor(t *testing.T, l *profile.Layer, c JobCounter) Job {
	t.Helper()
	p := JobPart{Name: "app", Layer: l}
	c.Fill(&p)
	j, ok := JobOf(1, p)
	if !ok {
		t.Fatal("no job")
	}
	return j
}

func TestJobOfShapes(t *testing.T) {
	// Random 4 KiB reads, one at a time, with 400 µs of think time.
	l, c := layerOf(t, 2000, []int64{4096}, false, 1, 1, false, 400_000)
	j := jobFor(t, l, c)
	if j.RW != "randread" || j.BSSplit != "4k/100" || j.IODepth != 1 || j.NumJobs != 1 || j.IOEngine != "psync" {
		t.Errorf("random QD1: %+v", j)
	}
	if j.ThinkTimeUs < 350 || j.ThinkTimeUs > 450 {
		t.Errorf("think time %d µs; want about 400", j.ThinkTimeUs)
	}
	if j.IOSizeBytes != 2000*4096 || j.SizeBytes < 64<<20 {
		t.Errorf("io_size %d, size %d", j.IOSizeBytes, j.SizeBytes)
	}

	// Sequential 1 MiB writes through a libaio queue of 8: iodepth, not
	// threads, and no think time.
	l, c = layerOf(t, 800, []int64{1 << 20}, true, 0, 8, true, 0)
	j = jobFor(t, l, c)
	if j.RW != "write" || j.BSSplit != "1m/100" || j.IOEngine != "libaio" || j.IODepth != 8 || j.NumJobs != 1 || j.ThinkTimeUs != 0 {
		t.Errorf("sequential QD8 libaio: %+v", j)
	}

	// Four threads of synchronous 70/30 random I/O, 4 and 64 KiB: numjobs.
	l, c = layerOf(t, 4000, []int64{4096, 4096, 4096, 65536}, false, 0, 4, false, 0)
	j = jobFor(t, l, c)
	if j.NumJobs != 4 || j.IODepth != 1 || j.BSSplit != "4k/75:64k/25" {
		t.Errorf("4 threads: %+v", j)
	}
}

func TestJobMixAndPartialRandom(t *testing.T) {
	// Every third I/O a read (33 %), half of them sequential.
	b := profile.NewBuilder(profile.Options{})
	var c JobCounter
	var seq int64
	for i := 0; i < 3000; i++ {
		op := event.Write
		if i%3 == 0 {
			op = event.Read
		}
		off := seq
		if i%2 == 1 {
			off = int64(i*104729%100000) << 16
		} else {
			seq += 8192
		}
		e := event.Event{Layer: event.Syscall, Op: op, Call: event.CallPread64, Start: int64(i) * 1_000_000, End: int64(i)*1_000_000 + 50_000,
			Dev: event.Dev{Major: 8, Minor: 1}, Inode: 5, Offset: off, Size: 8192, Bytes: 8192, Pid: 1, Tid: 1}
		b.Add(&e)
		c.Add(&e)
	}
	j := jobFor(t, b.Finish().Syscall, c)
	if j.RW != "randrw" || j.RWMixRead != 33 || j.PercentRandom < 40 || j.PercentRandom > 60 || j.BSSplit != "8k/100" {
		t.Errorf("mixed: %+v", j)
	}
}

func TestBssplitSumsTo100(t *testing.T) {
	h := []profile.SizeBucket{{From: 512, Count: 1}, {From: 4096, Count: 3}, {From: 8192, Count: 3}, {From: 16384, Count: 3}}
	got := bssplit(h)
	sum := 0
	for _, part := range strings.Split(got, ":") {
		size, pct, ok := strings.Cut(part, "/")
		n, err := strconv.Atoi(pct)
		if !ok || err != nil || size == "" {
			t.Fatalf("%q in %q", part, got)
		}
		sum += n
	}
	if sum != 100 || !strings.HasPrefix(got, "4k/") {
		t.Errorf("bssplit %q sums to %d", got, sum)
	}
}

func TestWriteFioJobRunsPhasesInOrder(t *testing.T) {
	l1, c1 := layerOf(t, 500, []int64{4096}, false, 1, 1, false, 0)
	l2, c2 := layerOf(t, 100, []int64{1 << 20}, true, 0, 1, false, 0)
	p1 := JobPart{Name: "phase1", Layer: l1, Match: "RND4K Q1T1"}
	p2 := JobPart{Name: "phase 2", Layer: l2, StartS: 1, EndS: 2}
	c1.Fill(&p1)
	c2.Fill(&p2)
	var out bytes.Buffer
	jobs, err := WriteFioJob(&out, "trace x", []JobPart{p1, p2, {Name: "empty"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if len(jobs) != 2 || strings.Count(s, "stonewall") != 1 || !strings.Contains(s, "[2-phase_2]") || !strings.Contains(s, "direct=1") {
		t.Errorf("%d jobs:\n%s", len(jobs), s)
	}
	if strings.Index(s, "[1-phase1]") > strings.Index(s, "stonewall") {
		t.Error("stonewall before the first job")
	}
}
