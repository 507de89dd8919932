//go:build linux && e2e

package cli

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/testutil"
)

// A real, short bench on this machine's disk: every grid point measured
// in three rounds, the summary printed, the profile in the store and
// listed, and its test file gone.
func TestBenchMeasuresADrive(t *testing.T) {
	requireTracing(t) // fio and root
	store, dir := t.TempDir(), workdir(t)
	r := ioshape(t, nil, "--store", store, "bench", "--dir", dir, "--size", "64M", "--runtime", "34s", "--label", "vm-disk")
	if r.code != 0 {
		t.Fatalf("bench: %s", r.stderr)
	}
	for _, want := range []string{"SEQ1M Q8T1", "RND4K Q1T1", "flush ", `drive profile "vm-disk"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	// The grid's 74 tests three times over (34 s is 0.46 s a test, three
	// rounds of 153 ms), random reads and writes within 1 and 16 MiB and
	// the whole 64 MiB file, the write-and-flush cycle, the page cache's
	// CPU and the wake-up's (as root: the cache is dropped for them), and
	// the content calibration, each numbered in turn.
	if n := strings.Count(r.stderr, "MB/s"); n != 232 || strings.Count(r.stderr, " read seq 1M Q4 ") != 3 || !strings.Contains(r.stderr, "read seq 1M Q1 buffered") ||
		!strings.Contains(r.stderr, "232/232  write seq 128K Q1, text against random bytes") || !strings.Contains(r.stderr, "231/232  read rand 4K Q1 small files") ||
		!strings.Contains(r.stderr, "read rand 4K Q1 small files") ||
		!strings.Contains(r.stderr, "read rand 4K Q1 within 16M") || !strings.Contains(r.stderr, "write rand 4K Q1 within 16M") ||
		!strings.Contains(r.stderr, "write seq 4K Q1 each with fdatasync") {
		t.Errorf("%d progress lines, want 232: the grid's three rounds, the spans, the write-and-flush cycle, the buffered read, the small files and the content:\n%s", n, r.stderr)
	}
	ls := ioshape(t, nil, "--store", store, "drives", "--json")
	var ds []*drive.Spec
	if err := json.Unmarshal([]byte(ls.stdout), &ds); err != nil || len(ds) != 1 || len(ds[0].Points) != 74 || ds[0].Device == "" {
		t.Fatalf("drives: %v %s", err, ls.stdout)
	}
	// Reads are faster with more in flight on any real drive.
	d := ds[0]
	if q32, q1 := d.MBs("read", "rand", 4096, 32), d.MBs("read", "rand", 4096, 1); !(q32 > q1) {
		t.Errorf("RND4K read: Q32 %.1f MB/s, Q1 %.1f MB/s", q32, q1)
	}
	// Reading through the page cache costs CPU beyond a direct read's:
	// allocating, inserting and copying pages is some tens of µs per MiB at
	// least, and not seconds.
	if c := d.CacheReadCPU; c == nil || *c <= 0 || *c > 1e5 {
		t.Errorf("page cache CPU per MiB %v", c)
	}
	// A flush and the write after it take some time, and not seconds.
	if sw := d.SyncWrite; sw == nil || !(sw.WriteUs > 0 && sw.WriteUs < 1e6) || !(sw.FlushUs > 0 && sw.FlushUs < 1e6) {
		t.Errorf("write-and-flush cycle %+v", sw)
	}
	// Waiting for a read costs a few µs beside the device's own time (a
	// system call, a sleep and a wake-up), and never milliseconds.
	if w := d.WaitUs; w == nil || !(*w > 0 && *w < 1000) || !strings.Contains(r.stdout, "a read waited for costs ") {
		t.Errorf("a wait's cost %v; summary:\n%s", w, r.stdout)
	}
	// Each wait adds some computation (the reader runs cold after it),
	// never milliseconds.
	if w := d.WakeUs; w == nil || !(*w >= 0 && *w < 1000) || !strings.Contains(r.stdout, "more of the reader's computation") {
		t.Errorf("a wake-up's cost %v; summary:\n%s", w, r.stdout)
	}
	// A process started after the machine idled takes longer, by no more
	// than milliseconds: measured up to 64 ms idle, a disk's fsync.
	// A shell starting three takes longer than one process.
	if w := d.IdleWake; w == nil || !(w.TaskUs > 0 && w.TaskUs < 1e5) || len(w.Points) != 5 || w.Points[4].IdleUs != 64000 || !(w.Points[4].ExtraUs < 1e4) ||
		!(w.LongTaskUs > w.TaskUs && w.LongTaskUs < 1e5) || !(w.Points[4].LongExtraUs < 1e4) ||
		!strings.Contains(r.stdout, "this machine starts a process in ") || !strings.Contains(r.stdout, "a shell starting three: ") {
		t.Errorf("idle wake-up %+v; summary:\n%s", w, r.stdout)
	}
	// The file system's size bounds a seek on it: what statfs says.
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || d.FSBytes != int64(st.Blocks)*int64(st.Bsize) {
		t.Errorf("fs_bytes %d, statfs of %s %d (%v)", d.FSBytes, dir, int64(st.Blocks)*int64(st.Bsize), err)
	}
	if len(d.WriteSpans) != 3 || len(d.Spans) != 3 {
		t.Errorf("spans: %d read, %d write, want 3 each", len(d.Spans), len(d.WriteSpans))
	}
	if left := countFiles(t, dir); left != 0 {
		t.Errorf("%d files left in %s", left, dir)
	}
}

// Not enough space, and a directory that cannot be written, are one line
// each.
func TestBenchPlaceErrors(t *testing.T) {
	requireTracing(t)
	small := t.TempDir()
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=8m"); err != nil {
		testutil.Unavailable(t, "cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(small, syscall.MNT_DETACH)
	ro := t.TempDir()
	if err := syscall.Mount("tmpfs", ro, "tmpfs", syscall.MS_RDONLY, "size=8m"); err != nil {
		testutil.Unavailable(t, "cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(ro, syscall.MNT_DETACH)
	for _, c := range []struct{ dir, want string }{{small, "not enough space"}, {ro, "cannot write in"}} {
		r := ioshape(t, nil, "--store", t.TempDir(), "bench", "--dir", c.dir, "--size", "64M")
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%s: exit %d, stderr %q; want one line with %q", c.dir, r.code, r.stderr, c.want)
		}
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(des)
}
