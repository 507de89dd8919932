//go:build e2e

package cli

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// The DTrace and fs_usage backends, tested through the CLI with the fake
// executables in testdata/fakebin (this machine has neither tool). The
// fakes replay output in the real tools' formats, honour SIGINT, and print
// drops, run-time errors and the SIP notice on request.

func fakeEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("recording needs root, as it does for real")
	}
	bin, err := filepath.Abs(filepath.Join("..", "..", "testdata", "fakebin"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "fake"))
	return append([]string{
		"PATH=" + bin + ":" + os.Getenv("PATH"),
		"FAKE_DTRACE_REPLAY=" + filepath.Join(data, "dtrace-replay.txt"),
		"FAKE_FSUSAGE_REPLAY=" + filepath.Join(data, "fs_usage-replay.txt"),
	}, extra...)
}

func recordWith(t *testing.T, env []string, args ...string) (result, string) {
	t.Helper()
	store := t.TempDir()
	r := ioshape(t, env, append([]string{"--store", store, "record"}, args...)...)
	return r, store
}

func TestRecordDTraceFake(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.d")
	env := fakeEnv(t, "FAKE_DTRACE_DROPS=7", "FAKE_DTRACE_ERRORS=1", "FAKE_DTRACE_SCRIPT="+script)
	start := time.Now()
	r, store := recordWith(t, env, "--backend", "dtrace", "--label", "fcp", "--", "sleep", "1.5")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %v", took)
	}
	s := showJSON(t, store, "fcp")
	if s.Trace.Backend != "dtrace" || s.Trace.EndReason != "target exited" || s.Trace.ExitStatus == nil || *s.Trace.ExitStatus != 0 {
		t.Errorf("trace: %+v", s.Trace)
	}
	// Time zero is when the tracer was ready, not when ioshape began.
	if s.Trace.Start == nil || s.Trace.Start.Before(start) || s.Trace.StartSource != tracefile.StartTracerReady {
		t.Errorf("start %v (%q), ioshape began at %v", s.Trace.Start, s.Trace.StartSource, start)
	}
	// The replay: 100 pread calls and 100 block reads of 1 MiB, 10 F_FULLFSYNCs.
	if s.Syscall == nil || s.Syscall.Reads != 100 || s.Syscall.Flushes != 10 || s.Syscall.SizeBytes.P50 != 1<<20 {
		t.Fatalf("syscall layer: %+v", s.Syscall)
	}
	if s.Block == nil || s.Block.Reads != 100 || s.Block.SequentialFraction < 0.95 {
		t.Fatalf("block layer: %+v", s.Block)
	}
	// Drops and the run-time error from stderr, the unmatched count from END.
	if s.Trace.TracerLostEvents != 7 || s.Trace.ProbeErrors != 1 || s.Trace.LostEvents != 8 || s.Trace.UnmatchedCompletions != 2 {
		t.Errorf("losses: lost %d (tracer %d, errors %d), unmatched %d", s.Trace.LostEvents, s.Trace.TracerLostEvents, s.Trace.ProbeErrors, s.Trace.UnmatchedCompletions)
	}
	// The command was started by ioshape and traced with progenyof().
	d, err := os.ReadFile(script)
	if err != nil || !strings.Contains(string(d), "progenyof(") || !strings.Contains(string(d), "\nio:::start") {
		t.Errorf("script given to dtrace: %v\n%.300s", err, d)
	}
}

func TestRecordDTraceSIPFallsBackToFsUsage(t *testing.T) {
	args := filepath.Join(t.TempDir(), "args")
	env := fakeEnv(t, "FAKE_DTRACE_SIP=1", "FAKE_FSUSAGE_ARGS="+args)
	r, store := recordWith(t, env, "--backend", "dtrace", "--label", "sip", "--all", "--duration", "2s")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	if !strings.Contains(r.stderr, "csrutil enable --without dtrace") || !strings.Contains(r.stderr, "fs_usage") {
		t.Errorf("no clear SIP message: %q", r.stderr)
	}
	s := showJSON(t, store, "sip")
	if s.Syscall == nil || s.Syscall.Reads != 100 {
		t.Errorf("syscall layer from DTrace: %+v", s.Syscall)
	}
	// The block layer from fs_usage: 60 disk reads (the /dev/NOTFOUND write
	// and the ioctl lines are not disk I/O), on disk3s5.
	if s.Block == nil || s.Block.Reads != 60 || s.Block.SizeBytes.P50 != 1<<20 {
		t.Fatalf("block layer from fs_usage: %+v", s.Block)
	}
	found := false
	for _, d := range s.Devices {
		found = found || strings.HasPrefix(d.Device, "disk3 (APFS container; volumes disk3s5")
	}
	if !found {
		t.Errorf("devices: %+v", s.Devices)
	}
	// Unfiltered: ioshape follows the target itself.
	if a, _ := os.ReadFile(args); strings.TrimSpace(string(a)) != "-w -f filesys -f diskio" {
		t.Errorf("fs_usage args %q", a)
	}
}

