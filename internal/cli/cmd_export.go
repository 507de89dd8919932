package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/replay"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/units"
)

type exportOptions struct {
	iolog, job   string
	parquet, csv string
	by           string
	json         bool
	perThread    bool
	dataset      bool
	all          bool
}

func newExportCommand(g *globals) *cobra.Command {
	o := &exportOptions{}
	c := &cobra.Command{
		Use:   "export <trace> (--fio-job FILE | --fio-iolog FILE | --parquet FILE | --csv FILE | --parquet DIR --dataset)",
		Short: "Write a trace for other tools: fio (a job with its shape, an iolog that replays it), Parquet or CSV (one row per I/O)",
		Long: `Export --parquet (or --csv) writes one row per I/O with the event model's
fields, for DuckDB, pandas/Polars or Spark: trace_id, host, label, layer, time,
start_ns, dispatch_ns, end_ns, latency_ns, op, call, flags, device, major,
minor, inode, byte_offset, size, bytes, errno, pid, tid, comm, kernel (types
and meanings in docs/export-columns.md). What the trace cannot show is null.

Export --parquet DIR --dataset adds traces (those named, or --all of the
store's) to a hive-partitioned dataset, DIR/host=…/date=…/trace=…/: one table
for a fleet that DuckDB and Spark read whole; a trace already there is kept.

Export --fio-job writes a fio job file with the trace's shape: one job per
phase classify finds, run in order (--by program: one per program, side by side),
each with the sizes (bssplit), read share (rwmixread), random share
(percentage_random), requested depth (iodepth with libaio when the I/O was
asynchronous, else numjobs threads), think time and amount of its recorded I/O.

Export --fio-iolog writes fio's version 3 iolog of the recorded I/O: the reads,
writes and flushes the traced processes asked for (the block layer's when the
trace has none), in the order they were issued, with their times. Each recorded
file becomes f1.dat, f2.dat… sized to the span the trace touched; the files and
a fio command line that replays the log are printed on stderr. Where threads
issued synchronous I/O side by side, order within each thread matters: with
--per-thread, FILE.t1, FILE.t2… hold a log per thread, replayed as one fio job
each, together.`,
		Example: `  ioshape export launch-cold --fio-job launch.fio
  fio launch.fio
  ioshape export launch-cold --fio-iolog launch.iolog
  fio --name=replay --read_iolog=launch.iolog --ioengine=libaio --iodepth=4 --direct=1
  ioshape export launch-cold --parquet launch.parquet
  duckdb -c "SELECT host, avg(latency_ns) FROM 'traces/*.parquet' GROUP BY host"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.dataset {
				return nil
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.dataset {
				return runDataset(cmd.Context(), g, o, args)
			}
			return runExport(cmd.Context(), g, o, args[0])
		},
	}
	c.Flags().StringVar(&o.iolog, "fio-iolog", "", "write a fio version 3 iolog here (- for standard output)")
	c.Flags().StringVar(&o.job, "fio-job", "", "write a fio job file with the trace's shape here (- for standard output)")
	c.Flags().StringVar(&o.by, "by", "phase", "with --fio-job: one job per phase (in order) or per program (side by side)")
	c.Flags().StringVar(&o.parquet, "parquet", "", "write one row per I/O as Parquet here (- for standard output)")
	c.Flags().StringVar(&o.csv, "csv", "", "write one row per I/O as CSV here (- for standard output)")
	c.Flags().BoolVar(&o.json, "json", false, "with --fio-job: print the jobs written as JSON on standard output")
	c.Flags().BoolVar(&o.dataset, "dataset", false, "with --parquet DIR: add the traces to a hive-partitioned dataset there (host=…/date=…/trace=…)")
	c.Flags().BoolVar(&o.all, "all", false, "with --dataset: every trace in the store")
	c.Flags().BoolVar(&o.perThread, "per-thread", false, "with --fio-iolog FILE: a log per thread (FILE.t1, FILE.t2…) where threads issued synchronous I/O side by side")
	return c
}

func runExport(ctx context.Context, g *globals, o *exportOptions, arg string) error {
	set := 0
	for _, f := range []string{o.iolog, o.job, o.parquet, o.csv} {
		if f != "" {
			set++
		}
	}
	switch {
	case set != 1:
		return usageError{errors.New("say what to export, once: --fio-job FILE, --fio-iolog FILE, --parquet FILE or --csv FILE")}
	case o.by != "phase" && o.by != "program":
		return usageError{fmt.Errorf("--by %q: say phase or program", o.by)}
	case o.json && (o.job == "" || o.job == "-"):
		return usageError{errors.New("--json goes with --fio-job FILE (a file, as the JSON takes standard output)")}
	case o.perThread && (o.iolog == "" || o.iolog == "-"):
		return usageError{errors.New("--per-thread goes with --fio-iolog FILE (a file: it writes FILE.t1, FILE.t2…)")}
	}
	t, err := g.open(arg)
	if err != nil {
		return err
	}
	defer t.Close()
	if o.job != "" {
		return exportJob(ctx, g, o, t, arg)
	}
	if o.parquet != "" || o.csv != "" {
		return exportRows(ctx, g, o, t)
	}
	if o.perThread {
		return exportThreadLogs(ctx, g, o.iolog, t, arg)
	}
	var x analysis.IologExport
	err = g.writeOutput(ctx, o.iolog, func(w io.Writer) error {
		var err error
		x, err = analysis.ExportIolog(ctx, t, "", w, g.watch)
		return err
	})
	if err != nil {
		return err
	}
	files, n := x.Files, x.IOs
	if n == 0 {
		return fmt.Errorf("%s: no reads or writes to export", arg)
	}
	printIologFiles(g, n, files)
	fmt.Fprintf(g.stderr, "replay, in a directory holding those files: fio %s\n", strings.Join(replay.IologArgs([]string{o.iolog}, x), " "))
	if len(x.Threads) > 1 {
		fmt.Fprintf(g.stderr, "note: %d threads issued synchronous I/O side by side; --per-thread writes a log for each, to replay each in its own order\n", len(x.Threads))
	}
	return nil
}

// exportThreadLogs writes a log per thread, base.t1, base.t2…, or one
// log (base) when the threads' order does not matter.
func exportThreadLogs(ctx context.Context, g *globals, base string, t *analysis.Trace, arg string) error {
	l, err := analysis.CollectIolog(ctx, t, "", g.watch)
	if err != nil {
		return err
	}
	logs, x, err := analysis.WriteThreadLogs(l, base, func(name string, write func(io.Writer) error) error {
		return g.writeOutput(ctx, name, write)
	})
	if err != nil {
		return err
	}
	if x.IOs == 0 {
		return fmt.Errorf("%s: no reads or writes to export", arg)
	}
	printIologFiles(g, x.IOs, x.Files)
	if len(logs) == 1 {
		fmt.Fprintf(g.stderr, "one log (%s): no threads issued synchronous I/O side by side\n", logs[0])
	}
	fmt.Fprintf(g.stderr, "replay, in a directory holding those files: fio %s\n", strings.Join(replay.IologArgs(logs, x), " "))
	return nil
}

func printIologFiles(g *globals, n int, files []export.File) {
	fmt.Fprintf(g.stderr, "%s I/Os on %d files:", units.Count(int64(n)), len(files))
	for _, f := range files {
		fmt.Fprintf(g.stderr, " %s (%s, %s)", f.Name, f.Dev, units.Bytes(f.Size))
	}
	fmt.Fprintln(g.stderr)
}

func exportJob(ctx context.Context, g *globals, o *exportOptions, t *analysis.Trace, arg string) error {
	var jobs []export.Job
	err := g.writeOutput(ctx, o.job, func(w io.Writer) error {
		var err error
		jobs, err = analysis.ExportFioJob(ctx, t, w, o.by == "program", g.watch)
		return err
	})
	switch {
	case errors.Is(err, classify.ErrNoIO):
		return fmt.Errorf("%s: no reads or writes to export", arg)
	case err != nil:
		return err
	case o.json:
		return writeJSON(g.stdout, jobs)
	}
	fmt.Fprintf(g.stderr, "%d fio jobs:", len(jobs))
	for _, j := range jobs {
		fmt.Fprintf(g.stderr, " %s (%s, %s)", j.Name, j.RW, j.BSSplit)
	}
	fmt.Fprintf(g.stderr, "\nrun it in a directory on the drive to test: fio %s\n", o.job)
	return nil
}

func exportRows(ctx context.Context, g *globals, o *exportOptions, t *analysis.Trace) error {
	out, newWriter, kind := o.parquet, export.NewParquetWriter, "Parquet"
	if o.csv != "" {
		out, newWriter, kind = o.csv, export.NewCSVWriter, "CSV"
	}
	id := ""
	if st := g.storeIfAny(); st != nil {
		id, _ = st.IDOf(t.Path())
	}
	var n int64
	err := g.writeOutput(ctx, out, func(w io.Writer) error {
		var err error
		n, err = analysis.ExportRows(ctx, t, id, newWriter(w), g.watch)
		return err
	})
	if err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(g.stderr, "%s rows (one per I/O) written to %s as %s\n", units.Count(n), out, kind)
	}
	return nil
}

// runDataset adds traces to a hive-partitioned Parquet dataset.
func runDataset(ctx context.Context, g *globals, o *exportOptions, args []string) error {
	switch {
	case o.parquet == "" || o.parquet == "-" || o.csv != "" || o.job != "" || o.iolog != "":
		return usageError{errors.New("--dataset goes with --parquet DIR (a directory) alone")}
	case o.all && len(args) > 0:
		return usageError{errors.New("name traces or give --all, not both")}
	case !o.all && len(args) == 0:
		return usageError{errors.New("name the traces to add, or give --all")}
	}
	if err := store.CheckLinks(o.parquet, store.InvokingUser()); err != nil {
		return err
	}
	if fi, err := os.Stat(o.parquet); err == nil && !fi.IsDir() {
		return fmt.Errorf("--parquet %s: not a directory", o.parquet)
	}
	st, err := g.store()
	if err != nil {
		return err
	}
	if o.all {
		if err := st.Each(func(sm store.Summary) bool {
			if !strings.HasSuffix(sm.Path, store.Ext) {
				return true // still being written, or cut short
			}
			args = append(args, sm.ID)
			return true
		}); err != nil {
			return err
		}
	}
	var added, kept, rows int64
	for _, arg := range args {
		t, err := g.open(arg)
		if err != nil {
			return fmt.Errorf("%s: %w", arg, err)
		}
		id, _ := st.IDOf(t.Path())
		_, n, written, err := analysis.ExportDatasetPart(ctx, t, o.parquet, id, store.InvokingUser().Do, g.watch)
		t.Close()
		if errors.Is(err, analysis.ErrSummary) {
			fmt.Fprintf(g.stderr, "skipped %s: a summary trace has no per-I/O rows\n", arg)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", arg, err)
		}
		if written {
			added++
			rows += n
		} else {
			kept++
		}
	}
	fmt.Fprintf(g.stderr, "%s: %d traces added (%s rows), %d already there\n", o.parquet, added, units.Count(rows), kept)
	return nil
}
