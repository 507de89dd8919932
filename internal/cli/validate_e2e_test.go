//go:build linux && e2e

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// validateSetupFailures are the harness's messages for a drive this machine
// cannot give it: the test needs them, so they fail it under CI=true.
var validateSetupFailures = []string{"no zram0", "zram0 is in use", "no cgroup v1 blkio controller", "no /dev/fuse", "drivesim did not serve", "has no direct I/O"}

// runValidate runs scripts/validate-predict.sh with env added.
func runValidate(t *testing.T, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	c := exec.Command("bash", filepath.Join(testutil.Root(t), "scripts", "validate-predict.sh"))
	c.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	return out.String(), errb.String(), err
}

// The validation harness's reduced run, as CI runs it: the real zram drive
// and the portable-HDD model (a loop device over a FUSE file that delays
// each request by seek distance and rotation) are set up, benched, two
// workloads recorded on each from a cold cache and predicted for the other
// (and for themselves); the predictions stand against the measured runs.
// What the model claims is checked: on the drive a trace was recorded on
// it gives back the recorded duration (within 10 %), its median error is
// at most 20 %, and it predicts better than the headline number. (Not
// every case is within 2×: cp recorded on the throttled drive computes
// more than a whole copy takes on zram; docs/predict.md.)
func TestValidatePredictQuick(t *testing.T) {
	requireNative(t) // the harness records with the default backend
	stdout, stderr, err := runValidate(t, "QUICK=1")
	if err != nil {
		for _, why := range validateSetupFailures {
			if strings.Contains(stderr, why) {
				testutil.Unavailable(t, "the harness cannot set up its drives: %s", strings.TrimSpace(stderr))
			}
		}
		t.Fatalf("harness: %v\n%s", err, stderr)
	}
	t.Logf("\n%s", stdout)
	m := regexp.MustCompile(`all: (\d+) cases, median \|predicted/measured - 1\| (\d+) %, worst off by ([0-9.]+)x, beyond 1.5x: \d+, beyond 2x: (\d+); headline median (\d+) %`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no summary line in:\n%s", stdout)
	}
	cases, _ := strconv.Atoi(m[1])
	median, _ := strconv.Atoi(m[2])
	headline, _ := strconv.Atoi(m[5])
	// | workload | from | to | predicted | measured | error | headline | headline error |
	rows := 0
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 10 || strings.TrimSpace(f[1]) == "workload" || strings.HasPrefix(strings.TrimSpace(f[1]), "-") {
			continue
		}
		rows++
		from, to := strings.TrimSpace(f[2]), strings.TrimSpace(f[3])
		e, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(f[6]), " %+"), 64)
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		if from == to && (e > 10 || e < -10) {
			t.Errorf("predicted on the drive it was recorded on, off by %v %%: %s", e, line)
		}
	}
	// Two workloads, every ordered pair of the two drives.
	if cases != 8 || rows != 8 {
		t.Errorf("%d cases, %d rows; want 8", cases, rows)
	}
	if median > 20 {
		t.Errorf("median error %d %%, want ≤ 20 %%", median)
	}
	if headline <= median {
		t.Errorf("the headline (median error %d %%) predicted as well as the model (%d %%): nothing shown", headline, median)
	}
	checkFromCrystalDiskMark(t, stdout)
}

// checkFromCrystalDiskMark checks the harness's second part: each drive
// measured only with CrystalDiskMark 8's default tests, written as its
// text, imported with 'drives import', and every recording predicted from
// those numbers, with a range.
func checkFromCrystalDiskMark(t *testing.T, stdout string) {
	t.Helper()
	_, part, ok := strings.Cut(stdout, "From CrystalDiskMark's eight numbers only")
	if !ok {
		t.Fatal("no predictions from CrystalDiskMark's numbers")
	}
	// | workload | from | to | predicted | range | measured | error | in range | headline | tracks |
	rows := 0
	for _, line := range strings.Split(part, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 12 || strings.TrimSpace(f[1]) == "workload" || strings.HasPrefix(strings.TrimSpace(f[1]), "-") {
			continue
		}
		rows++
		e, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(f[7]), " %+"), 64)
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		if strings.TrimSpace(f[2]) == strings.TrimSpace(f[3]) && (e > 10 || e < -10) {
			t.Errorf("from the numbers, on the drive it was recorded on, off by %v %%: %s", e, line)
		}
		if !strings.Contains(f[5], "–") || strings.TrimSpace(f[10]) == "" {
			t.Errorf("a row without a range or a tracked number: %s", line)
		}
	}
	if rows != 8 {
		t.Errorf("%d rows from CrystalDiskMark's numbers, want 8", rows)
	}
	m := regexp.MustCompile(`all: (\d+) cases, median \|predicted/measured - 1\| (\d+) %, beyond 2x: \d+, worst [0-9.]+x, range holds the measured time in (\d+) `).FindStringSubmatch(part)
	if m == nil {
		t.Fatalf("no summary of the predictions from the numbers in:\n%s", part)
	}
	median, _ := strconv.Atoi(m[2])
	held, _ := strconv.Atoi(m[3])
	if median > 25 || held < 4 {
		t.Errorf("from CrystalDiskMark's numbers: median error %d %% (want ≤ 25 %%), range held %d of 8 (want ≥ 4)", median, held)
	}
	o := regexp.MustCompile(`order: (\d+) pairs .*predicted order right in (\d+) `).FindStringSubmatch(part)
	if o == nil || o[1] != o[2] {
		t.Errorf("the drives' order from the numbers: %v", o)
	}
}

// A zram device already in use is one line, and the harness stops before
// touching anything.
func TestValidateZramBusy(t *testing.T) {
	requireTracing(t)
	testutil.SizeZram(t, "16M")
	_, stderr, err := runValidate(t, "QUICK=1")
	if err == nil || !strings.Contains(stderr, "zram0 is in use") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("err %v, stderr %q: want one line saying zram0 is busy", err, stderr)
	}
	if got, _ := os.ReadFile("/sys/block/zram0/disksize"); strings.TrimSpace(string(got)) != "16777216" {
		t.Errorf("the harness changed the busy device: disksize %q", got)
	}
}
