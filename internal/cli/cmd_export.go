package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/report"
)

type exportOptions struct {
	iolog, job string
	by         string
	json       bool
}

func newExportCommand(g *globals) *cobra.Command {
	o := &exportOptions{}
	c := &cobra.Command{
		Use:   "export <trace> (--fio-job FILE | --fio-iolog FILE)",
		Short: "Write a trace as input for fio: a job file with its shape, or an iolog that replays it",
		Long: `Export --fio-job writes a fio job file with the trace's shape: one job per
phase classify finds, run in order (--by program: one per program, side by side),
each with the sizes (bssplit), read share (rwmixread), random share
(percentage_random), requested depth (iodepth with libaio when the I/O was
asynchronous, else numjobs threads), think time and amount of its recorded I/O.

Export --fio-iolog writes fio's version 3 iolog of the recorded I/O: the reads,
writes and flushes the traced processes asked for (the block layer's when the
trace has none), in the order they were issued, with their times. Each recorded
file becomes f1.dat, f2.dat… sized to the span the trace touched; the files and
a fio command line that replays the log are printed on stderr.`,
		Example: `  ioshape export launch-cold --fio-job launch.fio
  fio launch.fio
  ioshape export launch-cold --fio-iolog launch.iolog
  fio --name=replay --read_iolog=launch.iolog --ioengine=libaio --iodepth=4 --direct=1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runExport(cmd.Context(), g, o, args[0]) },
	}
	c.Flags().StringVar(&o.iolog, "fio-iolog", "", "write a fio version 3 iolog here (- for standard output)")
	c.Flags().StringVar(&o.job, "fio-job", "", "write a fio job file with the trace's shape here (- for standard output)")
	c.Flags().StringVar(&o.by, "by", "phase", "with --fio-job: one job per phase (in order) or per program (side by side)")
	c.Flags().BoolVar(&o.json, "json", false, "with --fio-job: print the jobs written as JSON on standard output")
	return c
}

func runExport(ctx context.Context, g *globals, o *exportOptions, arg string) error {
	switch {
	case (o.iolog == "") == (o.job == ""):
		return usageError{errors.New("say what to export: --fio-job FILE or --fio-iolog FILE")}
	case o.by != "phase" && o.by != "program":
		return usageError{fmt.Errorf("--by %q: say phase or program", o.by)}
	case o.json && (o.job == "" || o.job == "-"):
		return usageError{errors.New("--json goes with --fio-job FILE (a file, as the JSON takes standard output)")}
	}
	path, err := g.resolve(arg)
	if err != nil {
		return err
	}
	if o.job != "" {
		return exportJob(ctx, g, o, path, arg)
	}
	var x analysis.IologExport
	err = g.writeOutput(ctx, o.iolog, func(w io.Writer) error {
		var err error
		x, err = analysis.ExportIolog(ctx, path, "", w, g.watch)
		return err
	})
	if err != nil {
		return err
	}
	files, n := x.Files, x.IOs
	if n == 0 {
		return fmt.Errorf("%s: no reads or writes to export", arg)
	}
	fmt.Fprintf(g.stderr, "%s I/Os on %d files:", report.Count(int64(n)), len(files))
	for _, f := range files {
		fmt.Fprintf(g.stderr, " %s (%s, %s)", f.Name, f.Dev, report.Bytes(f.Size))
	}
	fmt.Fprintf(g.stderr, "\nreplay, in a directory holding those files: fio %s\n", strings.Join(iologArgs(o.iolog, x), " "))
	return nil
}

func exportJob(ctx context.Context, g *globals, o *exportOptions, path, arg string) error {
	var jobs []export.Job
	err := g.writeOutput(ctx, o.job, func(w io.Writer) error {
		var err error
		jobs, err = analysis.ExportFioJob(ctx, path, w, o.by == "program", g.watch)
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
