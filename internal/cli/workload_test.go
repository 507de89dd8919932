//go:build linux && e2e

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
)

// pidWorkload is a command line that writes its PID to a file, then execs
// the workload (same PID, same process group): a test finds, watches and
// stops exactly that process by its PID — never another by a name or a
// pattern on the command line.
type pidWorkload struct {
	file string
}

// newPidWorkload returns the workload and the command line that runs it;
// the workload is killed when the test ends, if still running.
func newPidWorkload(t *testing.T, argv ...string) (*pidWorkload, []string) {
	t.Helper()
	// Outside the test's own temporary directory (0700): a command run as
	// another user (--run-as) writes the file too.
	dir, err := os.MkdirTemp("", "ioshape-pid-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	t.Cleanup(func() { os.RemoveAll(dir) })
	w := &pidWorkload{file: filepath.Join(dir, "pid")}
	t.Cleanup(w.kill)
	return w, append([]string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, w.file}, argv...)
}

// uniqueSleep is a sleep that belongs to one test.
func uniqueSleep(t *testing.T) (*pidWorkload, []string) {
	return newPidWorkload(t, "sleep", "600")
}

func (w *pidWorkload) pid() int {
	b, _ := os.ReadFile(w.file)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// running reports whether the workload has started and not exited.
func (w *pidWorkload) running() bool {
	pid := w.pid()
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) S …": a zombie has exited.
	s := string(stat)
	end := strings.LastIndexByte(s, ')')
	return end > 0 && end+2 < len(s) && s[end+2] != 'Z'
}

// started waits up to d for the workload to run.
func (w *pidWorkload) started(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if w.running() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// gone waits up to d for the workload to exit.
func (w *pidWorkload) gone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !w.running() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// kill stops the workload, by its PID, if it still runs.
func (w *pidWorkload) kill() {
	if w.running() {
		syscall.Kill(w.pid(), syscall.SIGKILL)
	}
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
			sleep, argv := uniqueSleep(t)
			store := t.TempDir()
			rec, _, errb := startRecording(t, store, append(append(c.flags, "--"), argv...)...)
			if !sleep.started(5 * time.Second) {
				t.Fatal("the command did not start")
			}
			if c.stop != nil {
				time.Sleep(500 * time.Millisecond)
				c.stop(t, rec)
			}
			rec.Wait()
			if c.keep {
				time.Sleep(time.Second)
				if !sleep.running() {
					t.Fatal("--keep-running: the command is gone")
				}
				if !strings.Contains(errb.String(), "left running (--keep-running)") {
					t.Errorf("the message does not say the command was left running:\n%s", errb.String())
				}
				return
			}
			// Within the grace period (5 s, the helper's 3 s after a kill -9).
			if !sleep.gone(6 * time.Second) {
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
	victim := exec.Command("/bin/sleep", "600")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	store := t.TempDir()
	if _, r := record(t, store, "--pid", strconv.Itoa(victim.Process.Pid), "--duration", "1s"); r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	if victim.ProcessState != nil || victim.Process.Signal(syscall.Signal(0)) != nil {
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
	fio, argv := newPidWorkload(t, "fio", "--name=fill", "--filename="+file,
		"--size=64M", "--rw=randread", "--bs=4k", "--direct=1", "--runtime=120", "--time_based", "--output=/dev/null")
	r := ioshape(t, nil, append([]string{"--store", store, "record", "--backend", testBackend, "--"}, argv...)...)
	if r.code == 0 || !strings.Contains(r.stderr, "no space left") {
		t.Errorf("record into a full store: exit %d, stderr %q", r.code, r.stderr)
	}
	if !fio.gone(6 * time.Second) {
		t.Error("the command outlived the failed recording")
	}
}
