package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/tracefile"
)

type importOptions struct {
	label     string
	output    string
	format    string
	blockSize int64
}

func newImportCommand(g *globals) *cobra.Command {
	o := &importOptions{}
	c := &cobra.Command{
		Use:   "import <file>",
		Short: "Turn a saved fs_usage capture or raw tracer output into a trace",
		Long: `Import reads a saved capture and stores it as a trace:

  fs_usage   macOS 'sudo fs_usage -w -f diskio' output (wide mode); the disk I/O
             lines become block-layer events, everything else is skipped and counted
  bpftrace   output of ioshape's own bpftrace script (record --raw-output)
  dtrace     output of ioshape's D script (dscripts/ioshape.d)

The format is detected from the first lines; --format overrides it. Malformed
lines are reported with their line numbers.`,
		Example: `  sudo fs_usage -w -f diskio > capture.txt   # on a Mac, then Ctrl-C
  ioshape import --label "mail sync" capture.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runImport(g, o, args[0]) },
	}
	f := c.Flags()
	f.StringVarP(&o.label, "label", "l", "", "a name for the trace")
	f.StringVarP(&o.output, "output", "o", "", "write the trace to this file instead of the store")
	f.StringVar(&o.format, "format", "auto", "auto, fs_usage, bpftrace or dtrace")
	f.Int64Var(&o.blockSize, "block-size", 4096, "fs_usage and dtrace: bytes per device block, to turn block numbers into offsets")
	return c
}

// importFidelity says what each imported format cannot show.
var importFidelity = map[parse.Format][]string{
	parse.FormatFsUsage: {
		"fs_usage: the block layer only (no syscall layer, so no requested queue depth)",
		"fs_usage: no split between queueing and the device; issue time is completion minus elapsed time",
		"fs_usage: offsets are device block numbers times --block-size (assumed 4096), not file offsets",
		"fs_usage: it prints thread IDs, not process IDs: processes are grouped by name (cut at 16 characters)",
	},
	parse.FormatBpftrace: {"imported raw bpftrace output: devices are numbers only, and lost-event counts are those in the output"},
	parse.FormatDTrace: {
		"dtrace: no split between queueing and the device",
		"dtrace: offsets are block numbers times --block-size (assumed 4096), and syscalls are tied to a file descriptor, not a file",
		"imported D output: dtrace's drop messages go to stderr and are not in it",
	},
}

// importStats is what an import saw besides events.
type importStats struct {
	skipped, malformed, lost int64
	warnings                 []string
	devices                  []tracefile.Device
	fidelity                 []string
	firstTimeOfDay           int64
}

func runImport(g *globals, o *importOptions, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	format := parse.Format(o.format)
	switch format {
	case "auto":
		head, _ := br.Peek(64 << 10)
		format = parse.Detect(strings.Split(string(head), "\n"))
		if format == parse.FormatUnknown {
			return fmt.Errorf("%s: not a format ioshape imports (fs_usage -w output, or record --raw-output)", file)
		}
	case parse.FormatFsUsage, parse.FormatBpftrace, parse.FormatDTrace:
	default:
		return usageError{fmt.Errorf("unknown format %q (auto, fs_usage, bpftrace, dtrace)", o.format)}
	}

	id, path, err := g.newTracePath(o.output)
	if err != nil {
		return err
	}
	// Where and when the capture was made is not in it: the file's
	// modification time stands in for the date.
	h := tracefile.Header{
		ID: id, Label: o.label, Tool: "ioshape", ToolVersion: Version,
		Backend: string(format) + " (imported)", Target: tracefile.Target{Mode: "import", Command: []string{file}},
		CommandLine: os.Args, Start: st.ModTime().UTC(), Fidelity: importFidelity[format],
	}
	if format == parse.FormatFsUsage {
		h.OS = "darwin"
	}
	w, err := tracefile.Create(path, h)
	if err != nil {
		return fmt.Errorf("cannot create the trace file: %v", err)
	}
	var stats importStats
	var events, first, last int64
	sink := func(e *event.Event) error {
		if events == 0 || e.Start < first {
			first = e.Start
		}
		last = max(last, e.End)
		events++
		return w.Write(e)
	}
	switch format {
	case parse.FormatFsUsage:
		err = importFsUsage(br, file, o.blockSize, sink, &stats)
	case parse.FormatDTrace:
		err = importDTrace(br, file, o.blockSize, sink, &stats)
	default:
		err = importBpftrace(br, file, sink, &stats)
	}
	ft := tracefile.Footer{
		DurationNs: last - first, LostEvents: stats.lost, ParseErrors: stats.malformed,
		Warnings: stats.warnings, EndReason: "imported", Devices: stats.devices,
	}
	if err != nil {
		ft.EndReason = "error"
	}
	if cerr := w.Close(ft); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if events == 0 {
		os.Remove(path)
		return fmt.Errorf("%s: no disk I/O found (%d lines skipped): for fs_usage, capture with 'fs_usage -w -f diskio'", file, stats.skipped)
	}
	fmt.Fprintf(g.stderr, "imported %s events from %s (%s lines skipped as not disk I/O, %s malformed)\n",
		report.Count(events), file, report.Count(stats.skipped), report.Count(stats.malformed))
	for _, w := range stats.warnings {
		fmt.Fprintf(g.stderr, "warning: %s\n", w)
	}
	g.printTracePath(id, path)
	return nil
}

// malformed notes a bad line; the first few are kept with their numbers.
func (s *importStats) malformedLine(err *parse.SyntaxError) {
	s.malformed++
	if s.malformed <= 10 {
		s.warnings = append(s.warnings, "malformed "+err.Error())
	}
}

func importFsUsage(r io.Reader, file string, blockSize int64, sink func(*event.Event) error, st *importStats) error {
	p := parse.NewFsUsageReader(r, file, blockSize)
	for p.Scan() {
		rec := p.Record()
		switch rec.Kind {
		case parse.KindEvent:
			if err := sink(&rec.Event); err != nil {
				return err
			}
		case parse.KindSkip:
			st.skipped++
		case parse.KindLost:
			st.lost++ // one overrun: fs_usage dropped an unknown number of events
			st.warnings = append(st.warnings, "fs_usage reported a buffer overrun: events were dropped")
		case parse.KindError:
			st.malformedLine(rec.Err)
		}
	}
	for i, name := range p.Devices() {
		st.devices = append(st.devices, tracefile.Device{Major: 0, Minor: uint32(i + 1), Name: name})
	}
	return p.Err()
}

func importBpftrace(r io.Reader, file string, sink func(*event.Event) error, st *importStats) error {
	p := parse.NewBpftraceReader(r, file, runtime.GOARCH)
	var rb rebase // raw times are CLOCK_MONOTONIC: start at the first event
	for p.Scan() {
		rec := p.Record()
		switch rec.Kind {
		case parse.KindEvent:
			e := &rec.Event
			rb.apply(e)
			if err := sink(e); err != nil {
				return err
			}
		case parse.KindLost:
			st.lost += rec.N
		case parse.KindError:
			st.malformedLine(rec.Err)
		default:
			st.skipped++
		}
	}
	return p.Err()
}

// rebase shifts raw tracer clocks so the first event starts at zero.
type rebase struct {
	base  int64
	based bool
}

func (b *rebase) apply(e *event.Event) {
	if !b.based {
		b.base, b.based = e.Start, true
	}
	e.Start -= b.base
	e.End -= b.base
	if e.Flags&event.FlagDispatched != 0 {
		e.Dispatch -= b.base
	}
}

func importDTrace(r io.Reader, file string, blockSize int64, sink func(*event.Event) error, st *importStats) error {
	p := parse.NewDTraceReader(r, file, blockSize)
	var rb rebase
	for p.Scan() {
		rec := p.Record()
		switch rec.Kind {
		case parse.KindEvent:
			rb.apply(&rec.Event)
			if err := sink(&rec.Event); err != nil {
				return err
			}
		case parse.KindError:
			st.malformedLine(rec.Err)
		default:
			st.skipped++
		}
	}
	return p.Err()
}
