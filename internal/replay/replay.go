package replay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/bench"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/units"
)

// Result is the original's shape beside the replay's (replay --json).
type Result struct {
	Original string       `json:"original"`
	Replay   string       `json:"replay"`
	Path     string       `json:"path"`
	Mode     string       `json:"mode"`
	Layer    string       `json:"layer"`
	Checks   []ShapeCheck `json:"checks"`
}

// ShapeCheck is one figure of the original beside the replay's.
type ShapeCheck struct {
	Name     string  `json:"name"`
	Original float64 `json:"original"`
	Replay   float64 `json:"replay"`
	Within   string  `json:"within"`
	OK       bool    `json:"ok"`
}

func TraceName(id, path string) string {
	if id != "" {
		return id
	}
	return filepath.Base(path)
}

// Dir makes a new directory for the replay under dir, which must be a
// writable directory whose path fio can take (no white space: fio's iolog
// names files by path).
func Dir(dir string) (string, error) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return "", fmt.Errorf("--dir %s: %w", dir, bench.UnwrapPath(err))
	case !st.IsDir():
		return "", fmt.Errorf("--dir %s is not a directory", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(abs, " \t\n") {
		return "", fmt.Errorf("--dir %q: fio cannot take a path with spaces; use a directory without them", abs)
	}
	work, err := os.MkdirTemp(abs, "ioshape-replay-")
	if err != nil {
		return "", fmt.Errorf("cannot write in %s: %w", abs, bench.UnwrapPath(err))
	}
	return work, nil
}

// Prepare writes the export into work, lays out the files fio will
// use (untraced, so that the replay's trace holds only the workload), and
// returns the fio command line to record.
func Prepare(ctx context.Context, t *analysis.Trace, mode, fio, work string, watch analysis.Watch, log io.Writer) ([]string, error) {
	if mode == "iolog" {
		return prepareIolog(ctx, t, fio, work, watch, log)
	}
	jobFile := filepath.Join(work, replayJob)
	var jobs []export.Job
	if err := createWith(jobFile, func(w io.Writer) (err error) {
		jobs, err = analysis.ExportFioJob(ctx, t, w, false, watch)
		return err
	}); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, errors.New("the trace has no reads or writes to replay")
	}
	var need int64
	for _, j := range jobs {
		need += j.SizeBytes
	}
	if err := bench.RoomFor(work, need); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "laying out %d fio job files in %s\n", len(jobs), work)
	layout := exec.CommandContext(ctx, fio, "--directory="+work, "--create_only=1", "--output=/dev/null", jobFile)
	if out, err := layout.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("fio could not lay out the replay's files: %s", firstLine(out, err))
	}
	return []string{fio, "--directory=" + work, "--output=" + filepath.Join(work, replayReport), "--output-format=json", jobFile}, nil
}

func prepareIolog(ctx context.Context, t *analysis.Trace, fio, work string, watch analysis.Watch, log io.Writer) ([]string, error) {
	l, err := analysis.CollectIolog(ctx, t, work, watch)
	if err != nil {
		return nil, err
	}
	// Threads that issued synchronous I/O side by side replay as a job
	// each, in their own order.
	logs, x, err := analysis.WriteThreadLogs(l, filepath.Join(work, replayLog), createWith)
	if err != nil {
		return nil, err
	}
	files := x.Files
	if x.IOs == 0 {
		return nil, errors.New("the trace has no reads or writes to replay")
	}
	var total int64
	for _, file := range files {
		total += file.Size
	}
	if err := bench.RoomFor(work, total); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "writing %d files (%s) for the iolog in %s\n", len(files), units.Bytes(total), work)
	if len(logs) > 1 {
		fmt.Fprintf(log, "%d threads issued synchronous I/O side by side: a log and a fio job each\n", len(logs))
	}
	for _, file := range files {
		if err := fillFile(file.Name, file.Size); err != nil {
			return nil, err
		}
	}
	// The page cache is dropped before the recording (--cold).
	// fio's global options come before the jobs: after a --name they
	// would be that job's.
	return append([]string{fio, "--output=" + filepath.Join(work, replayReport), "--output-format=json"}, IologArgs(logs, x)...), nil
}

// IologArgs are fio's arguments to replay iologs as the application
// issued them: a job per log (a thread's, or the whole trace's), buffered
// or direct, synchronously or through a queue deep enough for any depth
// it reached.
func IologArgs(logs []string, x analysis.IologExport) []string {
	var args []string
	for i, log := range logs {
		name := "replay"
		if len(logs) > 1 {
			name = fmt.Sprintf("t%d", i+1)
		}
		args = append(args, "--name="+name, "--read_iolog="+log)
		if x.Async && len(logs) == 1 {
			args = append(args, "--ioengine=libaio", fmt.Sprintf("--iodepth=%d", x.Depth))
		} else {
			args = append(args, "--ioengine=psync")
		}
		if len(logs) > 1 && i < len(x.DirectThreads) && x.DirectThreads[i] || len(logs) == 1 && x.Direct {
			args = append(args, "--direct=1")
		}
	}
	return args
}

