package bench

import (
	"context"
	"errors"
	"os/exec"
	"time"

	"github.com/ioshape/ioshape/internal/drive"
)

// idleLengths are the idles measureIdleWake tries: a queue-depth-1 read
// of an SSD, of a USB bridge, a disk's seek, a disk's short fsync, and
// its long one (a file's data, then the journal, each a seek and a
// rotation: 50 ms on the HDD model). The cost keeps growing with the
// idle: the validation's five drive profiles on this project's fifth VM
// had 0.08–0.12 ms more after 16 ms and 0.25–0.35 after 64 — beyond the
// longest measured the longest's stands, so the longest is as long as a
// disk's waits come.
var idleLengths = []time.Duration{250 * time.Microsecond, time.Millisecond, 4 * time.Millisecond, 16 * time.Millisecond, 64 * time.Millisecond}

// idleRounds is how many times each idle is tried, one of each in turn
// (the machine's drift falls on all alike): about 12 s in all, both tasks (12.3 s in TestMeasureIdleWake here).
const idleRounds = 60

// measureIdleWake is how much longer a short task takes when the machine
// idled before it: a process started and waited for (the system's true),
// right after sleeping for each of idleLengths, against right after the
// last one — and a longer one (a shell starting true three times), whose
// extra grows past the short one's: the more that runs cold, the more it
// pays (2.0 times true's after 57 ms, for 4.3 times its length, on this
// project's VM). The computation after a wait for a drive runs cold — the
// CPUs' caches, their idle states, a virtual machine's halted CPUs woken by
// the host: a process started after 16 ms asleep took 1.25 ms on the VM
// this was built on, 0.9 ms back to back; 300 fsync'd files, each written
// by a new dd, took 0.77 ms more a file behind the disk model than behind
// zram, outside the waits. The medians; ok is false where there is no
// true to run.
func measureIdleWake(ctx context.Context) (w drive.IdleWake, ok bool, err error) {
	bin, err := exec.LookPath("true")
	if err != nil {
		return w, false, nil
	}
	short, long := []string{bin}, []string(nil)
	if sh, err := exec.LookPath("sh"); err == nil {
		long = []string{sh, "-c", bin + "; " + bin + "; " + bin}
	}
	task := func(argv []string) (float64, error) {
		t := time.Now()
		if err := exec.CommandContext(ctx, argv[0], argv[1:]...).Run(); err != nil {
			return 0, err
		}
		return float64(time.Since(t).Nanoseconds()) / 1e3, nil
	}
	// busy: each task right after itself; after: after each idle.
	type series struct {
		argv  []string
		busy  []float64
		after [][]float64
	}
	tasks := []*series{{argv: short, after: make([][]float64, len(idleLengths))}}
	if long != nil {
		tasks = append(tasks, &series{argv: long, after: make([][]float64, len(idleLengths))})
	}
	for range idleRounds {
		for _, s := range tasks {
			if _, err := task(s.argv); err != nil { // warms it up
				return w, false, errIdleTask(ctx, err)
			}
			us, err := task(s.argv)
			if err != nil {
				return w, false, errIdleTask(ctx, err)
			}
			s.busy = append(s.busy, us)
			for i, l := range idleLengths {
				time.Sleep(l)
				us, err := task(s.argv)
				if err != nil {
					return w, false, errIdleTask(ctx, err)
				}
				s.after[i] = append(s.after[i], us)
			}
		}
	}
	w.TaskUs = round(median(tasks[0].busy))
	for i, l := range idleLengths {
		w.Points = append(w.Points, drive.IdlePoint{IdleUs: float64(l.Microseconds()), ExtraUs: round(max(0, median(tasks[0].after[i])-w.TaskUs))})
	}
	if len(tasks) > 1 {
		w.LongTaskUs = round(median(tasks[1].busy))
		for i := range idleLengths {
			w.Points[i].LongExtraUs = round(max(0, median(tasks[1].after[i])-w.LongTaskUs))
		}
	}
	return w, true, nil
}

func errIdleTask(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New("bench: the idle wake-up's task (true, or sh running it) failed: " + err.Error())
}
