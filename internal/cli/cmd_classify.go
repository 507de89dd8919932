package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/report"
)

type classifyOptions struct {
	json      bool
	writeback string
	top       int
	windows   int
	drive     driveFlags
}

// driveFlags name a drive's benchmark results, for the "what this means
// for your drive" estimate (classify, report, compare).
type driveFlags struct {
	file     string
	name     string
	admRead  []float64
	admWrite []float64
}

func (d *driveFlags) register(f *pflag.FlagSet) {
	f.StringVar(&d.file, "drive", "", `a drive's results as JSON: {"name": "...", "results": {"<pattern id>": MB/s}}`)
	f.StringVar(&d.name, "drive-name", "", "the drive's name, with --adm-read/--adm-write")
	f.Float64SliceVar(&d.admRead, "adm-read", nil, "AmorphousDiskMark read results, MB/s: SEQ1M QD8,SEQ1M QD1,RND4K QD64,RND4K QD1")
	f.Float64SliceVar(&d.admWrite, "adm-write", nil, "AmorphousDiskMark write results, MB/s, in the same order")
}

func newClassifyCommand(g *globals) *cobra.Command {
	o := &classifyOptions{}
	c := &cobra.Command{
		Use:   "classify <trace>",
		Short: "Say which benchmark pattern a trace resembles, and which benchmark number predicts it",
		Long: `Classify ranks the pattern catalog ('ioshape patterns') against a trace, with a
score and a per-dimension explanation (block size, queue depth, access, read/write
mix, gaps); splits the trace into a mixture of patterns by bytes and by time, and
into phases; and, given a drive's benchmark results, estimates what the workload
would see on that drive and which headline number does not apply.`,
		Example: `  ioshape classify 7k3m9q
  ioshape classify --adm-read 6300,2100,900,60 --adm-write 5200,1900,800,140 7k3m9q
  ioshape classify --drive my-ssd.json --json 7k3m9q`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runClassify(cmd.Context(), g, o, args[0]) },
	}
	f := c.Flags()
	f.BoolVar(&o.json, "json", false, "print the classification as JSON")
	f.StringVar(&o.writeback, "writeback", "include", "block I/O issued by kernel threads: include or exclude")
	f.IntVar(&o.top, "top", 5, "matches to show in text")
	f.IntVar(&o.windows, "windows", 48, "time windows for the mixture and the phases")
	o.drive.register(f)
	return c
}

func runClassify(ctx context.Context, g *globals, o *classifyOptions, arg string) error {
	popts, err := profileOptions(o.writeback)
	if err != nil {
		return err
	}
	if o.top < 1 || o.windows < 1 {
		return usageError{errors.New("--top and --windows must be at least 1")}
	}
	opts := classify.Options{ExcludeWriteback: popts.ExcludeWriteback, Windows: o.windows}
	if opts.Drive, err = o.drive.results(); err != nil {
		return err
	}
	t, err := g.open(arg)
	if err != nil {
		return err
	}
	defer t.Close()
	res, err := analysis.Classify(ctx, t, opts, g.watch)
	if err == nil && opts.Windows == 0 && !opts.ExcludeWriteback {
		g.noteBestMatch(t, res) // as the list would classify it
	}
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(g.stdout, res)
	}
	return report.WriteClassification(g.stdout, t.Path(), t.Meta(), res, o.top)
}

func (o *driveFlags) results() (*classify.DriveResults, error) {
	switch {
	case o.file != "" && (len(o.admRead) > 0 || len(o.admWrite) > 0):
		return nil, usageError{errors.New("give --drive or --adm-read/--adm-write, not both")}
	case o.file != "":
		b, err := readSmallFile(o.file)
		if err != nil {
			return nil, err
		}
		d, err := classify.ReadDriveResults(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.file, err)
		}
		return d, nil
	case len(o.admRead) > 0 || len(o.admWrite) > 0:
		d, err := classify.ADMResults(o.name, o.admRead, o.admWrite)
		if err != nil {
			return nil, usageError{err}
		}
		return d, nil
	}
	return nil, nil
}
