package bench

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/ioshape/ioshape/internal/drive"
)

// wakeTest is the wake-up calibration: small files read one after
// another, each its own wait.
var wakeTest = Test{Op: "read", Access: "rand", Size: wakeFileBytes, Depth: 1, Jobs: 1, Buffered: true, SmallFiles: true}

const (
	wakeFiles     = 500
	wakeFileBytes = 4 << 10
	wakeRuns      = 3
)

// measureWake is the computation a wait for the drive adds to its waiter
// (µs per read the device served): fio's CPU time reading small files
// one after another from a cold cache, less the same reads from a warm one
// — and, on a bio-based device, less the device's own time, which predict
// counts as the drive's. After each wait the reader runs cold (its caches,
// the CPU's idle state, whatever else the drive keeps busy — a USB
// bridge's or a disk's driver): grep over a tree of headers spent 0.38 s
// on the CPU reading from the VM disk and 0.67 s from a single-command USB
// model, the same 8,900 waits. The median of three runs; ok is false where
// it cannot be measured (not root: the cache cannot be dropped; the
// device's counters unknown).
func measureWake(ctx context.Context, fio, dir, dev string, synchronous bool) (us float64, pt drive.Point, ok bool, err error) {
	if _, counted := deviceReads(dev); !counted || os.Geteuid() != 0 {
		return 0, pt, false, nil // nothing to divide by, or no cache to drop: not worth the files
	}
	tmp, err := os.MkdirTemp(dir, ".ioshape-bench-files-*")
	if err != nil {
		return 0, pt, false, fmt.Errorf("cannot write in %s: %w", dir, UnwrapPath(err))
	}
	defer os.RemoveAll(tmp)
	if _, _, err := smallFilesCPU(ctx, fio, tmp, true); err != nil { // lays them out
		return 0, pt, false, err
	}
	var runs []float64
	for range wakeRuns {
		warm, _, err := smallFilesCPU(ctx, fio, tmp, false)
		if err != nil {
			return 0, pt, false, err
		}
		if dropCaches() != nil {
			return 0, pt, false, nil
		}
		before, ok1 := deviceReads(dev)
		cold, p, err := smallFilesCPU(ctx, fio, tmp, false)
		if err != nil {
			return 0, pt, false, err
		}
		after, ok2 := deviceReads(dev)
		n := after.ios - before.ios
		if !ok1 || !ok2 || n < wakeFiles/2 {
			return 0, pt, false, nil
		}
		extra := cold - warm
		if synchronous {
			extra -= (after.ms - before.ms) * 1e3
		}
		runs, pt = append(runs, max(0, extra)/float64(n)), p
	}
	return round(median(runs)), pt, true, nil
}

// smallFilesCPU reads wakeFiles files of wakeFileBytes in dir whole, one
// open at a time, in an order that is the same every run (a disk seeks
// between them as between a tree's files), and gives fio's CPU time (µs);
// layout only writes them.
func smallFilesCPU(ctx context.Context, fio, dir string, layout bool) (cpuUs float64, pt drive.Point, err error) {
	args := []string{"--name=ioshape-bench", "--directory=" + dir, fmt.Sprintf("--nrfiles=%d", wakeFiles),
		fmt.Sprintf("--filesize=%d", wakeFileBytes), fmt.Sprintf("--bs=%d", wakeFileBytes), "--rw=read",
		"--ioengine=psync", "--direct=0", "--openfiles=1", "--file_service_type=random", "--invalidate=0",
		"--output-format=json"}
	if layout {
		args = append(args, "--create_only=1", "--refill_buffers=1")
	}
	out, err := runFio(ctx, fio, args)
	if err != nil || layout {
		return 0, pt, err
	}
	r, err := decodeFio(out)
	if err != nil {
		return 0, pt, err
	}
	if pt, err = pointOf(r, wakeTest); err != nil {
		return 0, pt, err
	}
	j := r.Jobs[0]
	if j.Read.IOBytes <= 0 {
		return 0, pt, errors.New("fio read nothing")
	}
	return (j.UsrCPU + j.SysCPU) / 100 * float64(j.Read.RuntimeMs) * 1e3, pt, nil
}
