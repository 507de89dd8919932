//go:build linux && e2e

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
)

// A workload unique to one test: a sleep with an odd length, found by its
// command line (ioshape runs it by its resolved path; ioshape's own command
// line, "… -- sleep ARG", must not match).
func uniqueSleep(t *testing.T) (arg, pattern string) {
	arg = fmt.Sprintf("%d.%03d", 300+time.Now().Nanosecond()%300, os.Getpid()%1000)
	pattern = "^(/usr)?/bin/sleep " + arg + "$"
	t.Cleanup(func() { exec.Command("pkill", "-f", pattern).Run() })
	return arg, pattern
}

func running(pattern string) bool { return exec.Command("pgrep", "-f", pattern).Run() == nil }

// started waits up to d for a process to match.
func started(pattern string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if running(pattern) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// gone waits up to d for no process to match.
func gone(pattern string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !running(pattern) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// Whatever stops a recording, the command it started goes with it (SIGTERM
// to its process group), and the trace and message say so; with
// --keep-running it stays.
func TestRecordOwnsItsCommand(t *testing.T) {
	requireTracing(t)
	cases := []struct {
		name  string
		flags []string
		stop  func(t *testing.T, rec *exec.Cmd)
		keep  bool
	}{
		{"duration", []string{"--duration", "1s"}, nil, false},
		{"SIGTERM to ioshape", nil, func(t *testing.T, rec *exec.Cmd) { rec.Process.Signal(syscall.SIGTERM) }, false},
		{"kill -9 of ioshape", nil, func(t *testing.T, rec *exec.Cmd) { rec.Process.Kill() }, false},
		{"keep running", []string{"--duration", "1s", "--keep-running"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arg, pattern := uniqueSleep(t)
			store := t.TempDir()
			rec, _, errb := startRecording(t, store, append(c.flags, "--", "sleep", arg)...)
			if !started(pattern, 5*time.Second) {
				t.Fatal("the command did not start")
			}
			if c.stop != nil {
				time.Sleep(500 * time.Millisecond)
				c.stop(t, rec)
			}
			rec.Wait()
			if c.keep {
				time.Sleep(time.Second)
				if !running(pattern) {
					t.Fatal("--keep-running: the command is gone")
				}
				if !strings.Contains(errb.String(), "left running (--keep-running)") {
					t.Errorf("the message does not say the command was left running:\n%s", errb.String())
				}
				return
			}
			// Within the grace period (5 s, the helper's 3 s after a kill -9).
			if !gone(pattern, 6*time.Second) {
				t.Fatalf("the command outlived the recording (%s)", c.name)
			}
			if c.name == "kill -9 of ioshape" {
				return // nothing was left to say it
			}
			if !strings.Contains(errb.String(), "the command was stopped with SIGTERM") {
				t.Errorf("the message does not say the command was stopped:\n%s", errb.String())
			}
		})
	}
}

// A process given with --pid is never signalled: only commands ioshape
// started belong to the recording.
func TestRecordLeavesPidTargetsAlone(t *testing.T) {
	requireTracing(t)
	arg, pattern := uniqueSleep(t)
	victim := exec.Command("/bin/sleep", arg)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	store := t.TempDir()
	if _, r := record(t, store, "--pid", strconv.Itoa(victim.Process.Pid), "--duration", "1s"); r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	if !running(pattern) {
		t.Fatal("a --pid target was signalled")
	}
}

// record exits with the command's status, and the trace keeps it.
func TestRecordExitsWithTheCommandsStatus(t *testing.T) {
	requireTracing(t)
	store := t.TempDir()
	for _, c := range []struct {
		cmd  []string
		want int
	}{
		{[]string{"false"}, 1},
		{[]string{"sh", "-c", "exit 7"}, 7},
		{[]string{"true"}, 0},
	} {
		r := ioshape(t, nil, append([]string{"--store", store, "record", "--backend", testBackend, "--json", "--"}, c.cmd...)...)
		if r.code != c.want {
			t.Errorf("record -- %s: exit %d, want %d (%s)", strings.Join(c.cmd, " "), r.code, c.want, r.stderr)
		}
		if !strings.Contains(r.stdout, fmt.Sprintf(`"exit_status": %d`, c.want)) {
			t.Errorf("record -- %s: the result lacks exit_status %d:\n%s", strings.Join(c.cmd, " "), c.want, r.stdout)
		}
	}
}

// The recorded duration is the target's, not the tracer's start-up or
// teardown (bpftrace takes seconds to detach).
func TestRecordDurationIsTheTargets(t *testing.T) {
	requireTracing(t)
	store := t.TempDir()
	r := ioshape(t, nil, "--store", store, "record", "--backend", testBackend, "--json", "--", "sleep", "1")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	var got float64
	for _, line := range strings.Split(r.stdout, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), `"duration_s": `); ok {
			got, _ = strconv.ParseFloat(strings.TrimSuffix(v, ","), 64)
		}
	}
	if got < 0.95 || got > 1.4 {
		t.Errorf("sleep 1 recorded as %.3f s", got)
	}
}

// A store that fills up stops the recording with an error, and the command
// goes with it.
func TestRecordStoreFullStopsTheCommand(t *testing.T) {
	requireTracing(t)
	store := t.TempDir()
	if err := syscall.Mount("tmpfs", store, "tmpfs", 0, "size=256k"); err != nil {
		testutil.Unavailable(t, "cannot mount a small tmpfs: %v", err)
	}
	defer syscall.Unmount(store, syscall.MNT_DETACH)
	dir := workdir(t)
	file := dir + "/data"
	prepFile(t, file, 64)
	// Random 4 KiB reads, fast: the trace outgrows 256 KiB in seconds.
	pattern := "fio --name=fill --filename=" + file
	t.Cleanup(func() { exec.Command("pkill", "-f", pattern).Run() })
	r := ioshape(t, nil, "--store", store, "record", "--backend", testBackend, "--", "fio", "--name=fill", "--filename="+file,
		"--size=64M", "--rw=randread", "--bs=4k", "--direct=1", "--runtime=120", "--time_based", "--output=/dev/null")
	if r.code == 0 || !strings.Contains(r.stderr, "no space left") {
		t.Errorf("record into a full store: exit %d, stderr %q", r.code, r.stderr)
	}
	if !gone(pattern, 6*time.Second) {
		t.Error("the command outlived the failed recording")
	}
}
