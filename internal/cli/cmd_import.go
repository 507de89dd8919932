package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/report"
)

type importOptions struct {
	label     string
	output    string
	format    string
	blockSize int64
	arch      string
	platform  string
}

func newImportCommand(g *globals) *cobra.Command {
	o := &importOptions{}
	c := &cobra.Command{
		Use:   "import <file>",
		Short: "Turn a saved fs_usage capture or raw tracer output into a trace",
		Long: `Import reads a saved capture and stores it as a trace:

  fs_usage   macOS 'sudo fs_usage -w -f filesys -f diskio' output (wide mode): disk
             I/O lines become block-layer events, read/write-family calls syscall-layer
             events; everything else is skipped and counted
  bpftrace   output of ioshape's own bpftrace script (record --raw-output)
  dtrace     output of ioshape's D script (dscripts/ioshape.d), plain or gzipped

The format is detected from the first lines; --format overrides it. Malformed
lines are reported with their line numbers.`,
		Example: `  sudo fs_usage -w -f diskio > capture.txt   # on a Mac, then Ctrl-C
  ioshape import --label "mail sync" capture.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runImport(cmd.Context(), g, o, args[0]) },
	}
	f := c.Flags()
	f.StringVarP(&o.label, "label", "l", "", "a name for the trace")
	f.StringVarP(&o.output, "output", "o", "", "write the trace to this file instead of the store")
	f.StringVar(&o.format, "format", "auto", "auto, fs_usage, bpftrace or dtrace")
	f.StringVar(&o.platform, "platform", "", "dtrace: the system the D script ran on (darwin, linux) when its output does not say (default: recognised from the block events' flags)")
	f.StringVar(&o.arch, "arch", "", "bpftrace: the recording machine's architecture (amd64, arm64) when the output does not say (default: this machine's)")
	f.Int64Var(&o.blockSize, "block-size", 0, "fs_usage and dtrace: bytes per device block, to turn block numbers into offsets (default: 4096 for fs_usage and macOS DTrace, 512 for DTrace on Linux)")
	return c
}

func runImport(ctx context.Context, g *globals, o *importOptions, file string) error {
	format := parse.Format(o.format)
	switch format {
	case "auto", parse.FormatFsUsage, parse.FormatBpftrace, parse.FormatDTrace:
	default:
		return usageError{fmt.Errorf("unknown format %q (auto, fs_usage, bpftrace, dtrace)", o.format)}
	}
	switch o.platform {
	case "", parse.PlatformDarwin, parse.PlatformLinux:
	default:
		return usageError{fmt.Errorf("unknown platform %q (darwin, linux)", o.platform)}
	}
	id, path, err := g.newTracePath(o.output)
	if err != nil {
		return err
	}
	res, err := analysis.Import(ctx, analysis.ImportRequest{
		File: file, Format: format, BlockSize: o.blockSize, ID: id, Path: path, Label: o.label,
		ToolVersion: Version, CommandLine: os.Args, Arch: o.arch, Platform: o.platform,
	})
	if err != nil {
		return err
	}
	g.chownToInvoker(path)
	if id != "" {
		if st := g.storeIfAny(); st != nil {
			if err := st.Add(id); err != nil {
				fmt.Fprintf(g.stderr, "warning: the trace is not in the store's index yet (%v); 'ioshape ls' adds it\n", err)
			}
		}
	}
	fmt.Fprintf(g.stderr, "imported %s events from %s (%s lines skipped as not I/O, %s malformed)\n",
		report.Count(res.Events), file, report.Count(res.Skipped), report.Count(res.Malformed))
	if res.Platform != "" {
		how := "as its output says, or recognised from its block events"
		if o.platform != "" {
			how = "as --platform says"
		}
		fmt.Fprintf(g.stderr, "recorded on %s (%s)\n", res.Platform, how)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(g.stderr, "warning: %s\n", w)
	}
	g.printTracePath(id, path)
	return nil
}
