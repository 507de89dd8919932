package drive

import (
	"math"
	"testing"
)

// CrystalDiskMark 8's default tests on a SATA SSD in a USB enclosure, as
// published (testdata/published/cdm8-usb-sata-ssd.txt).
func cdm8(seq8, seq1, rnd32, rnd1 [2]float64) Provenance {
	p := Provenance{Tool: "CrystalDiskMark", Version: "8", TestBytes: 1 << 30}
	for k, op := range []string{"read", "write"} {
		p.Tests = append(p.Tests,
			Test{Op: op, Access: "seq", SizeBytes: 1 << 20, Depth: 8, Threads: 1, MBs: seq8[k]},
			Test{Op: op, Access: "seq", SizeBytes: 1 << 20, Depth: 1, Threads: 1, MBs: seq1[k]},
			Test{Op: op, Access: "rand", SizeBytes: 4096, Depth: 32, Threads: 1, MBs: rnd32[k]},
			Test{Op: op, Access: "rand", SizeBytes: 4096, Depth: 1, Threads: 1, MBs: rnd1[k]})
	}
	return p
}

var usbSSD = cdm8([2]float64{384.064, 361.390}, [2]float64{371.158, 357.076}, [2]float64{21.640, 26.940}, [2]float64{20.802, 25.727})

// The profile answers each figure it was built from, and every shape
// within a range that holds its answer.
func TestBuildAnswersItsFigures(t *testing.T) {
	p, err := Build("gw560", usbSSD)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range usbSSD.Tests {
		got := p.MBs(f.Op, f.Access, f.SizeBytes, float64(f.InFlight()))
		if math.Abs(got/f.MBs-1) > 0.01 {
			t.Errorf("%s: profile says %.1f MB/s, the figure %.1f", f.Name(), got, f.MBs)
		}
	}
	lo, hi := p.Bound(Low), p.Bound(High)
	for _, op := range []string{"read", "write"} {
		for _, access := range []string{"seq", "rand"} {
			for _, size := range []int64{4096, 32 << 10, 128 << 10, 1 << 20, 8 << 20} {
				for _, d := range []float64{1, 3, 8, 32, 100} {
					m, l, h := p.ServiceUs(op, access, size, d), lo.ServiceUs(op, access, size, d), hi.ServiceUs(op, access, size, d)
					if !(l <= m*1.0001 && m <= h*1.0001) || !(l > 0) {
						t.Errorf("%s %s %d×%v: %v µs outside [%v, %v]", op, access, size, d, m, l, h)
					}
				}
			}
		}
	}
	// What the figures leave open is open: 128 KiB one at a time (only
	// 4 KiB and 1 MiB measured) has a range; a measured shape a narrow one.
	open := hi.ServiceUs("read", "rand", 128<<10, 1) / lo.ServiceUs("read", "rand", 128<<10, 1)
	if open < 1.1 {
		t.Errorf("RND128K Q1 read range %.2f×: too narrow for a shape not measured", open)
	}
	if p.Provenance == nil || len(p.Provenance.Tests) != 8 || p.Provenance.String() != "CrystalDiskMark 8, 1 GiB test" && p.Provenance.String() != "CrystalDiskMark 8" {
		t.Errorf("provenance %+v", p.Provenance)
	}
	if got := p.Figure("RND4K Q1T1 read"); math.Abs(got/20.802-1) > 0.01 {
		t.Errorf("Figure(RND4K Q1T1 read) = %v", got)
	}
}

// A drive whose random reads take milliseconds seeks: its latency grows
// with distance, with a range; flash does not.
func TestBuildSeekBound(t *testing.T) {
	// A 4 TB disk behind a SATA–USB cable (testdata/published/cdm8-usb-hdd.txt).
	hdd := cdm8([2]float64{194.805, 188.484}, [2]float64{194.911, 184.839}, [2]float64{0.640, 2.831}, [2]float64{0.561, 2.452})
	p, err := Build("wd40purx", hdd)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spans) == 0 || p.DistanceFactor(1<<20) >= 1 || p.DistanceFactor(64<<30) <= 1 {
		t.Errorf("a disk: spans %+v, factor near %v, far %v", p.Spans, p.DistanceFactor(1<<20), p.DistanceFactor(64<<30))
	}
	near := []float64{p.Bound(Low).DistanceFactor(1 << 20), p.DistanceFactor(1 << 20), p.Bound(High).DistanceFactor(1 << 20)}
	if !(near[0] < near[1] && near[1] < near[2]) {
		t.Errorf("near factors low, mid, high: %v", near)
	}
	ssd, _ := Build("gw560", usbSSD)
	if len(ssd.Spans) != 0 || ssd.DistanceFactor(1<<20) != 1 {
		t.Errorf("flash seeks: %+v", ssd.Spans)
	}
}

// A full bench's range is BenchUncertainty either side.
func TestBoundOfABench(t *testing.T) {
	p := &Spec{Points: []Point{{Op: "read", Access: "rand", SizeBytes: 4096, Depth: 1, Jobs: 1, LatUs: 100}}}
	if lo, hi := p.Bound(Low).ServiceUs("read", "rand", 4096, 1), p.Bound(High).ServiceUs("read", "rand", 4096, 1); math.Abs(lo-100*(1-BenchUncertainty)) > 1e-9 || math.Abs(hi-100*(1+BenchUncertainty)) > 1e-9 {
		t.Errorf("bench bounds %v, %v", lo, hi)
	}
	if p.Points[0].LatUs != 100 {
		t.Error("Bound changed the profile")
	}
}

// Figures that cannot be a drive's are refused.
func TestBuildRefuses(t *testing.T) {
	for _, prov := range []Provenance{{}, {Tests: []Test{{Op: "read", Access: "seq", SizeBytes: 1 << 20, Depth: 1, Threads: 1, MBs: -3}}},
		{Tests: []Test{{Op: "trim", Access: "seq", SizeBytes: 1 << 20, Depth: 1, Threads: 1, MBs: 3}}}} {
		if _, err := Build("x", prov); err == nil {
			t.Errorf("%+v accepted", prov)
		}
	}
	// Reads alone: writes borrow them, with a wider range.
	reads := Provenance{Tests: usbSSD.Tests[:4]}
	p, err := Build("reads", reads)
	if err != nil {
		t.Fatal(err)
	}
	w := p.Bound(High).ServiceUs("write", "seq", 1<<20, 1) / p.Bound(Low).ServiceUs("write", "seq", 1<<20, 1)
	if w < 3 {
		t.Errorf("borrowed writes' range %.2f×", w)
	}
}
