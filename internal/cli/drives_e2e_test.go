//go:build linux && e2e

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/testutil"
)

// The model drives are real block devices with the behaviour they model,
// as ioshape records them: on the portable-HDD model random 4 KiB reads
// across the whole disk wait longer than within 64 MiB (the head seeks
// further), and a faster spindle shortens both; on the single-command USB
// bridge a request at depth 16 takes about 16 times as long as at depth 1
// (it takes one command at a time), its queue held by the host (at most 4
// at the device).
func TestModelDrivesBehaveAsModelled(t *testing.T) {
	requireTracing(t)
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testutil.Unavailable(t, "no FUSE: the model drives cannot be set up")
	}
	script := testutil.Repo(t, "scripts", "validation-drives.sh")
	// reads lays out a file of size on the drive at dir (once: it is
	// written at the model's speed) and returns the drive's block layer
	// as ioshape saw fio's random 4 KiB reads of it.
	reads := func(t *testing.T, dir, size string, fio ...string) *profile.Layer {
		t.Helper()
		file := filepath.Join(dir, "data")
		if _, err := os.Stat(file); err != nil {
			if out, err := exec.Command("fio", "--name=lay", "--filename="+file, "--size="+size, "--rw=write", "--bs=1M", "--direct=1", "--output=/dev/null").CombinedOutput(); err != nil {
				t.Fatalf("fio: %v %s", err, out)
			}
		}
		store := t.TempDir()
		id, _ := record(t, store, append([]string{"--layers", "block", "--", "fio", "--name=r", "--filename=" + file, "--direct=1",
			"--rw=randread", "--bs=4k", "--runtime=3", "--time_based", "--output=/dev/null"}, fio...)...)
		s := showJSON(t, store, id)
		// The model drive's own requests (fio also reads its binary and
		// libraries from the VM disk).
		for _, d := range s.Profile.Devices {
			if d.Mount == dir && d.Block != nil {
				if d.Block.IOs < 50 {
					t.Fatalf("the drive saw %d I/Os", d.Block.IOs)
				}
				return d.Block
			}
		}
		t.Fatalf("no device mounted at %s in the trace", dir)
		return nil
	}
	latency := func(t *testing.T, dir, size string, fio ...string) float64 {
		t.Helper()
		return reads(t, dir, size, fio...).LatencyUs.P50
	}
	setup := func(t *testing.T, env []string, drive string) string {
		t.Helper()
		exec.Command("bash", script, "down").Run()
		c := exec.Command("bash", script, "up", drive)
		// 1 GiB drives: quicker to make (ext4 without lazy initialisation
		// writes its tables at the model's speed), the same behaviour.
		c.Env = append(append(os.Environ(), "DRIVESIM_SIZE=1073741824"), env...)
		out, err := c.CombinedOutput()
		if err != nil {
			testutil.Unavailable(t, "the %s model drive could not be set up: %v %s", drive, err, out)
		}
		t.Cleanup(func() { exec.Command("bash", script, "down").Run() })
		f := strings.Fields(string(out))
		return f[len(f)-1]
	}
	t.Run("hdd", func(t *testing.T) {
		dir := setup(t, nil, "hdd")
		near := latency(t, dir, "768M", "--size=64M")
		far := latency(t, dir, "768M")
		t.Logf("HDD 5,400 rpm: p50 latency within 64 MiB %.0f µs, across 768 MiB %.0f µs", near, far)
		if far < 1.2*near {
			t.Errorf("a farther seek is not slower: within 64 MiB %.0f µs, across 768 MiB %.0f µs", near, far)
		}
		// Within 64 MiB: a shorter seek and a shorter turn.
		dir = setup(t, []string{"DRIVESIM_HDD=--rpm 10000 --full-stroke 8ms"}, "hdd")
		fast := latency(t, dir, "64M")
		t.Logf("HDD 10,000 rpm, 8 ms full stroke: within 64 MiB %.0f µs", fast)
		if fast > 0.8*near {
			t.Errorf("a faster drive is not faster: %.0f µs against %.0f µs", fast, near)
		}
	})
	t.Run("usb", func(t *testing.T) {
		dir := setup(t, nil, "usb")
		qd1 := latency(t, dir, "64M")
		deep := reads(t, dir, "64M", "--ioengine=libaio", "--iodepth=16")
		qd16 := deep.LatencyUs.P50
		t.Logf("USB bridge: p50 latency at depth 1 %.0f µs, at depth 16 %.0f µs", qd1, qd16)
		if qd1 < 1000 || qd16 < 8*qd1 {
			t.Errorf("one command at a time: depth 1 %.0f µs (want ≥ 1 ms), depth 16 %.0f µs (want about 16× as long)", qd1, qd16)
		}
		// The queue is the host's, as in front of a real USB disk: the
		// requests wait in the scheduler (sorted, merged), a few at the
		// device.
		if deep.DeviceQueueDepth == nil || deep.DeviceQueueDepth.Max > 4 || deep.QueueDepth.P50 < 8 {
			t.Errorf("at depth 16, %+v in the queue and %+v at the device: want the queue in the host, at most 4 at the device", deep.QueueDepth, deep.DeviceQueueDepth)
		}
	})
}