// createWith creates the file at path and has write fill it.
func createWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fillFile writes size bytes of data to a new file, rounded up to 4 KiB:
// reads of a sparse file would never reach the drive.
func fillFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + 1) // not zeros: some drives compress or skip them
	}
	size = (size + 4095) / 4096 * 4096
	for left := size; left > 0; left -= int64(len(buf)) {
		if _, err := f.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func firstLine(out []byte, err error) string {
	s := strings.TrimSpace(string(out))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return err.Error()
	}
	return s
}

// The replay directory's own files, beside the data files.
const (
	replayJob    = "replay.fio"
	replayLog    = "replay.iolog"
	replayReport = "fio.json"
)

// DataInodes are the inodes of the files in the replay's directory: the
// replay's own I/O, as against fio's reading of its job file, libraries
// and /proc.
func DataInodes(dir string) map[uint64]bool {
	inodes := map[uint64]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == replayJob || e.Name() == replayLog || e.Name() == replayReport {
			continue
		}
		if info, err := e.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				inodes[uint64(st.Ino)] = true
			}
		}
	}
	return inodes
}

// Compare profiles both traces and sets their shapes side by side,
// on the syscall layer (what was asked for) when the original has one. Of
// the replay's syscall layer only the I/O on its data files counts.
func Compare(ctx context.Context, original, replay *analysis.Trace, data map[uint64]bool, watch analysis.Watch) (*Result, error) {
	a, err := analysis.Profile(ctx, original, profile.Options{}, watch)
	if err != nil {
		return nil, err
	}
	rb := profile.NewBuilder(profile.Options{})
	if _, err := replay.Events(ctx, "profiling the replay", watch, func(e *event.Event) error {
		if e.Layer != event.Syscall || data[e.Inode] {
			rb.Add(e)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	b := rb.Finish()
	la, lb, layer := a.Syscall, b.Syscall, "syscall"
	if la == nil || la.IOs == 0 {
		la, lb, layer = a.Block, b.Block, "block"
	}
	if la == nil || lb == nil || la.IOs == 0 || lb.IOs == 0 {
		return nil, fmt.Errorf("the replay recorded no %s-layer I/O to compare", layer)
	}
	r := &Result{Layer: layer}
	add := func(name string, x, y float64, within string, ok bool) {
		r.Checks = append(r.Checks, ShapeCheck{Name: name, Original: x, Replay: y, Within: within, OK: ok})
	}
	add("size p50 (bytes)", float64(la.SizeBytes.P50), float64(lb.SizeBytes.P50), "equal", la.SizeBytes.P50 == lb.SizeBytes.P50)
	qa, qb := la.QueueDepth.P50, lb.QueueDepth.P50
	// A median depth of N threads side by side drops by one whenever a
	// thread spends part of its time between calls (computing, or waiting
	// for a CPU on a loaded machine): fio replays each thread's I/O in its
	// order, not their interleaving, so one is what a replay can promise
	// at low depths, and 20 % at high ones.
	add("requested queue depth p50", qa, qb, "20% or 1", math.Abs(qb-qa) <= max(0.2*qa, 1)+1e-9)
	add("sequential share", la.SequentialFraction, lb.SequentialFraction, "10 points", math.Abs(lb.SequentialFraction-la.SequentialFraction) <= 0.10)
	ra, rr := la.ReadFractionByBytes, lb.ReadFractionByBytes
	add("read share (bytes)", ra, rr, "5 points", math.Abs(rr-ra) <= 0.05)
	add("duration (s)", la.SpanS, lb.SpanS, "", true)
	return r, nil
}

// WriteText prints the shapes side by side.
func WriteText(w io.Writer, r *Result) {
	fmt.Fprintf(w, "Replay %s of %s (%s layer)\n", r.Replay, r.Original, r.Layer)
	for _, c := range r.Checks {
		mark := "ok (within " + c.Within + ")"
		switch {
		case c.Within == "":
			mark = ""
		case !c.OK:
			mark = "DIFFERS (by more than " + c.Within + ")"
		}
		fmt.Fprintf(w, "  %-26s %12s  replay %12s   %s\n", c.Name, units.Num(c.Original, 3), units.Num(c.Replay, 3), mark)
	}
}
