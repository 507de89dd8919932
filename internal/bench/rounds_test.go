package bench

import (
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/drive"
)

func TestRoundsFor(t *testing.T) {
	for _, c := range []struct {
		runtime time.Duration
		want    int
	}{{100 * time.Second, 3}, {40 * time.Second, 3}, {20 * time.Second, 1}, {10 * time.Second, 1}} {
		if got := roundsFor(c.runtime / time.Duration(len(Grid()))); got != c.want {
			t.Errorf("--runtime %v: %d rounds, want %d", c.runtime, got, c.want)
		}
	}
}

func roundOf(latUs, sdUs, ios, secs float64) run {
	return run{pt: drive.Point{Op: "read", Access: "seq", SizeBytes: 1 << 20, Depth: 4, Jobs: 1,
		IOPS: ios / secs, MBs: ios / secs * (1 << 20) / 1e6, LatUs: latUs, LatP99Us: 2 * latUs}, ios: ios, sdUs: sdUs, secs: secs}
}

func TestCombine(t *testing.T) {
	// The VM disk's 1 MiB reads at depth 4 on three benches: one of them
	// fell in a fast moment. Each round's few hundred requests tell its
	// mean to within some µs, so they disagree: the median round is kept.
	moved := []run{roundOf(1180, 300, 250, 0.15), roundOf(2614, 600, 110, 0.15), roundOf(2215, 500, 130, 0.15)}
	if got := combine(moved); got.LatUs != 2215 || got.IOPS != moved[2].pt.IOPS {
		t.Errorf("rounds apart: %+v, want the median round (2215 µs)", got)
	}
	// A disk's random reads: 18 a round, 9 ms ± 3 ms each — the rounds'
	// means differ by what 18 requests vary, and pool as one run.
	disk := []run{roundOf(8600, 3000, 18, 0.155), roundOf(9400, 3000, 16, 0.151), roundOf(9000, 3000, 17, 0.153)}
	got := combine(disk)
	wantLat := (8600*18 + 9400*16 + 9000*17) / 51.0
	if got.LatUs != round(wantLat) || got.IOPS != round(51/0.459) {
		t.Errorf("rounds within their noise: %+v, want %.3f µs, %.3f IOPS pooled", got, wantLat, 51/0.459)
	}
	if got.LatP99Us != round(2*wantLat) || got.SizeBytes != 1<<20 || got.Depth != 4 {
		t.Errorf("pooled point %+v", got)
	}
	// Too few requests to tell a spread: the median.
	few := []run{roundOf(30000, 0, 1, 0.2), roundOf(90000, 0, 1, 0.2), roundOf(31000, 0, 1, 0.2)}
	if got := combine(few); got.LatUs != 31000 {
		t.Errorf("rounds of one request: %+v, want the median (31000 µs)", got)
	}
	// One round is itself.
	if got := combine(moved[:1]); got != moved[0].pt {
		t.Errorf("one round: %+v", got)
	}
}

// The parts of fio's JSON that pooling reads.
func TestRunOf(t *testing.T) {
	out := []byte(`{"jobs":[{"read":{"iops":2000.5,"bw_bytes":2097152000,"io_bytes":314572800,"runtime":150,"total_ios":300,
		"lat_ns":{"mean":1990000,"stddev":410000},"clat_ns":{"percentile":{"99.000000":3000000}}},"write":{}}]}`)
	r, err := decodeFio(out)
	if err != nil {
		t.Fatal(err)
	}
	rn, err := runOf(r, Test{Op: "read", Access: "seq", Size: 1 << 20, Depth: 4, Jobs: 1})
	if err != nil || rn.ios != 300 || rn.sdUs != 410 || rn.secs != 0.15 || rn.pt.LatUs != 1990 || rn.pt.LatP99Us != 3000 {
		t.Errorf("run %+v, %v", rn, err)
	}
}
