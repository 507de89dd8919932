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
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/units"
)

type predictOptions struct {
	drives            []string
	from              string
	admRead, admWrite []float64
	blackmagic        []float64
	json              bool
	on                []string
}

func newPredictCommand(g *globals) *cobra.Command {
	o := &predictOptions{}
	c := &cobra.Command{
		Use:   "predict <trace> --drive DRIVE [--drive DRIVE…]",
		Short: "How long a recorded workload would take on other drives, ranked, and which benchmark number says so",
		Long: `Predict replays a trace's waiting on another drive: the time the workload
waited for the drive changes with the drive's profile (for each request's size,
direction, access and requests in flight), while computation, think time,
cache hits and the order of the requests stay as recorded. It prints the
predicted duration beside the recorded one and the naive headline answer (the
bytes moved at the drive's SEQ1M Q8T1 rate), per phase and per process, and
which benchmark number the workload actually tracks.

--drive names a profile in the store ('ioshape drives': measured by 'ioshape
bench' or made by 'ioshape drives import' from published results), or a
file: a drive profile, published results (CrystalDiskMark's text and the
others 'drives import' reads) or benchmark results ({"name":…, "results":
{"<pattern id>": MB/s}}); --adm-read/--adm-write and --blackmagic give a
few numbers instead. Give --drive several times to rank the drives: one
table, fastest first, with each one's headline and the number the work
tracks there, and a sentence where the headline's order is not the
work's.

Every prediction has a range (predicted_low_s, predicted_high_s): what the
drive's profile leaves open — wide for a few published numbers, the
measured error for a full bench.

--on moves only some devices' I/O to the new drive (an application on an
external drive still reads the system's libraries from the internal one).
Without it, when the trace's requests went to several disks, the disk the
workload waited on most moves, and the output says which.

The time waited is taken out with the profile of the drive the trace was
recorded on: --from names it; by default it is the newest profile in the store
of the same host, disk and I/O cgroup. Without one, the trace's own latencies
stand in (and what the block layer does not show — a cgroup's throttle — is
missed: the output says so).`,
		Example: `  ioshape predict launch-cold --drive external
  ioshape predict 7k3m9q --drive t7 --drive sandisk-extreme --drive old-hdd
  ioshape predict 7k3m9q --drive cdm-results.txt --on /Volumes/X
  ioshape predict 7k3m9q --adm-read 6300,2100,900,60 --adm-write 5200,1900,800,140 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPredict(cmd.Context(), g, o, args[0]) },
	}
	f := c.Flags()
	f.StringArrayVar(&o.drives, "drive", nil, "a drive profile's name, or a profile or results file (repeatable: the drives are ranked)")
	f.StringVar(&o.from, "from", "", "the profile of the drive the trace was recorded on (default: the store's profile of the same host, disk and cgroup)")
	f.Float64SliceVar(&o.admRead, "adm-read", nil, "AmorphousDiskMark read MB/s: SEQ1M QD8,SEQ1M QD1,RND4K QD64,RND4K QD1")
	f.Float64SliceVar(&o.admWrite, "adm-write", nil, "AmorphousDiskMark write MB/s, in the same order")
	f.Float64SliceVar(&o.blackmagic, "blackmagic", nil, "Blackmagic Disk Speed Test's MB/s: READ,WRITE")
	f.BoolVar(&o.json, "json", false, "print the prediction as JSON")
	f.StringArrayVar(&o.on, "on", nil, "move only this device's I/O to the new drive (a device the trace names, MAJ:MIN, a device file or a directory on it; repeatable); the rest stays as recorded")
	return c
}

func runPredict(ctx context.Context, g *globals, o *predictOptions, arg string) error {
	st, err := g.store()
	if err != nil {
		return err
	}
	ds, err := o.profiles(st)
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
	res, err := analysis.Predict(ctx, t, from, ds, known, on, g.watch)
	if errors.Is(err, predict.ErrNoIO) {
		return fmt.Errorf("%s: %w", arg, err)
	}
	if err != nil {
		return err
	}
	if len(ds) == 1 {
		if o.json {
			return writeJSON(g.stdout, res.Drives[0])
		}
		writePrediction(g, arg, ds[0], res.Drives[0])
		return nil
	}
	if o.json {
		return writeJSON(g.stdout, res)
	}
	return writeRanking(g, arg, res)
}

// profiles is the drives the options name, in the order given.
func (o *predictOptions) profiles(st *store.Store) ([]*drive.Spec, error) {
	var out []*drive.Spec
	for _, name := range o.drives {
		p, err := driveProfile(st, name)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(o.admRead) > 0 || len(o.admWrite) > 0 {
		p, err := drive.Coarse("AmorphousDiskMark results", o.admRead, o.admWrite)
		if err != nil {
			return nil, usageError{err}
		}
		out = append(out, p)
	}
	if len(o.blackmagic) > 0 {
		p, err := blackmagicProfile("Blackmagic results", o.blackmagic)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, usageError{errors.New("name the drive: --drive NAME (see 'ioshape drives'), a profile or results file, --adm-read or --blackmagic")}
	}
	return out, nil
}

// driveProfile is the profile a --drive names: one in the store, or a
// file — a profile, published results, or results JSON.
func driveProfile(st *store.Store, name string) (*drive.Spec, error) {
	if !strings.Contains(name, "/") && !strings.Contains(name, ".") {
		return st.Drive(name)
	}
	if _, err := os.Stat(name); err != nil {
		return st.Drive(name)
	}
	b, err := readSmallFile(name)
	if err != nil {
		return nil, err
	}
	if p, err := drive.Read(bytes.NewReader(b)); err == nil {
		return p, nil
	}
	if r, err := classify.ReadDriveResults(bytes.NewReader(b)); err == nil {
		return r.Profile()
	}
	p, err := importResults(name, "")
	if err != nil {
		return nil, fmt.Errorf("%w (nor is it a drive profile or results JSON)", err)
	}
	return p, nil
}

// source is the recording drive's profile --from names (nil without it)
// and the store's profiles: the recording drive is found among them
// without --from, and a drive behind a cgroup v1 throttle — either end —
// is paired with its device's unthrottled profile among them either way
// (its writeback is not throttled).
func (o *predictOptions) source(st *store.Store) (*drive.Spec, []*drive.Spec, error) {
	known, err := st.Drives()
	if err != nil {
		return nil, nil, err
	}
	if o.from == "" {
		return nil, known, nil
	}
	p, err := driveProfile(st, o.from)
	return p, known, err
}

func writePrediction(g *globals, arg string, d *drive.Spec, r *predict.Result) {
	w := g.stdout
	where := []string{}
	for _, s := range []string{d.Device, d.FSType, d.Host} {
		if s != "" {
			where = append(where, s)
		}
	}
	if d.Provenance != nil {
		where = []string{d.Provenance.String()}
	}
	fmt.Fprintf(w, "%s on drive %q", arg, d.Name)
	if len(where) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(where, ", "))
	}
	fmt.Fprintln(w, ":")
	fmt.Fprintf(w, "  predicted   %s, between %s and %s   (recorded %s; waiting for the drive was %s of it)\n",
		units.Micros(r.PredictedS*1e6), units.Micros(r.PredictedLowS*1e6), units.Micros(r.PredictedHighS*1e6),
		units.Micros(r.RecordedS*1e6), units.Percent(r.IOBoundShare))
	if r.From != "" {
		fmt.Fprintf(w, "  recorded on drive %q (its profile's time taken out)\n", r.From)
	}
	fmt.Fprintf(w, "  headline    %s   (the bytes moved at SEQ1M Q8T1, %s MB/s read: what the box promises)\n",
		units.Micros(r.HeadlineS*1e6), units.Num(d.Headline("read"), 0))
	if r.Tracks != "" {
		fmt.Fprintf(w, "  tracks      %s, %s MB/s here (%s of the time spent waiting for this drive)\n", r.Tracks, units.Num(r.TracksMBs, 1), units.Percent(r.TracksShare))
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

// writeRanking prints the drives fastest first, one line each.
func writeRanking(g *globals, arg string, rk *predict.Ranking) error {
	first := rk.Drives[0]
	fmt.Fprintf(g.stdout, "%s on %d drives, fastest first (recorded %s", arg, len(rk.Drives), units.Micros(first.RecordedS*1e6))
	if first.From != "" {
		fmt.Fprintf(g.stdout, " on %q", first.From)
	}
	fmt.Fprintf(g.stdout, "; waiting for the drive was %s of it):\n", units.Percent(first.IOBoundShare))
	return report.WriteRanking(g.stdout, rk)
}
