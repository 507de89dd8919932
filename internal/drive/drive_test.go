package drive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// grid is a drive taking 50 µs + 1 µs per KiB at one request in flight,
// twice that at four.
func grid() *Spec {
	p := &Spec{Name: "g"}
	for _, d := range []int{1, 4} {
		for _, s := range []int64{4096, 65536} {
			lat := (50 + float64(s)/1024) * float64(map[int]int{1: 1, 4: 2}[d])
			p.Points = append(p.Points, Point{Op: "read", Access: "rand", SizeBytes: s, Depth: d, Jobs: 1, LatUs: lat})
		}
	}
	return p
}

// A saturated drive (a throttle) moves the same MB/s at every depth:
// between two measured depths too, its latency growing with the depth.
func TestServiceSaturated(t *testing.T) {
	p := &Spec{}
	for _, d := range []int{1, 4, 32} {
		p.Points = append(p.Points, Point{Op: "read", Access: "seq", SizeBytes: 1 << 20, Depth: d, Jobs: 1, LatUs: float64(d) * 26000})
	}
	for _, q := range []float64{2, 8, 16} {
		if got := p.MBs("read", "seq", 1<<20, q); math.Abs(got-40.33) > 0.01 {
			t.Errorf("Q%v: %v MB/s, want the 40.33 of every measured depth", q, got)
		}
	}
}

func TestServiceInterpolates(t *testing.T) {
	p := grid()
	for _, c := range []struct {
		size     int64
		inflight float64
		want     float64
	}{
		{4096, 1, 54},                 // measured
		{65536, 4, 2 * 114},           // measured
		{16384, 1, 54 + (114-54)*0.2}, // 16 KiB is a fifth of the way from 4 to 64 KiB
		{4096, 2, 54 * math.Sqrt2},    // log₂ 2 is halfway from 1 to 4: the latencies' geometric mean
		{4096, 8, 2 * 54 * 2},         // beyond the grid: saturated, Little's law
		{512, 1, 54},                  // below the smallest size: as at it
		{1 << 20, 1, 114 + (1<<20-65536)/(float64(65536-4096)/60)}, // beyond the largest: its transfer rate
	} {
		if got := p.ServiceUs("read", "rand", c.size, c.inflight); math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("%d B at %v in flight: %v µs, want %v", c.size, c.inflight, got, c.want)
		}
	}
	// No sequential reads measured: the random ones stand in.
	if got := p.ServiceUs("read", "seq", 4096, 1); math.Abs(got-54) > 1e-9 {
		t.Errorf("seq stand-in: %v", got)
	}
	if got := p.ServiceUs("write", "seq", 4096, 1); !math.IsNaN(got) {
		t.Errorf("no writes measured, yet %v", got)
	}
}

// AmorphousDiskMark's four numbers make a coarse profile that gives them
// back.
func TestCoarse(t *testing.T) {
	p, err := Coarse("adm", []float64{6300, 2100, 900, 60}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		access   string
		size     int64
		inflight float64
		want     float64
	}{{"seq", 1 << 20, 8, 6300}, {"seq", 1 << 20, 1, 2100}, {"rand", 4096, 64, 900}, {"rand", 4096, 1, 60}} {
		if got := p.MBs("read", c.access, c.size, c.inflight); math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("%s %d Q%v: %v MB/s, want %v", c.access, c.size, c.inflight, got, c.want)
		}
	}
	if p.Headline("read") != 6300 {
		t.Errorf("headline %v", p.Headline("read"))
	}
	if _, err := Coarse("x", []float64{1, 2}, nil); err == nil || !strings.Contains(err.Error(), "four") {
		t.Errorf("error %v", err)
	}
}

func TestReadRejects(t *testing.T) {
	for _, in := range []string{`{}`, `{"points":[{"op":"read","access":"seq","size_bytes":0,"depth":1,"lat_mean_us":1}]}`, `{"name":1}`, `{"extra":true}`} {
		if _, err := Read(strings.NewReader(in)); err == nil {
			t.Errorf("%s read as a profile", in)
		}
	}
}

