package bench

import (
	"context"
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
	wakeRuns      = 5
)

// measureWake is the computation a wait for the drive adds to its waiter
// (µs per read the device served): the time on a CPU, or runnable waiting
// for one, of reading small files one after another from a cold cache,
// less the same reads from a warm one — and, on a bio-based device, less
// the device's own time, which predict counts as the drive's. A trace
// holds both as the thread's computation: cp -r of /usr/include waited
// 0.19 s for a CPU on the HDD model (its FUSE server and loop worker
// share the two), 4 ms on the VM disk; this reader 7–12 µs a read on the
// HDD model, 0–2 on the VM disk. After each wait the reader runs cold
// (its caches, the CPU's idle state, whatever else the drive keeps busy —
// a USB bridge's or a disk's driver): grep over a tree of headers spent 0.38 s
// on the CPU reading from the VM disk and 0.67 s from a single-command USB
// model, the same 8,900 waits. The median of wakeRuns runs; ok is false
// where it cannot be measured (not root: the cache cannot be dropped; the
// device's counters unknown).
func measureWake(ctx context.Context, dir, dev string, synchronous bool) (us float64, pt drive.Point, ok bool, err error) {
	if _, counted := deviceReads(dev); !counted || os.Geteuid() != 0 {
		return 0, pt, false, nil // nothing to divide by, or no cache to drop: not worth the files
	}
	tmp, err := os.MkdirTemp(dir, ".ioshape-bench-files-*")
	if err != nil {
		return 0, pt, false, fmt.Errorf("cannot write in %s: %w", dir, UnwrapPath(err))
	}
	defer os.RemoveAll(tmp)
	paths, err := layOutSmallFiles(tmp, wakeFiles, wakeFileBytes)
	if err != nil {
		return 0, pt, false, err
	}
	if _, err := readSmallFiles(ctx, paths, wakeFileBytes); err != nil { // every page in the cache
		return 0, pt, false, err
	}
	var runs []float64
	for range wakeRuns {
		warm, err := readSmallFiles(ctx, paths, wakeFileBytes)
		if err != nil {
			return 0, pt, false, err
		}
		if dropCaches() != nil {
			return 0, pt, false, nil
		}
		before, ok1 := deviceReads(dev)
		cold, err := readSmallFiles(ctx, paths, wakeFileBytes)
		if err != nil {
			return 0, pt, false, err
		}
		after, ok2 := deviceReads(dev)
		n := after.ios - before.ios
		if !ok1 || !ok2 || n < wakeFiles/2 {
			return 0, pt, false, nil
		}
		// What the cold run is set against: the same reads from the cache.
		// On a bio-based device its own time is the caller's, and predict
		// counts it as the drive's: there, the same reads direct (the
		// device's time, and a read's) — not its counters, which count such
		// a device in jiffies (4 ms here, against zram's 2.5 ms for the 500
		// reads: zram's came out 0 and 4–5 µs run to run).
		ref := warm.cpuUs + warm.waitUs
		if synchronous {
			direct, ok, err := readSmallFilesDirect(ctx, paths, wakeFileBytes)
			switch {
			case err != nil:
				return 0, pt, false, err
			case ok:
				ref = direct.cpuUs + direct.waitUs
			default:
				ref += (after.ms - before.ms) * 1e3
			}
		}
		extra := cold.cpuUs + cold.waitUs - ref
		runs, pt = append(runs, max(0, extra)/float64(n)), cold.point(wakeTest)
	}
	return round(median(runs)), pt, true, nil
}
