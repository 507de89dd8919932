package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/webreport"
)

type reportOptions struct {
	output    string
	json      bool
	writeback string
	top       int
	drive     driveFlags
	predictOn []string
}

func newReportCommand(g *globals) *cobra.Command {
	o := &reportOptions{}
	c := &cobra.Command{
		Use:   "report <trace>",
		Short: "Write a trace's HTML report: one self-contained file that works offline",
		Long: `Report writes the profile and classification of a trace as one HTML file with
charts (block sizes, queue depth, latency, offsets and throughput over time,
the pattern ranking, the drive estimate) — ECharts inlined, nothing loaded from
the network. The default file is ioshape-<ID>.html in the current directory;
-o - writes to standard output.`,
		Example: `  ioshape report 7k3m9q
  ioshape report -o launch.html --adm-read 6300,2100,900,60 --adm-write 5200,1900,800,140 7k3m9q`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd.Context(), g, o, args[0]) },
	}
	f := c.Flags()
	f.StringVarP(&o.output, "output", "o", "", "the HTML file to write (- for standard output)")
	f.BoolVar(&o.json, "json", false, "print the report's data (profile with time series, and classification) as JSON instead")
	f.StringVar(&o.writeback, "writeback", "include", "block I/O issued by kernel threads: include or exclude")
	f.IntVar(&o.top, "top", 8, "matches the ranking shows")
	o.drive.register(f)
	f.StringArrayVar(&o.predictOn, "predict-on", nil, "a drive profile (name in 'ioshape drives', or file): add how long the workload would take there (repeatable: the drives ranked)")
	return c
}

func runReport(ctx context.Context, g *globals, o *reportOptions, arg string) error {
	if o.top < 1 {
		return usageError{errors.New("--top must be at least 1")}
	}
	a, err := analyze(ctx, g, arg, o.writeback, &o.drive, o.predictOn)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(g.stdout, a)
	}
	page := webreport.Report(a, webreport.Options{Top: o.top})
	out := o.output
	if out == "" {
		out = defaultReportName(a.Show.Trace)
	}
	if err := g.writeOutput(ctx, out, page.Write); err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintln(g.stdout, out)
	}
	return nil
}

// defaultReportName is ioshape-<ID>.html, as the help says (the file name
// of a trace outside the store, which has no ID).
func defaultReportName(t report.TraceInfo) string {
	name := t.ID
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(t.Path), store.Ext)
	}
	return "ioshape-" + name + ".html"
}

// analyze resolves a trace argument, profiles and classifies it and, when
// predictOn names a drive profile, predicts it there: in one read.
func analyze(ctx context.Context, g *globals, arg, writeback string, drive *driveFlags, predictOn []string) (*report.Analysis, error) {
	popts, err := profileOptions(writeback)
	if err != nil {
		return nil, err
	}
	copts := classify.Options{}
	if copts.Drive, err = drive.results(); err != nil {
		return nil, err
	}
	on, err := predictTarget(g, predictOn)
	if err != nil {
		return nil, err
	}
	t, err := g.open(arg)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	a, err := analysis.Analyze(ctx, t, popts, copts, on, g.watch)
	if err == nil && !popts.ExcludeWriteback {
		g.noteBestMatch(t, a.Class) // as the list would classify it
	}
	return a, err
}

// predictTarget is the drive profiles --predict-on names, with the
// store's profiles to find the recording drive's among; nil when none is
// named.
func predictTarget(g *globals, names []string) (*analysis.PredictOn, error) {
	if len(names) == 0 {
		return nil, nil
	}
	st, err := g.store()
	if err != nil {
		return nil, err
	}
	on := &analysis.PredictOn{}
	for _, name := range names {
		d, err := driveProfile(st, name)
		if err != nil {
			return nil, err
		}
		on.To = append(on.To, d)
	}
	if on.Known, err = st.Drives(); err != nil {
		return nil, err
	}
	return on, nil
}