// A buffered sequential read goes to a drive in its own readahead chunks,
// two windows' worth of them in flight, at that shape's rate; a profile that
// does not say its readahead cannot tell.
func TestStreamUs(t *testing.T) {
	p := &Spec{ReadaheadKB: 8192, MaxRequestKB: 4096}
	for _, d := range []int{1, 4} {
		for _, size := range []int64{1 << 20, 4 << 20} {
			// 1000 MB/s at one in flight, 2000 MB/s at four.
			rate := 1000.0 * float64(d+2) / 3
			p.Points = append(p.Points, Point{Op: "read", Access: "seq", SizeBytes: size, Depth: d, Jobs: 1,
				LatUs: float64(size) * float64(d) / rate})
		}
	}
	// 4 MiB chunks, two windows of two in flight: depth 4's latency, a
	// quarter of it a chunk; 128 KiB takes 1/32 of that.
	lat4 := 4 * 4.0 * (1 << 20) / 2000
	if got, want := p.StreamUs(128<<10, 0), lat4/4/32; math.Abs(got-want) > 1e-6*want {
		t.Errorf("StreamUs(128 KiB) = %v µs, want %v", got, want)
	}
	// A reader's window of 1 MiB: 1 MiB chunks, two in flight (depth 1
	// and 4 between them: 1000 MB/s to 2000 MB/s on a log scale).
	lat2 := (1 << 20) * 2 / (1000 * math.Sqrt(2))
	if got, want := p.StreamUs(4<<20, 1<<20), lat2/2*4; math.Abs(got-want) > 1e-6*want {
		t.Errorf("StreamUs(4 MiB, through 1 MiB) = %v µs, want %v", got, want)
	}
	if got := (&Spec{Points: p.Points}).StreamUs(128<<10, 0); !math.IsNaN(got) {
		t.Errorf("without readahead settings: %v, want NaN", got)
	}
}

// A reader's readahead window: the drive's, twice it when advised
// sequential, widened by a larger read up to the largest request.
func TestReadWindow(t *testing.T) {
	usb := &Spec{ReadaheadKB: 128, MaxRequestKB: 1280}
	for _, c := range []struct {
		call       int64
		sequential bool
		want       int64
	}{
		{0, false, 128 << 10},        // head -c, sendfile, a page fault
		{64 << 10, false, 128 << 10}, // dd bs=64K
		{0, true, 256 << 10},         // cp
		{128 << 10, true, 256 << 10}, // cat
		{256 << 10, false, 256 << 10},
		{1 << 20, false, 1 << 20},
		{8 << 20, true, 1280 << 10}, // no wider than the largest request
	} {
		if got := usb.ReadWindow(c.call, c.sequential); got != c.want {
			t.Errorf("call %d, sequential %v: %d, want %d", c.call, c.sequential, got, c.want)
		}
	}
	disk := &Spec{ReadaheadKB: 8192, MaxRequestKB: 1280}
	if got := disk.ReadWindow(1<<20, true); got != 16<<20 {
		t.Errorf("a window wider than the largest request: %d, want twice it", got)
	}
	if got := (&Spec{ReadaheadKB: 128}).ReadWindow(1<<20, false); got != 128<<10 {
		t.Errorf("largest request unknown: %d, want the drive's window", got)
	}
}

// Writeback goes at the largest request's rate at the deepest queue
// measured, whatever size the recording's requests were.
func TestWritebackUs(t *testing.T) {
	p := &Spec{MaxRequestKB: 1024}
	for _, d := range []int{1, 32} {
		for _, size := range []int64{64 << 10, 1 << 20} {
			// 500 MB/s at one in flight, 1500 MB/s at 32.
			rate := map[int]float64{1: 500, 32: 1500}[d]
			p.Points = append(p.Points, Point{Op: "write", Access: "seq", SizeBytes: size, Depth: d, Jobs: 1,
				LatUs: float64(size) * float64(d) / rate})
		}
	}
	if got, want := p.WritebackUs(13<<10), float64(13<<10)/1500; math.Abs(got-want) > 1e-6*want {
		t.Errorf("WritebackUs(13 KiB) = %v µs, want %v", got, want)
	}
	if got := (&Spec{}).WritebackUs(4096); !math.IsNaN(got) {
		t.Errorf("without writes: %v, want NaN", got)
	}
	// Unmerged, a 64 KiB request is its share of 32 in flight; a smaller
	// one is never cheaper than its bytes at the merged rate.
	if got, want := p.WritebackEachUs(64<<10), float64(64<<10)/1500; math.Abs(got-want) > 1e-6*want {
		t.Errorf("WritebackEachUs(64 KiB) = %v µs, want %v", got, want)
	}
	p.Points = append(p.Points, Point{Op: "write", Access: "seq", SizeBytes: 4 << 10, Depth: 32, Jobs: 1, LatUs: 32 * 100})
	if got, want := p.WritebackEachUs(4<<10), 100.0; math.Abs(got-want) > 1e-6*want {
		t.Errorf("WritebackEachUs(4 KiB) = %v µs, want %v (a command's cost)", got, want)
	}
	coarse := &Spec{MaxRequestKB: 1024, Points: []Point{{Op: "write", Access: "seq", SizeBytes: 1 << 20, Depth: 8, Jobs: 1, LatUs: 8 * 1000}}}
	if got, want := coarse.WritebackEachUs(64<<10), coarse.WritebackUs(64<<10); got != want {
		t.Errorf("WritebackEachUs(64 KiB) from 1 MiB alone = %v µs, want the merged rate's %v", got, want)
	}
	coarse.Coarse, coarse.Points = true, append(coarse.Points, Point{Op: "write", Access: "seq", SizeBytes: 4 << 10, Depth: 8, Jobs: 1, LatUs: 8 * 1000})
	if got, want := coarse.WritebackEachUs(64<<10), coarse.WritebackUs(64<<10); got != want {
		t.Errorf("WritebackEachUs(64 KiB) of a coarse profile = %v µs, want the merged rate's %v", got, want)
	}
	if got := (&Spec{}).WritebackEachUs(4096); !math.IsNaN(got) {
		t.Errorf("without writes: %v, want NaN", got)
	}
}

