//go:build linux

package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// runBounded runs ioshape and returns its result, its peak resident memory
// in MiB and how long it took.
func runBounded(t *testing.T, args ...string) (result, float64, time.Duration) {
	t.Helper()
	var out, errb bytes.Buffer
	rss := filepath.Join(t.TempDir(), "maxrss")
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), "IOSHAPE_TEST_MAXRSS="+rss)
	if testutil.Race {
		// What is bounded is the program as shipped: the race detector's
		// shadow memory and checks are not in it (and make these runs
		// ten to thirty times as slow).
		bin, err := plainBinary()
		if err != nil {
			t.Fatal(err)
		}
		c.Env = append(c.Env, "IOSHAPE_TEST_PLAIN="+bin)
	}
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	c.Run()
	took := time.Since(start)
	b, err := os.ReadFile(rss)
	if err != nil {
		t.Fatalf("%v: no peak memory measured: %s", args, errb.String())
	}
	kib, _ := strconv.ParseFloat(string(b), 64)
	return result{code: c.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}, kib / 1024, took
}

// plainDir holds plainBinary's build, removed when the tests end.
var plainDir string

// plainBinary is ioshape built without the race detector, once, for the
// bounded runs of a test binary built with it.
var plainBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "ioshape-plain-")
	if err != nil {
		return "", err
	}
	plainDir = dir
	bin := filepath.Join(dir, "ioshape")
	c := exec.Command("go", "build", "-o", bin, "./cmd/ioshape")
	c.Dir = filepath.Join("..", "..")
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v %s", err, out)
	}
	return bin, nil
})

// memLimitMiB is what a bounded command may take, whatever the trace
// names; 30–40 MiB of it are the reader's chunks, decoded a few ahead on
// every core (65,536 events, about 10 MB, each).
const (
	memLimitMiB = 200
	timeLimit   = 30 * time.Second
)

func within(t *testing.T, what string, mib float64, took time.Duration) {
	t.Helper()
	if mib > memLimitMiB || took > timeLimit {
		t.Errorf("%s: %.0f MiB, %v; the limit is %d MiB and %v", what, mib, took, memLimitMiB, timeLimit)
	}
}

// A 10 MB line is reported with its file and line number, the rest of the
// capture is imported, and memory stays bounded.
func TestImportLongLine(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "capture.txt")
	f, _ := os.Create(capture)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "READY amd64")
	fmt.Fprintln(w, "S 1 1000 2000 42 42 7 266338304 9 0 4096 4096 32768 0 fio")
	w.WriteString("S " + strings.Repeat("9", 10<<20) + "\n")
	fmt.Fprintln(w, "S 1 3000 4000 42 42 7 266338304 9 4096 4096 4096 32768 0 fio")
	w.Flush()
	f.Close()
	r, mib, took := runBounded(t, "--store", t.TempDir(), "import", capture)
	within(t, "a 10 MB line", mib, took)
	if r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	want := capture + ":3: line longer than 1 MiB: skipped"
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "imported 2 events") {
		t.Errorf("stderr %q; want %q and 2 events", r.stderr, want)
	}
}

// 300,000 fs_usage buffer overruns are one warning with their number, not
// 300,000 warnings (which overflowed the trace's footer).
func TestImportManyOverrunsOneWarning(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "fs_usage.txt")
	f, _ := os.Create(capture)
	w := bufio.NewWriter(f)
	line := "00:00:00.000000    RdData[AT2]     D=0x00a886d2  B=0x100000 /dev/disk3s5  /Users/me/clip.mov          0.000300 W Final Cut Pro.4242\n"
	w.WriteString(line)
	for range 300_000 {
		w.WriteString("fs_usage: buffer overrun, events generated too quickly\n")
	}
	w.WriteString(line)
	w.Flush()
	f.Close()
	store := t.TempDir()
	r, mib, took := runBounded(t, "--store", store, "import", "--format", "fs_usage", capture)
	within(t, "300,000 overruns", mib, took)
	if r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	if n := strings.Count(r.stderr, "buffer overrun"); n != 1 || !strings.Contains(r.stderr, "300000 buffer overruns") {
		t.Errorf("%d overrun warnings:\n%.500s", n, r.stderr)
	}
	id := strings.Fields(r.stdout)[0]
	if s := showJSON(t, store, id); s.Trace.TracerLostEvents != 300_000 {
		t.Errorf("the trace counts %d lost, want 300000", s.Trace.TracerLostEvents)
	}
}

// A failed import leaves nothing in the store: no trace, no .partial.
func TestImportFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "nothing.txt")
	os.WriteFile(capture, []byte("READY amd64\nX 1 2\n"), 0o644)
	store := t.TempDir()
	r, _, _ := runBounded(t, "--store", store, "import", "--format", "bpftrace", capture)
	if r.code == 0 {
		t.Fatal("an import with no I/O succeeded")
	}
	left, _ := filepath.Glob(filepath.Join(store, "traces", "*"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// writeHostileTrace writes n events, each on a device and by a process of
// its own, as a crafted trace can.
func writeHostileTrace(t *testing.T, path string, n int, finish bool) {
	t.Helper()
	w, err := tracefile.Create(path, tracefile.Header{Tool: "ioshape-test", Backend: "crafted"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		e := event.Event{Layer: event.Layer(i % 2), Op: event.Read, Start: int64(i) * 1000, End: int64(i)*1000 + 500, Size: 4096, Bytes: 4096,
			Offset: int64(i) * 4096, Dev: event.Dev{Major: uint32(i / 1000), Minor: uint32(i % 1000)}, Pid: uint32(i + 1), Tid: uint32(i + 1), Comm: "x"}
		if err := w.Write(&e); err != nil {
			t.Fatal(err)
		}
	}
	if finish {
		if err := w.Close(tracefile.Footer{DurationNs: int64(n) * 1000}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := w.FlushIfDue(0); err != nil {
		t.Fatal(err)
	}
}

// A trace naming 300,000 devices and processes is shown, reported and
// classified in bounded memory: the busiest keep their detail, the rest
// are summed as "other", and the output says so.
func TestManyDevicesBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "many.iotrace")
	writeHostileTrace(t, path, 300_000, true)
	for _, args := range [][]string{{"show", "--json", path}, {"report", "-o", filepath.Join(dir, "r.html"), path}, {"classify", path}} {
		r, mib, took := runBounded(t, append([]string{"--store", t.TempDir()}, args...)...)
		within(t, args[0]+" of 300,000 devices", mib, took)
		if r.code != 0 {
			t.Fatalf("%s: %s", args[0], r.stderr)
		}
		if args[0] == "show" && (!strings.Contains(r.stdout, `"device": "other"`) || !strings.Contains(r.stdout, "devices beyond the 64 busiest are summed")) {
			t.Errorf("show does not say what it summed:\n%.2000s", r.stdout)
		}
	}
}

// An unfinished trace with a zero-filled tail (a power cut) is shown up to
// its last complete chunk, saying what was cut.
func TestShowZeroFilledTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cut.iotrace")
	writeHostileTrace(t, path, 5000, false)
	partial := path + tracefile.PartialSuffix
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 1<<20))
	f.Close()
	r, mib, took := runBounded(t, "--store", t.TempDir(), "show", partial)
	within(t, "a zero-filled tail", mib, took)
	if r.code != 0 || !strings.Contains(r.stdout, "zeros, as a power cut leaves them") || !strings.Contains(r.stdout, "5,000") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