// When SIP makes dtrace refuse the io provider outright, the recording
// runs again without it, with the block layer from fs_usage.
func TestRecordDTraceSIPStrict(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.d")
	env := fakeEnv(t, "FAKE_DTRACE_SIP=strict", "FAKE_DTRACE_SCRIPT="+script)
	r, store := recordWith(t, env, "--backend", "dtrace", "--label", "strict", "--all", "--duration", "2s")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	s := showJSON(t, store, "strict")
	if s.Syscall == nil || s.Syscall.Reads != 100 || s.Block == nil || s.Block.Reads != 60 {
		t.Fatalf("syscall %+v block %+v", s.Syscall, s.Block)
	}
	if d, _ := os.ReadFile(script); strings.Contains(string(d), "\nio:::start") {
		t.Error("the second script still uses the io provider")
	}
}

// The fs_usage backend records both layers: the fake replays the real
// desktop capture from ../shared/samples with its timing (four times as fast),
// and the trace holds what a hand count of it gives (internal/parse).
func TestRecordFsUsageBackend(t *testing.T) {
	capture := testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log")
	env := fakeEnv(t, "FAKE_FSUSAGE_OVERRUN=1", "FAKE_FSUSAGE_REPLAY="+capture, "FAKE_FSUSAGE_SPEED=4")
	r, store := recordWith(t, env, "--backend", "fsusage", "--label", "fsu", "--all", "--duration", "6s")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	s := showJSON(t, store, "fsu")
	if s.Trace.Backend != "fsusage" || s.Block == nil || s.Block.Reads != 24 || s.Syscall == nil || s.Syscall.Reads != 140 || s.Syscall.Writes != 219 ||
		s.Syscall.ReadBytes != 291559 || s.Syscall.WriteBytes != 277519 {
		t.Fatalf("trace %+v\nblock %+v\nsyscall %+v", s.Trace, s.Block, s.Syscall)
	}
	warn := strings.Join(s.Trace.Warnings, " ")
	if s.Trace.TracerLostEvents != 1 || !strings.Contains(warn, "fs_usage lost") || !strings.Contains(warn, "14 page-ins of memory-mapped files") {
		t.Errorf("the buffer overrun or the page-ins are not reported: %+v", s.Trace)
	}
	if !strings.Contains(strings.Join(s.Trace.Fidelity, " "), "hides sh, zsh") {
		t.Errorf("fidelity %v", s.Trace.Fidelity)
	}
}

// A command's I/O alone is kept. The capture's threads are not processes
// of this machine, so ioshape cannot map them and falls back to the
// command's name, and says so: bash's two calls in the capture.
func TestRecordFsUsageCommandByName(t *testing.T) {
	capture := testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log")
	env := fakeEnv(t, "FAKE_FSUSAGE_REPLAY="+capture, "FAKE_FSUSAGE_SPEED=4")
	r, store := recordWith(t, env, "--backend", "fsusage", "--label", "sh", "--", "bash", "-c", "sleep 6")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	s := showJSON(t, store, "sh")
	if s.Syscall == nil || s.Syscall.IOs != 2 || s.Block != nil {
		t.Fatalf("syscall %+v block %+v", s.Syscall, s.Block)
	}
	for _, p := range s.Processes {
		if p.Comm != "bash" {
			t.Errorf("process %+v kept", p)
		}
	}
	if !strings.Contains(strings.Join(s.Trace.Warnings, " "), "could not map to a process") {
		t.Errorf("warnings %q", s.Trace.Warnings)
	}
}

