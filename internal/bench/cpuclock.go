package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/drive"
)

// The two CPU calibrations (the page cache's CPU per MiB, a wait's
// computation) read on bench's own thread and take its CPU clock, which
// the kernel keeps exact. fio's usr/sys percentages are of its whole job,
// its setup and its helper thread included: on a VM with a 250 Hz tick
// they gave 400 to 2,300 µs per MiB for a cold 256 MiB read, run to run,
// where cat took 80.

// timedReads is what one calibration's reads took.
type timedReads struct {
	cpuUs float64 // the reading thread's CPU time
	// waitUs: its time runnable, waiting for a CPU another held (0 where
	// the system does not tell)
	waitUs float64
	bytes  int64
	wallUs float64
	lats   []float64 // each read call, µs
}

// point is the reads as a measured shape (for progress).
func (r timedReads) point(t Test) drive.Point {
	p := drive.Point{Op: t.Op, Access: t.Access, SizeBytes: t.Size, Depth: t.Depth, Jobs: t.Jobs}
	if len(r.lats) == 0 || r.wallUs <= 0 {
		return p
	}
	s := slices.Clone(r.lats)
	slices.Sort(s)
	var sum float64
	for _, l := range s {
		sum += l
	}
	p.IOPS = round(float64(len(s)) / r.wallUs * 1e6)
	p.MBs = round(float64(r.bytes) / r.wallUs)
	p.LatUs = round(sum / float64(len(s)))
	p.LatP99Us = round(s[min(len(s)-1, len(s)*99/100)])
	return p
}

// threadCPU is the calling thread's CPU time so far (µs).
func threadCPU() (float64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("the thread's CPU clock: %w", err)
	}
	return float64(ts.Nano()) / 1e3, nil
}

// onThread runs read on one OS thread and gives that thread's CPU time,
// its time runnable, and the wall time it took, with what read reports.
func onThread(read func(r *timedReads) error) (timedReads, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r timedReads
	cpu0, err := threadCPU()
	if err != nil {
		return r, err
	}
	wait0, waitOK := threadRunDelay()
	t0 := time.Now()
	if err := read(&r); err != nil {
		return r, err
	}
	r.wallUs = float64(time.Since(t0).Nanoseconds()) / 1e3
	cpu1, err := threadCPU()
	if err != nil {
		return r, err
	}
	r.cpuUs = cpu1 - cpu0
	if wait1, ok := threadRunDelay(); ok && waitOK {
		r.waitUs = max(0, wait1-wait0)
	}
	return r, nil
}

// readSequential reads file from its start in 1 MiB calls, one at a
// time, up to limit bytes or for at most d.
func readSequential(ctx context.Context, file string, limit int64, d time.Duration) (timedReads, error) {
	f, err := os.Open(file)
	if err != nil {
		return timedReads{}, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	return onThread(func(r *timedReads) error {
		deadline := time.Now().Add(d)
		for r.bytes < limit && time.Now().Before(deadline) {
			if err := ctx.Err(); err != nil {
				return err
			}
			t := time.Now()
			n, err := f.Read(buf)
			r.lats = append(r.lats, float64(time.Since(t).Nanoseconds())/1e3)
			r.bytes += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
		if r.bytes == 0 {
			return errors.New("the calibration read nothing")
		}
		return nil
	})
}

// layOutSmallFiles writes n files of size bytes (random data) in dir and
// gives their paths in the order they are read: the same every run,
// not the order they were written (a disk seeks between them as between a
// tree's files).
func layOutSmallFiles(dir string, n int, size int) ([]string, error) {
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, n)
	for i := range paths {
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("f%04d", i))
		if err := os.WriteFile(paths[i], data, 0o600); err != nil {
			return nil, fmt.Errorf("cannot write in %s: %w", dir, UnwrapPath(err))
		}
	}
	rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	return paths, nil
}

// readSmallFiles reads each file whole, one open at a time.
func readSmallFiles(ctx context.Context, paths []string, size int) (timedReads, error) {
	return readFiles(ctx, paths, size, os.Open, make([]byte, size))
}

// readSmallFilesDirect reads them the same way with direct I/O: the
// device's own time with a read's, no page cache. ok is false where the
// file system takes no direct I/O.
func readSmallFilesDirect(ctx context.Context, paths []string, size int) (r timedReads, ok bool, err error) {
	if len(paths) == 0 {
		return r, false, nil
	}
	f, err := openDirect(paths[0])
	if err != nil {
		return r, false, nil
	}
	f.Close()
	r, err = readFiles(ctx, paths, size, openDirect, alignedBuffer(size))
	return r, err == nil, err
}

// readFiles reads each file whole into buf, opened with open.
func readFiles(ctx context.Context, paths []string, size int, open func(string) (*os.File, error), buf []byte) (timedReads, error) {
	return onThread(func(r *timedReads) error {
		for _, p := range paths {
			if err := ctx.Err(); err != nil {
				return err
			}
			t := time.Now()
			f, err := open(p)
			if err != nil {
				return err
			}
			n, err := io.ReadFull(f, buf[:size])
			f.Close()
			r.lats = append(r.lats, float64(time.Since(t).Nanoseconds())/1e3)
			r.bytes += int64(n)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return nil
	})
}