// A disk's random latency grows with the distance its head moves; a
// flash drive's does not, and its answers do not change.
func TestDistanceFactor(t *testing.T) {
	disk := &Spec{SpanBytes: 1 << 30, Spans: []Span{{Bytes: 1 << 20, LatUs: 4000}, {Bytes: 16 << 20, LatUs: 7000}, {Bytes: 128 << 20, LatUs: 10000}, {Bytes: 1 << 30, LatUs: 14000}}}
	flash := &Spec{SpanBytes: 1 << 30, Spans: []Span{{Bytes: 1 << 20, LatUs: 95}, {Bytes: 16 << 20, LatUs: 101}, {Bytes: 128 << 20, LatUs: 98}, {Bytes: 1 << 30, LatUs: 100}}}
	// Random requests within the grid's own span average what the grid
	// measured: a factor of 1.
	rng := rand.New(rand.NewPCG(1, 2))
	var sum float64
	for range 20000 {
		a, b := rng.Int64N(1<<30), rng.Int64N(1<<30)
		sum += disk.DistanceFactor(max(a-b, b-a))
	}
	if m := sum / 20000; m < 0.97 || m > 1.03 {
		t.Errorf("random within the grid's span: mean factor %v, want 1", m)
	}
	near, far := disk.DistanceFactor(100<<10), disk.DistanceFactor(64<<20)
	if !(near < far && far < 1) || near > 0.4 {
		t.Errorf("disk: near %v, far %v", near, far)
	}
	// Past the longest distance benched (a third of the longest span) a
	// seek keeps growing, as the square root of its distance at the rate
	// between the two longest spans; it is not held flat up to the span.
	if third, half := disk.DistanceFactor(400<<20), disk.DistanceFactor(512<<20); !(third < half && half < disk.DistanceFactor(1<<30)) {
		t.Errorf("between a third of the longest span and all of it: %v at 400 MiB, %v at 512, %v at 1 GiB", third, half, disk.DistanceFactor(1<<30))
	}
	at1G, at4G, at16G := disk.DistanceFactor(1<<30), disk.DistanceFactor(4<<30), disk.DistanceFactor(16<<30)
	if grow := (at16G - at4G) / (at4G - at1G); !(at1G < at4G && at4G < at16G) || math.Abs(grow-2) > 0.01 {
		t.Errorf("past the span: %v at 1 GiB, %v at 4, %v at 16 (√ steps 1:2, got 1:%.2f)", at1G, at4G, at16G, grow)
	}
	// No seek on a file system is longer than the file system: a
	// recording's longer one takes the longest there is.
	small := *disk
	small.FSBytes = 4 << 30
	if got, want := small.DistanceFactor(16<<30), disk.DistanceFactor(4<<30); got != want || small.DistanceFactor(1<<30) != at1G {
		t.Errorf("on a 4 GiB file system: %v at 16 GiB, want 4 GiB's %v", got, want)
	}
	for _, d := range []int64{0, 4096, 1 << 20, 1 << 40} {
		if f := flash.DistanceFactor(d); f != 1 {
			t.Errorf("flash at %d: %v, want 1", d, f)
		}
	}
	if f := (&Spec{}).DistanceFactor(4096); f != 1 {
		t.Errorf("no spans: %v", f)
	}
	// Writes near the last request: no read cache helps them, they wait for
	// the sector to come round. Without write spans, the read spans stand in.
	if f := disk.WriteDistanceFactor(100 << 10); f != near {
		t.Errorf("no write spans: write factor near %v, read factor %v", f, near)
	}
	disk.WriteSpans = []Span{{Bytes: 1 << 20, LatUs: 6000}, {Bytes: 16 << 20, LatUs: 8000}, {Bytes: 128 << 20, LatUs: 11000}, {Bytes: 1 << 30, LatUs: 14000}}
	if w := disk.WriteDistanceFactor(100 << 10); !(w > near && w < 1) {
		t.Errorf("write factor near %v, read factor near %v", w, near)
	}
	sum = 0
	for range 20000 {
		a, b := rng.Int64N(1<<30), rng.Int64N(1<<30)
		sum += disk.WriteDistanceFactor(max(a-b, b-a))
	}
	if m := sum / 20000; m < 0.97 || m > 1.03 {
		t.Errorf("random writes within the grid's span: mean factor %v, want 1", m)
	}
	if flash.WriteSpans = disk.WriteSpans; flash.WriteDistanceFactor(4096) != 1 {
		t.Error("a drive whose reads do not depend on position: writes taken as if they did")
	}
}

