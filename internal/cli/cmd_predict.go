package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/units"
)

type predictOptions struct {
	drive, from       string
	admRead, admWrite []float64
	json              bool
	on                []string
}

func newPredictCommand(g *globals) *cobra.Command {
	o := &predictOptions{}
	c := &cobra.Command{
		Use:   "predict <trace> --drive DRIVE",
		Short: "How long a recorded workload would take on another drive, and which benchmark number says so",
		Long: `Predict replays a trace's waiting on another drive: the time the workload
waited for the drive changes with the drive's profile (for each request's size,
direction, access and requests in flight), while computation, think time,
cache hits and the order of the requests stay as recorded. It prints the
predicted duration beside the recorded one and the naive headline answer (the
bytes moved at the drive's SEQ1M Q8T1 rate), per phase and per process, and
which benchmark number the workload actually tracks.

--drive names a profile in the store ('ioshape drives', made by 'ioshape
bench'), or a file: a drive profile, or benchmark results ({"name":…,
"results": {"<pattern id>": MB/s}}); --adm-read/--adm-write give
AmorphousDiskMark's four numbers instead.

The time waited is taken out with the profile of the drive the trace was
recorded on: --from names it; by default it is the newest profile in the store
of the same host, disk and I/O cgroup. Without one, the trace's own latencies
stand in (and what the block layer does not show — a cgroup's throttle — is
missed: the output says so).`,
		Example: `  ioshape predict launch-cold --drive external
  ioshape predict 7k3m9q --adm-read 6300,2100,900,60 --adm-write 5200,1900,800,140 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPredict(cmd.Context(), g, o, args[0]) },
	}
	f := c.Flags()
	f.StringVar(&o.drive, "drive", "", "drive profile name, or a profile or results JSON file")
	f.StringVar(&o.from, "from", "", "the profile of the drive the trace was recorded on (default: the store's profile of the same host, disk and cgroup)")
	f.Float64SliceVar(&o.admRead, "adm-read", nil, "AmorphousDiskMark read MB/s: SEQ1M QD8,SEQ1M QD1,RND4K QD64,RND4K QD1")
	f.Float64SliceVar(&o.admWrite, "adm-write", nil, "AmorphousDiskMark write MB/s, in the same order")
	f.BoolVar(&o.json, "json", false, "print the prediction as JSON")
	f.StringArrayVar(&o.on, "on", nil, "move only this device's I/O to the new drive (a device the trace names, MAJ:MIN, a device file or a directory on it; repeatable); the rest stays as recorded")
	return c
}

func runPredict(ctx context.Context, g *globals, o *predictOptions, arg string) error {
	st, err := g.store()
	if err != nil {
		return err
	}
	d, err := o.profile(st)
	if err != nil {
		return err
	}
	from, known, err := o.source(st)
	if err != nil {
		return err
	}
	t, err := g.open(arg)
	if err != nil {
		return err
	}
	defer t.Close()
	on, err := onDevices(t.Meta(), o.on)
	if err != nil {
		return err
	}
	res, err := analysis.Predict(ctx, t, from, d, known, on, g.watch)
	if errors.Is(err, predict.ErrNoIO) {
		return fmt.Errorf("%s: %w", arg, err)
	}
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(g.stdout, res)
	}
	writePrediction(g, arg, d, res)
	return nil
}

// profile is the drive the options name.
func (o *predictOptions) profile(st *store.Store) (*drive.Spec, error) {
	switch {
	case o.drive != "" && (len(o.admRead) > 0 || len(o.admWrite) > 0):
		return nil, usageError{errors.New("give --drive or --adm-read/--adm-write, not both")}
	case len(o.admRead) > 0 || len(o.admWrite) > 0:
		p, err := drive.Coarse("AmorphousDiskMark results", o.admRead, o.admWrite)
		if err != nil {
			return nil, usageError{err}
		}
		return p, nil
	case o.drive == "":
		return nil, usageError{errors.New("name the drive: --drive NAME (see 'ioshape drives'), a profile file, or --adm-read")}
	}
	if strings.Contains(o.drive, "/") || strings.HasSuffix(o.drive, ".json") {
		if _, err := os.Stat(o.drive); err != nil {
			return st.Drive(o.drive)
		}
		b, err := readSmallFile(o.drive)
		if err != nil {
			return nil, err
		}
		if p, err := drive.Read(bytes.NewReader(b)); err == nil {
			return p, nil
		}
		r, err := classify.ReadDriveResults(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s is neither a drive profile nor benchmark results: %w", o.drive, err)
		}
		return r.Profile()
	}
	return st.Drive(o.drive)
}

// source is the recording drive's profile --from names, or the store's
// profiles to find it among.
func (o *predictOptions) source(st *store.Store) (*drive.Spec, []*drive.Spec, error) {
	if o.from != "" {
		p, err := (&predictOptions{drive: o.from}).profile(st)
		return p, nil, err
	}
	known, err := st.Drives()
	if err != nil {
		return nil, nil, err
	}
	return nil, known, nil
}

func writePrediction(g *globals, arg string, d *drive.Spec, r *predict.Result) {
	w := g.stdout
	where := []string{}
	for _, s := range []string{d.Device, d.FSType, d.Host} {
		if s != "" {
			where = append(where, s)
		}
	}
	fmt.Fprintf(w, "%s on drive %q", arg, d.Name)
	if len(where) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(where, ", "))
	}
	fmt.Fprintln(w, ":")
	fmt.Fprintf(w, "  predicted   %s   (recorded %s; waiting for the drive was %s of it)\n",
		units.Micros(r.PredictedS*1e6), units.Micros(r.RecordedS*1e6), units.Percent(r.IOBoundShare))
	if r.From != "" {
		fmt.Fprintf(w, "  recorded on drive %q (its profile's time taken out)\n", r.From)
	}
	fmt.Fprintf(w, "  headline    %s   (the bytes moved at SEQ1M Q8T1, %s MB/s read: what the box promises)\n",
		units.Micros(r.HeadlineS*1e6), units.Num(d.Headline("read"), 0))
	if r.Tracks != "" {
		fmt.Fprintf(w, "  tracks      %s (%s of the time spent waiting for this drive)\n", r.Tracks, units.Percent(r.TracksShare))
	}
	if len(r.Phases) > 1 {
		fmt.Fprintln(w, "phases:")
		for _, p := range r.Phases {
			fmt.Fprintf(w, "  %7ss–%7ss  recorded %9s  predicted %9s  %s\n", units.Num(p.FromS, 2), units.Num(p.ToS, 2),
				units.Micros(p.RecordedS*1e6), units.Micros(p.PredictedS*1e6), p.Pattern)
		}
	}
	if len(r.Processes) > 0 {
		fmt.Fprintln(w, "processes:")
		for _, p := range r.Processes {
			fmt.Fprintf(w, "  %7s %-16s recorded %9s  predicted %9s\n", units.Pid(p.Pid), p.Comm, units.Micros(p.RecordedS*1e6), units.Micros(p.PredictedS*1e6))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
