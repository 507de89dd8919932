package analysis

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/export"
)

// IologExport is what ExportIolog wrote.
type IologExport struct {
	Files  []export.File
	IOs    int
	Layer  event.Layer
	Direct bool // replay with direct I/O, as the application did
	Async  bool // replay through an asynchronous engine
	Depth  int  // with Async, the most in flight
	// Threads, when set, are the threads that issued synchronous I/O side
	// by side: a log each replays them in order (export.Iolog.Threads),
	// with direct I/O where DirectThreads says the thread's was.
	Threads       []uint32
	DirectThreads []bool
}

// CollectIolog reads the trace into an iolog, its files named under dir
// if dir is set.
func CollectIolog(ctx context.Context, t *Trace, dir string, watch Watch) (*export.Iolog, error) {
	l := &export.Iolog{Dir: dir}
	if _, err := t.Events(ctx, "exporting", watch, func(e *event.Event) error {
		l.Add(e)
		return nil
	}); err != nil {
		return nil, err
	}
	return l, nil
}

// Describe says how an iolog replays, after its logs were written;
// threads are l.Threads().
func Describe(l *export.Iolog, threads []uint32, files []export.File, ios int) IologExport {
	x := IologExport{Files: files, IOs: ios, Layer: l.Layer(), Threads: threads}
	for _, tid := range x.Threads {
		x.DirectThreads = append(x.DirectThreads, l.DirectThread(tid))
	}
	x.Direct, x.Async, x.Depth = l.ReplayMode()
	return x
}

// ExportIolog writes the trace as a fio version 3 iolog (see
// export.Iolog), its files named under dir if dir is set.
func ExportIolog(ctx context.Context, t *Trace, dir string, w io.Writer, watch Watch) (IologExport, error) {
	l, err := CollectIolog(ctx, t, dir, watch)
	if err != nil {
		return IologExport{}, err
	}
	files, n, err := l.Write(w)
	return Describe(l, l.Threads(), files, n), err
}

// ExportFioJob writes a fio job file with the shape of the trace: one job
// per classified phase, in order, or with byProgram one per actor
// (program), side by side. It returns the jobs written. It reads the trace
// twice, from one open file: the parts are known only once it is
// classified.
func ExportFioJob(ctx context.Context, t *Trace, w io.Writer, byProgram bool, watch Watch) ([]export.Job, error) {
	class, err := Classify(ctx, t, classify.Options{}, watch)
	if err != nil {
		return nil, err
	}
	jobs := export.NewJobSplit(class, byProgram)
	if _, err := t.Events(ctx, "exporting", watch, func(e *event.Event) error {
		jobs.Add(e)
		return nil
	}); err != nil {
		return nil, err
	}
	meta := t.Meta()
	title := "trace " + meta.Header.ID
	if meta.Header.Label != "" {
		title += " (" + meta.Header.Label + ")"
	}
	return jobs.Write(w, title)
}

// ExportRows writes every I/O of the trace as a row (Parquet or CSV, as rw
// is) and returns how many.
func ExportRows(ctx context.Context, t *Trace, id string, rw export.RowWriter, watch Watch) (int64, error) {
	m := export.NewRowMaker(t.Meta(), id)
	var row export.Row
	var n int64
	if _, err := t.Events(ctx, "exporting", watch, func(e *event.Event) error {
		if !e.IsIO() {
			return nil
		}
		m.Row(e, &row)
		n++
		return rw.Write(&row)
	}); err != nil {
		return n, err
	}
	return n, rw.Close()
}

// WriteThreadLogs writes l as a log per thread (base.t1…) when its threads
// issued synchronous I/O side by side, else as one log, base; it returns
// the logs' names and what they hold.
func WriteThreadLogs(l *export.Iolog, base string, create func(name string, write func(io.Writer) error) error) ([]string, IologExport, error) {
	threads := l.Threads()
	if len(threads) == 0 {
		var files []export.File
		var n int
		err := create(base, func(w io.Writer) (err error) {
			files, n, err = l.Write(w)
			return err
		})
		return []string{base}, Describe(l, nil, files, n), err
	}
	var logs []string
	var files []export.File
	total := 0
	for i, tid := range threads {
		name := fmt.Sprintf("%s.t%d", base, i+1)
		err := create(name, func(w io.Writer) error {
			fs, n, err := l.WriteThread(w, tid)
			files, total = fs, total+n
			return err
		})
		if err != nil {
			return nil, IologExport{}, err
		}
		logs = append(logs, name)
	}
	return logs, Describe(l, threads, files, total), nil
}

// ExportDatasetPart writes the trace's rows as its part of the dataset
// at root (see export.DatasetPartition), through a temporary file renamed
// into place; a trace already there is left as it is (written false).
// as runs the file system operations as the dataset's owner (nil: as this
// process).
func ExportDatasetPart(ctx context.Context, t *Trace, root, id string, as func(func() error) error, watch Watch) (path string, rows int64, written bool, err error) {
	if as == nil {
		as = func(fn func() error) error { return fn() }
	}
	dir := filepath.Join(root, export.DatasetPartition(t.Meta(), id))
	path = filepath.Join(dir, "part-0.parquet")
	if _, err := os.Lstat(path); err == nil {
		return path, 0, false, nil
	}
	var f *os.File
	if err := as(func() (err error) {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		f, err = os.CreateTemp(dir, ".part-*.tmp")
		return err
	}); err != nil {
		return path, 0, false, err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	rows, err = ExportRows(ctx, t, id, export.NewDatasetWriter(bw), watch)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = as(func() error {
			os.Chmod(f.Name(), 0o644)
			return os.Rename(f.Name(), path)
		})
	}
	return path, rows, err == nil, err
}