// A throttle's limits are the requests a second its points counted, not
// their in-flight requests over the mean latency.
func TestLimitsCountedNotFromLatency(t *testing.T) {
	p := &Spec{Points: []Point{
		{Op: "read", Access: "rand", SizeBytes: 4096, Depth: 1, Jobs: 1, IOPS: 1498, LatUs: 667.6},
		{Op: "read", Access: "rand", SizeBytes: 4096, Depth: 32, Jobs: 16, IOPS: 1567, LatUs: 275876}, // 1,856 from latency
		{Op: "read", Access: "seq", SizeBytes: 1 << 20, Depth: 4, Jobs: 1, IOPS: 42.6, LatUs: 93584},
		{Op: "write", Access: "seq", SizeBytes: 4096, Depth: 1, Jobs: 1, LatUs: 500}, // counted nothing: from its latency
	}}
	ios, bytes := p.Limits("read")
	if ios != 1567 || math.Abs(bytes-42.6*(1<<20)) > 1 {
		t.Errorf("read limits %v IOPS, %v B/s; want 1567, %v", ios, bytes, 42.6*(1<<20))
	}
	if ios, _ := p.Limits("write"); ios != 2000 {
		t.Errorf("write limits %v IOPS, want 2000 from the latency", ios)
	}
}

// Behind a throttle the limits are what most points counted, not the
// most any did: a short run at four 1 MiB requests in flight counts a
// burst over the 40 MB/s a longer run gets. The points are the VM disk's
// behind cgroup v1 at 40 MB/s and 1,500 IOPS (reads, one job each).
func TestThrottleLimitsOverPoints(t *testing.T) {
	p := &Spec{Cgroup: "/ioshape-validation", CgroupV1: true}
	for _, c := range []struct {
		size  int64
		depth int
		iops  float64
	}{
		{4 << 10, 1, 1468.3}, {4 << 10, 4, 1487.8}, {4 << 10, 32, 1643.6},
		{16 << 10, 1, 1487.6}, {16 << 10, 4, 1497.5}, {16 << 10, 32, 1611.7},
		{64 << 10, 1, 595.2}, {64 << 10, 4, 610.7}, {64 << 10, 32, 734.5},
		{128 << 10, 1, 299.5}, {128 << 10, 4, 313.0}, {128 << 10, 32, 301.6},
		{512 << 10, 1, 75.4}, {512 << 10, 4, 88.8}, {512 << 10, 32, 77.2},
		{1 << 20, 1, 37.7}, {1 << 20, 4, 51.3}, {1 << 20, 32, 38.0},
	} {
		lat := float64(c.depth) * 1e6 / c.iops
		p.Points = append(p.Points, Point{Op: "read", Access: "seq", SizeBytes: c.size, Depth: c.depth, Jobs: 1, IOPS: c.iops, LatUs: lat})
	}
	ios, bytes := p.Limits("read")
	if math.Abs(ios/1500-1) > 0.02 || math.Abs(bytes/40e6-1) > 0.03 {
		t.Errorf("limits %.0f IOPS, %.1f MB/s; want 1,500 and 40", ios, bytes/1e6)
	}
	unthrottled := *p
	unthrottled.Cgroup = ""
	if ios, bytes := unthrottled.Limits("read"); ios != 1643.6 || math.Abs(bytes-51.3*(1<<20)) > 1 {
		t.Errorf("without a throttle: %v IOPS, %v B/s; want the most counted", ios, bytes)
	}
	// A slow drive behind the throttle holds its small requests under the
	// requests' limit: they do not pull it down.
	p.Points = append(p.Points, Point{Op: "read", Access: "rand", SizeBytes: 4 << 10, Depth: 1, Jobs: 1, IOPS: 110, LatUs: 9090},
		Point{Op: "read", Access: "rand", SizeBytes: 16 << 10, Depth: 1, Jobs: 1, IOPS: 105, LatUs: 9520})
	if ios, _ := p.Limits("read"); math.Abs(ios/1500-1) > 0.02 {
		t.Errorf("with a slow drive's random points: %.0f IOPS, want 1,500", ios)
	}
}
