package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/units"
)

type importOptions struct {
	label     string
	output    string
	format    string
	blockSize int64
	arch      string
	platform  string
	date      string
}

func newImportCommand(g *globals) *cobra.Command {
	o := &importOptions{}
	c := &cobra.Command{
		Use:   "import <file>",
		Short: "Turn a saved capture (fs_usage, blktrace, biosnoop, fio iolog, MSR/Alibaba/Tencent CSV…) into a trace",
		Long: `Import reads a saved capture and stores it as a trace:

  fs_usage           macOS 'sudo fs_usage -w -f filesys -f diskio' output: disk lines
                     are the block layer, read/write-family calls the syscall layer
  blkparse           blkparse's default text output; requests are rebuilt from their
                     Q/M/F/X/D/C events (size as dispatched, queue and device times)
  blktrace           blktrace's binary files: name one (sda.blktrace.0) and the run's
                     other per-CPU files are read with it
  biosnoop           bcc's (or libbpf-tools') biosnoop, with or without -Q
  disksnoop          bcc's disksnoop
  iosnoop            DTraceToolkit's iosnoop, with its -D -o -s -t -e -N -v columns
  perftools-iosnoop  perf-tools' iosnoop (ftrace), with or without -s -t
  biosnoop.bt        bpftrace's biosnoop.bt
  fio-iolog          a fio iolog, version 2 or 3 (write_iolog=)
  msr, alibaba,      the public block-trace corpora's CSV files (MSR Cambridge,
  tencent            Alibaba, Tencent CBS); each device or volume is kept apart
  bpftrace, dtrace   output of ioshape's own scripts (record --raw-output, dscripts/ioshape.d)

The format is detected from the first lines; --format overrides it. Files may
be gzipped. Malformed lines are reported with their line numbers. What a format
does not hold (no size, no times, no process…) is shown as unavailable, never
as zeros.`,
		Example: `  sudo fs_usage -w -f filesys -f diskio > capture.txt   # on a Mac, then Ctrl-C
  ioshape import --label "mail sync" capture.txt
  sudo blktrace -d /dev/sda -o sda   # then: ioshape import sda.blktrace.0
  sudo biosnoop -Q > bio.txt         # then: ioshape import bio.txt
  ioshape import --format msr hm_0.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runImport(cmd.Context(), g, o, args[0]) },
	}
	f := c.Flags()
	f.StringVarP(&o.label, "label", "l", "", "a name for the trace")
	f.StringVarP(&o.output, "output", "o", "", "write the trace to this file instead of the store")
	f.StringVar(&o.format, "format", "auto", "auto, or one of: "+formatNames())
	f.StringVar(&o.platform, "platform", "", "dtrace: the system the D script ran on (darwin, linux) when its output does not say (default: recognised from the block events' flags)")
	f.StringVar(&o.arch, "arch", "", "bpftrace: the recording machine's architecture (amd64, arm64) when the output does not say (default: this machine's)")
	f.Int64Var(&o.blockSize, "block-size", 0, "fs_usage, dtrace and iosnoop: bytes per device block, to turn block numbers into offsets (default: 4096 for fs_usage and macOS DTrace, 512 for DTrace on Linux; iosnoop: found from the capture)")
	f.StringVar(&o.date, "date", "", "fs_usage: the day the capture was made (YYYY-MM-DD), which it does not print (default: the file's modification date)")
	return c
}

func runImport(ctx context.Context, g *globals, o *importOptions, file string) error {
	format := parse.Format(o.format)
	if format != "auto" && !slices.Contains(parse.Formats, format) {
		return usageError{fmt.Errorf("unknown format %q (auto, %s)", o.format, formatNames())}
	}
	switch o.platform {
	case "", parse.PlatformDarwin, parse.PlatformLinux:
	default:
		return usageError{fmt.Errorf("unknown platform %q (darwin, linux)", o.platform)}
	}
	var date time.Time
	if o.date != "" {
		d, err := time.ParseInLocation(time.DateOnly, o.date, time.Local)
		if err != nil {
			return usageError{fmt.Errorf("--date %q: want YYYY-MM-DD", o.date)}
		}
		date = d
	}
	if o.blockSize < 0 || o.blockSize > 1<<20 || o.blockSize != 0 && o.blockSize%512 != 0 {
		return usageError{fmt.Errorf("--block-size %d: want a multiple of 512 up to 1 MiB", o.blockSize)}
	}
	id, path, err := g.newTracePath(o.output)
	if err != nil {
		return err
	}
	res, err := analysis.Import(ctx, analysis.ImportRequest{
		File: file, Format: format, BlockSize: o.blockSize, ID: id, Path: path, Label: o.label,
		ToolVersion: Version, CommandLine: os.Args, Arch: o.arch, Platform: o.platform,
		As: store.InvokingUser().Do, Date: date,
	})
	if err != nil {
		return err
	}
	if id != "" {
		if st := g.storeIfAny(); st != nil {
			if err := st.Add(id); err != nil {
				fmt.Fprintf(g.stderr, "warning: the trace is not in the store's index yet (%v); 'ioshape ls' adds it\n", err)
			}
		}
	}
	fmt.Fprintf(g.stderr, "imported %s events (%s) from %s (%s lines skipped as not I/O, %s malformed)\n",
		units.Count(res.Events), res.Format, file, units.Count(res.Skipped), units.Count(res.Malformed))
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
	for _, u := range res.Unavailable {
		fmt.Fprintf(g.stderr, "not in this capture: %s (%s)\n", u.Metric, u.Why)
	}
	g.printTracePath(id, path)
	return nil
}

func formatNames() string {
	names := make([]string, len(parse.Formats))
	for i, f := range parse.Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