// Only one kdebug client can trace: fs_usage's "Resource busy" becomes
// one line saying who may hold it, and a failed recording.
func TestRecordFsUsageBusy(t *testing.T) {
	env := fakeEnv(t, "FAKE_FSUSAGE_BUSY=1")
	r, _ := recordWith(t, env, "--backend", "fsusage", "--all", "--duration", "2s")
	if r.code == 0 || !strings.Contains(r.stderr, "kdebug) is busy") || !strings.Contains(r.stderr, "Instruments") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestRecordDTraceErrors(t *testing.T) {
	env := fakeEnv(t, "FAKE_DTRACE_FAIL=1")
	r, _ := recordWith(t, env, "--backend", "dtrace", "--", "sleep", "1")
	if r.code == 0 || !strings.Contains(singleLine(t, r.stderr), "dtrace exited before tracing started: failed to compile script") {
		t.Errorf("compile failure: %d %q", r.code, r.stderr)
	}
	r, _ = recordWith(t, []string{"PATH=/nonexistent"}, "--backend", "dtrace", "--", "/bin/true")
	if r.code == 0 || !strings.Contains(singleLine(t, r.stderr), "dtrace is not installed") {
		t.Errorf("no dtrace: %d %q", r.code, r.stderr)
	}
	r, _ = recordWith(t, nil, "--backend", "nosuch", "--", "/bin/true")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown backend "nosuch"`) {
		t.Errorf("bad backend: %d %q", r.code, r.stderr)
	}
}

// record --summary on the tracers that print each I/O: the same replayed
// output, recorded in detail and as a summary, holds the same I/O — every
// one counted, the same sizes, direction and access — and the summary
// keeps no event of its own. DTrace replays the fake's output, fs_usage
// the real desktop capture from ../shared/samples.
func TestRecordSummaryDTraceFsUsage(t *testing.T) {
	capture := testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log")
	for _, c := range []struct {
		backend string
		env     []string
		args    []string
	}{
		{"dtrace", nil, []string{"--", "sleep", "1.5"}},
		// The replay waits up to 5 s for the recording's readiness, then
		// spans 0.9 s: a 6 s recording cut its last lines when CI's load
		// slowed both (357 I/Os in one run, 359 in the other).
		{"fsusage", []string{"FAKE_FSUSAGE_REPLAY=" + capture, "FAKE_FSUSAGE_SPEED=4"}, []string{"--all", "--duration", "9s"}},
	} {
		t.Run(c.backend, func(t *testing.T) {
			env := fakeEnv(t, c.env...)
			var shows [2]*report.Show
			for i, mode := range [][]string{nil, {"--summary"}} {
				r, store := recordWith(t, env, append(append([]string{"--backend", c.backend, "--label", "x"}, mode...), c.args...)...)
				if r.code != 0 {
					t.Fatalf("record %v: %s", mode, r.stderr)
				}
				shows[i] = showJSON(t, store, "x")
			}
			detail, sum := shows[0], shows[1]
			if !sum.Trace.Target.Summary || sum.Trace.Events != 0 || sum.Trace.SummaryRows == 0 || detail.Trace.Target.Summary {
				t.Fatalf("summary trace: %+v", sum.Trace)
			}
			for _, l := range []struct {
				name      string
				sum, want *profile.Layer
			}{{"syscall", sum.Syscall, detail.Syscall}, {"block", sum.Block, detail.Block}} {
				if l.want == nil {
					continue
				}
				if l.sum == nil || l.sum.Reads != l.want.Reads || l.sum.Writes != l.want.Writes || l.sum.ReadBytes != l.want.ReadBytes ||
					l.sum.WriteBytes != l.want.WriteBytes || l.sum.Flushes != l.want.Flushes {
					t.Fatalf("%s layer: summary %+v, detail %+v", l.name, l.sum, l.want)
				}
				// The replays are timed as recorded: two runs' spans differ a little.
				if math.Abs(l.sum.SequentialFraction-l.want.SequentialFraction) > 0.001 || math.Abs(l.sum.SpanS-l.want.SpanS) > 0.1*l.want.SpanS ||
					!sameBucket(float64(l.sum.SizeBytes.P50ByBytes), float64(l.want.SizeBytes.P50ByBytes)) {
					t.Errorf("%s layer: summary sequential %v, span %v s, size %d; detail %v, %v s, %d", l.name,
						l.sum.SequentialFraction, l.sum.SpanS, l.sum.SizeBytes.P50ByBytes, l.want.SequentialFraction, l.want.SpanS, l.want.SizeBytes.P50ByBytes)
				}
			}
			if sum.Trace.SummarizedIOs < sum.Syscall.IOs {
				t.Errorf("the footer counts %d summarized I/Os, the syscall layer alone has %d", sum.Trace.SummarizedIOs, sum.Syscall.IOs)
			}
		})
	}
}
