//go:build e2e

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/replay"
)

// A recorded workload replayed with fio — from a job file with its shape,
// or from an iolog of its exact I/O — and recorded again has the
// original's shape: size p50 equal, requested queue depth within 20 % or 1
// (at least one a CPU for more threads than CPUs: cpusHoldDepth),
// sequential share within 10 points, read share within 5 (replay's own
// checks, which this test requires to pass). fio workloads in both modes;
// real programs (a cold cp, tar -x, a cold grep -r) as iologs, since their
// odd sizes are no power of two a job's bssplit could give exactly.
func TestReplayRoundTrip(t *testing.T) {
	requireTracing(t)
	dir, store := workdir(t), t.TempDir()
	data := filepath.Join(dir, "data")
	prepFile(t, data, 128)
	tree := filepath.Join(dir, "tree")
	tarball := filepath.Join(dir, "src.tar")
	if out, err := exec.Command("tar", "cf", tarball, "-C", "/usr/include", ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	os.Mkdir(tree, 0o755)
	fioRun := func(extra ...string) []string {
		return append([]string{"--", "fio", "--name=job", "--filename=" + data, "--size=128M", "--runtime=2", "--time_based",
			"--direct=1", "--output=/dev/null"}, extra...)
	}
	cases := []struct {
		name    string
		args    []string
		modes   []string
		threads int // synchronous threads side by side (0: one)
	}{
		{"fio random 4K QD1, 200 µs think time", fioRun("--rw=randread", "--bs=4k", "--ioengine=psync", "--thinktime=200"), []string{"job", "iolog"}, 0},
		{"fio sequential 1M write", fioRun("--rw=write", "--bs=1M", "--ioengine=psync"), []string{"job", "iolog"}, 0},
		{"fio random 4K libaio QD8", fioRun("--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=8"), []string{"job", "iolog"}, 0},
		// Four threads side by side: a log each, replayed as four jobs.
		{"fio random 4K, 4 psync jobs", fioRun("--rw=randread", "--bs=4k", "--ioengine=psync", "--numjobs=4", "--thread"), []string{"job", "iolog"}, 4},
		{"cp, cold", []string{"--cold", "--", "cp", tarball, filepath.Join(dir, "copy.tar")}, []string{"iolog"}, 0},
		{"tar -x", []string{"--", "tar", "xf", tarball, "-C", tree}, []string{"iolog"}, 0},
		{"grep -r, cold", []string{"--cold", "--", "grep", "-r", "-q", "no-such-string-zq", tree}, []string{"iolog"}, 0},
	}
	replays := filepath.Join(dir, "replays")
	os.Mkdir(replays, 0o755)
	for _, c := range cases {
		id, _ := recordAllowingStatus(t, store, c.args...)
		for _, mode := range c.modes {
			r := ioshape(t, nil, "--store", store, "replay", id, "--dir", replays, "--mode", mode, "--backend", testBackend, "--json")
			if r.code != 0 {
				t.Errorf("%s, %s: replay failed (%d): %s", c.name, mode, r.code, r.stderr)
				continue
			}
			var res replay.Result
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, r.stdout)
			}
			if res.Replay == "" || res.Original != id || len(res.Checks) < 4 {
				t.Errorf("%s, %s: %+v", c.name, mode, res)
			}
			for _, ch := range res.Checks {
				if !ch.OK && !(ch.Name == "requested queue depth p50" && cpusHoldDepth(c.threads, ch.Original, ch.Replay)) {
					t.Errorf("%s, %s: %s: original %v, replay %v (within %s)", c.name, mode, ch.Name, ch.Original, ch.Replay, ch.Within)
				}
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(replays, "*")); len(left) > 0 {
		t.Errorf("replay left %v behind", left)
	}
}

// cpusHoldDepth: more synchronous threads than CPUs keep as many calls in
// flight as the CPUs let them, at that moment: on a VM whose host takes
// the CPUs, 4 psync jobs on 2 CPUs replayed at a median of 2 where the
// recording had 4. The replay then keeps at least one per CPU.
func cpusHoldDepth(threads int, original, replayed float64) bool {
	cpus := float64(runtime.NumCPU())
	return threads > runtime.NumCPU() && replayed >= cpus && replayed <= original
}

// recordAllowingStatus records like record, but grep's status 1 (no
// match) is the command's answer, not a failed recording.
func recordAllowingStatus(t *testing.T, store string, args ...string) (string, result) {
	t.Helper()
	r := ioshape(t, nil, append([]string{"--store", store, "record", "--backend", testBackend}, args...)...)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("record %v failed (%d): %s", args, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) != 2 {
		t.Fatalf("record printed %q", r.stdout)
	}
	return f[0], r
}
