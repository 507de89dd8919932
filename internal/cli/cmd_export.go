package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/report"
)

type exportOptions struct {
	iolog string
}

func newExportCommand(g *globals) *cobra.Command {
	o := &exportOptions{}
	c := &cobra.Command{
		Use:   "export <trace> --fio-iolog FILE",
		Short: "Write a trace as input for other tools: a fio iolog that replays it",
		Long: `Export --fio-iolog writes fio's version 3 iolog of the recorded I/O: the reads,
writes and flushes the traced processes asked for (the block layer's when the
trace has none), in the order they were issued, with their times. Each recorded
file becomes f1.dat, f2.dat… sized to the span the trace touched; the files and
a fio command line that replays the log are printed on stderr.`,
		Example: `  ioshape export launch-cold --fio-iolog launch.iolog
  fio --name=replay --read_iolog=launch.iolog --ioengine=libaio --iodepth=4 --direct=1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runExport(cmd.Context(), g, o, args[0]) },
	}
	c.Flags().StringVar(&o.iolog, "fio-iolog", "", "write a fio version 3 iolog here (- for standard output)")
	return c
}

func runExport(ctx context.Context, g *globals, o *exportOptions, arg string) error {
	if o.iolog == "" {
		return usageError{errors.New("say what to export: --fio-iolog FILE")}
	}
	path, err := g.resolve(arg)
	if err != nil {
		return err
	}
	var files []export.File
	var n int
	err = g.writeOutput(ctx, o.iolog, func(w io.Writer) error {
		var err error
		files, n, _, err = analysis.ExportIolog(ctx, path, w, g.watch)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: no reads or writes to export", arg)
	}
	fmt.Fprintf(g.stderr, "%s I/Os on %d files:", report.Count(int64(n)), len(files))
	for _, f := range files {
		fmt.Fprintf(g.stderr, " %s (%s, %s)", f.Name, f.Dev, report.Bytes(f.Size))
	}
	fmt.Fprintf(g.stderr, "\nreplay, in a directory holding those files: fio --name=replay --read_iolog=%s --ioengine=libaio --iodepth=1 --direct=1\n", o.iolog)
	return nil
}
