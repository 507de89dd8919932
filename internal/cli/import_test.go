package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// The real fs_usage capture from ../shared/samples imports as exactly its 24
// disk I/Os on four APFS devices and its 359 read/write-family calls (140
// reads, 219 writes, hand-counted in internal/parse); the 12 writes to
// /dev/NOTFOUND and the 797 other lines are skipped and counted, and its 14
// page-ins are reported.
func TestImportFsUsageSample(t *testing.T) {
	sample := testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log")
	store := t.TempDir()
	r := ioshape(t, nil, "--store", store, "import", "--label", "mac", sample)
	if r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	if !strings.Contains(r.stderr, "imported 383 events") || !strings.Contains(r.stderr, "809 lines skipped") || !strings.Contains(r.stderr, "0 malformed") ||
		!strings.Contains(r.stderr, "14 page-ins of memory-mapped files") {
		t.Errorf("import said %q", r.stderr)
	}
	s := showJSON(t, store, "mac")
	if s.Block == nil || s.Block.IOs != 24 || s.Block.Reads != 24 || s.Syscall == nil || s.Syscall.Reads != 140 || s.Syscall.Writes != 219 ||
		s.Syscall.ReadBytes != 291559 || s.Syscall.WriteBytes != 277519 || s.Trace.Events != 383 {
		t.Fatalf("block %+v, syscall %+v", s.Block, s.Syscall)
	}
	var names []string
	for _, d := range s.Devices {
		if d.Block != nil {
			names = append(names, d.Device)
		}
	}
	// One APFS container, its volumes named with it.
	if got := strings.Join(names, ","); got != "disk3 (APFS container; volumes disk3s5, disk3s1s1, disk3s2)" {
		t.Errorf("devices %s", got)
	}
	if !strings.Contains(s.Trace.Backend, "fs_usage") || len(s.Trace.Fidelity) == 0 {
		t.Errorf("backend %q, fidelity %v", s.Trace.Backend, s.Trace.Fidelity)
	}
	if c := ioshape(t, nil, "--store", store, "classify", "mac"); c.code != 0 {
		t.Errorf("classify an imported trace: %s", c.stderr)
	}
}

// Raw output of ioshape's bpftrace script (record --raw-output) imports too.
func TestImportBpftraceRaw(t *testing.T) {
	store := t.TempDir()
	r := ioshape(t, nil, "--store", store, "import", filepath.Join("..", "parse", "testdata", "bpftrace-cp-cat-dd.txt"))
	if r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	golden, _ := os.ReadFile(filepath.Join("..", "parse", "testdata", "bpftrace-cp-cat-dd.golden"))
	want := strings.Count(string(golden), "\nevent ")
	id := strings.Fields(r.stdout)[0]
	if s := showJSON(t, store, id); s.Trace.Events != int64(want) || s.Block == nil || s.Syscall == nil {
		t.Errorf("imported %d events, want %d", s.Trace.Events, want)
	}
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	noDisk := write("syscalls.txt", "17:24:16.586007  ioctl             F=38  <CMD=0x4004667a>     0.000009   Code Helper.11507\n")
	junk := write("junk.txt", "hello\nworld\n")
	bad := write("bad.txt", "17:24:17.532370    RdData[ST2]     D=0x009761a9  B=0x4000   /dev/disk3s5  /x   0.000745 W a.1\n"+
		"17:24:17.532371    RdData[ST2]     D=0xnothex  B=0x4000   /dev/disk3s5  /x   0.000745 W a.1\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", noDisk}, 1, "no I/O found (1 lines skipped)"},
		{[]string{"import", junk}, 1, "not a format ioshape imports"},
		{[]string{"import", filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{"import", "--format", "pcap", junk}, 2, `unknown format "pcap"`},
	} {
		r := ioshape(t, nil, append([]string{"--store", dir}, c.args...)...)
		if r.code != c.code || !strings.Contains(singleLine(t, r.stderr), c.want) {
			t.Errorf("%v: %d %q; want %d %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	r := ioshape(t, nil, "--store", dir, "import", bad)
	if r.code != 0 || !strings.Contains(r.stderr, "1 malformed") || !strings.Contains(r.stderr, "bad.txt:2: bad D= block number") {
		t.Errorf("malformed line not reported with its number: %q", r.stderr)
	}
}

// Output in the D script's format (as ioshape.d prints it) imports with
// both layers.
func TestImportDTraceOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dtrace.txt")
	var b strings.Builder
	b.WriteString("READY dtrace\n")
	for i := 0; i < 50; i++ {
		t0 := int64(1_000_000 + i*300_000)
		fmt.Fprintf(&b, "C pread %d %d 501 7 5 1048576 %d 1048576 0 Final Cut Pro\n", t0, t0+250_000, int64(i)*1048576)
		fmt.Fprintf(&b, "I %d %d 1 17 %d 1048576 1048576 0 1 501 7 Final Cut Pro\n", t0+10_000, t0+240_000, 1000+i*256)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	r := ioshape(t, nil, "--store", dir, "import", path)
	if r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	s := showJSON(t, dir, strings.Fields(r.stdout)[0])
	if s.Block == nil || s.Syscall == nil || s.Block.IOs != 50 || s.Syscall.IOs != 50 || s.Block.SequentialFraction < 0.95 ||
		s.Syscall.SizeBytes.P50 != 1<<20 || !strings.Contains(s.Trace.Backend, "dtrace") {
		t.Fatalf("imported: block %+v syscall %+v", s.Block, s.Syscall)
	}
}
