//go:build linux && e2e

package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A ring buffer too small for the event rate drops records: the drops are
// counted in the kernel, stored in the trace and shown, never hidden.
func TestNativeRingBufferOverflow(t *testing.T) {
	requireNative(t)
	dir, store := workdir(t), t.TempDir()
	file := filepath.Join(dir, "data")
	prepFile(t, file, 64)
	// One page per CPU: a few dozen records; fio at depth 32 completes
	// I/Os in bursts faster than the reader's wake-ups.
	id, r := record(t, store, append([]string{"--perf-pages", "1"},
		fioArgs(file, "--size=64M", "--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=32", "--numjobs=2")...)...)
	if !strings.Contains(r.stderr, "LOST") {
		t.Errorf("record did not say events were lost: %q", r.stderr)
	}
	s := showJSON(t, store, id)
	if s.Trace.TracerLostEvents == 0 || s.Trace.LostEvents < s.Trace.TracerLostEvents {
		t.Fatalf("no ring buffer losses counted (tracer lost %d, lost %d, events %d)", s.Trace.TracerLostEvents, s.Trace.LostEvents, s.Trace.Events)
	}
	found := false
	for _, w := range s.Trace.Warnings {
		found = found || strings.Contains(w, "ring buffer") && strings.Contains(w, "--perf-pages")
	}
	if !found {
		t.Errorf("no warning names the ring buffer and the remedy: %q", s.Trace.Warnings)
	}
	text := ioshape(t, nil, "--store", store, "show", id)
	if !strings.Contains(text.stdout, "LOST DATA") {
		t.Errorf("show does not flag the loss:\n%s", text.stdout)
	}
	checkAccounted(t, s)
	t.Logf("%d events recorded, %d dropped by the ring buffer", s.Trace.Events, s.Trace.TracerLostEvents)
}
