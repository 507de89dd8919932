package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The calibrations' reads run for real on bench's thread: every byte
// read, a CPU time that is the thread's (some, and no more than the wall
// time it took), and a rate that agrees with the bytes and the time.
func TestReadSequentialCPU(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	const size = 5<<20 + 12345 // the last call short
	if err := os.WriteFile(file, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := readSequential(context.Background(), file, 64<<20, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.bytes != size || len(r.lats) != 7 { // 6 calls with data, one at the end
		t.Errorf("%d bytes in %d calls", r.bytes, len(r.lats))
	}
	if !(r.cpuUs > 0 && r.cpuUs <= r.wallUs*1.05+1000) {
		t.Errorf("CPU %.0f µs in %.0f µs of wall time", r.cpuUs, r.wallUs)
	}
	pt := r.point(cacheReadTest)
	if want := float64(size) / r.wallUs; pt.MBs < want*0.99 || pt.MBs > want*1.01 || pt.IOPS <= 0 || pt.LatUs <= 0 || pt.LatP99Us <= 0 {
		t.Errorf("point %+v, want %.1f MB/s", pt, want)
	}
	// Bounded by its limit.
	if r, err := readSequential(context.Background(), file, 2<<20, time.Minute); err != nil || r.bytes != 2<<20 {
		t.Errorf("limit 2 MiB: %d bytes, %v", r.bytes, err)
	}
	// Cancelled: the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readSequential(ctx, file, 64<<20, time.Minute); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := readSequential(context.Background(), filepath.Join(t.TempDir(), "none"), 1, time.Minute); err == nil {
		t.Error("a missing file read")
	}
}

// The small files are laid out with random data and read in an order
// that is the same every run and not the order written.
func TestSmallFilesReadWhole(t *testing.T) {
	dir := t.TempDir()
	paths, err := layOutSmallFiles(dir, 40, 4096)
	if err != nil {
		t.Fatal(err)
	}
	again, err := layOutSmallFiles(t.TempDir(), 40, 4096)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ps []string) (n []string) {
		for _, p := range ps {
			n = append(n, filepath.Base(p))
		}
		return n
	}
	if !slices.Equal(names(paths), names(again)) || slices.IsSorted(names(paths)) {
		t.Errorf("order %v, then %v", names(paths), names(again))
	}
	a, _ := os.ReadFile(paths[0])
	b, _ := os.ReadFile(paths[1])
	if len(a) != 4096 || slices.Equal(a, b) || slices.Equal(a, make([]byte, 4096)) {
		t.Error("the files' data is not random")
	}
	r, err := readSmallFiles(context.Background(), paths, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if r.bytes != 40*4096 || len(r.lats) != 40 || !(r.cpuUs > 0) {
		t.Errorf("%d bytes, %d reads, %.0f µs CPU", r.bytes, len(r.lats), r.cpuUs)
	}
	// The same files direct (where the file system takes it: ext4 here,
	// not tmpfs), the same bytes.
	if d, ok, err := readSmallFilesDirect(context.Background(), paths, 4096); err != nil {
		t.Fatal(err)
	} else if _, derr := openDirect(paths[0]); ok != (derr == nil) {
		t.Errorf("direct read ok %v, opening direct: %v", ok, derr)
	} else if ok && (d.bytes != 40*4096 || len(d.lats) != 40 || !(d.cpuUs > 0)) {
		t.Errorf("direct: %d bytes, %d reads, %.0f µs CPU", d.bytes, len(d.lats), d.cpuUs)
	}
	if err := os.Truncate(paths[3], 100); err != nil {
		t.Fatal(err)
	}
	if _, err := readSmallFiles(context.Background(), paths, 4096); err == nil {
		t.Error("a short file read whole")
	}
}
