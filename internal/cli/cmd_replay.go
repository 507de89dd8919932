package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/bench"
	"github.com/ioshape/ioshape/internal/replay"
)

type replayOptions struct {
	dir     string
	mode    string
	keep    bool
	record  recordOptions
	jsonOut bool
}

func newReplayCommand(g *globals) *cobra.Command {
	o := &replayOptions{}
	c := &cobra.Command{
		Use:   "replay <trace> --dir DIR [--mode job|iolog]",
		Short: "Run a recorded workload again on another drive, with fio, and record it",
		Long: `Replay exports the trace for fio (--mode job: a job file with its shape, one job
per phase; --mode iolog: the exact I/O sequence, with its timing), lays out the
files fio needs in a new directory under DIR — untraced —, and runs fio there
under 'ioshape record', from a cold page cache. The replay is a trace of its
own, labelled "replay of ID"; its shape is printed beside the original's:
size p50, requested queue depth, sequential share and read share. The
directory is removed afterwards (--keep leaves it).`,
		Example: `  sudo ioshape replay launch-cold --dir /Volumes/External
  sudo ioshape replay copy --dir /mnt/usb --mode iolog
  ioshape compare copy REPLAY-ID`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReplay(cmd.Context(), g, o, args[0]) },
	}
	f := c.Flags()
	f.StringVar(&o.dir, "dir", "", "a directory on the drive to replay on (required)")
	f.StringVar(&o.mode, "mode", "job", "job: fio jobs with the trace's shape; iolog: the recorded I/O, one for one")
	f.BoolVar(&o.keep, "keep", false, "keep the replay's directory (job file or iolog, and data files)")
	f.StringVar(&o.record.backend, "backend", "auto", "tracer for the replay's recording (as for record)")
	f.StringVarP(&o.record.label, "label", "l", "", `a name for the replay's trace (default "replay of ID")`)
	f.BoolVar(&o.jsonOut, "json", false, "print the result as JSON")
	return c
}

func runReplay(ctx context.Context, g *globals, o *replayOptions, arg string) error {
	switch {
	case o.dir == "":
		return usageError{errors.New("say where to replay: --dir DIR (a directory on the drive to test)")}
	case o.mode != "job" && o.mode != "iolog":
		return usageError{fmt.Errorf("--mode %q: say job or iolog", o.mode)}
	}
	t, err := g.open(arg)
	if err != nil {
		return err
	}
	defer t.Close()
	fio, err := bench.FindFio("")
	if err != nil {
		return err
	}
	work, err := replay.Dir(o.dir)
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	}
	args, err := replay.Prepare(ctx, t, o.mode, fio, work, g.watch, g.stderr)
	if err != nil {
		return err
	}
	name := replay.TraceName(t.Meta().Header.ID, t.Path())
	rec := o.record
	rec.cold, rec.mapKeys, rec.perfPages = true, 1<<16, 1<<10
	if rec.label == "" {
		rec.label = "replay of " + name
	}
	fmt.Fprintf(g.stderr, "replaying (%s) in %s: %s\n", o.mode, work, strings.Join(args, " "))
	id, out, res, err := recordTrace(ctx, g, &rec, args)
	if err != nil {
		return err
	}
	reportRecording(g, res)
	if res.ExitStatus != nil && *res.ExitStatus != 0 {
		return fmt.Errorf("fio failed (exit status %d) replaying %s; run it again with --keep and look in %s", *res.ExitStatus, arg, work)
	}
	rt, err := analysis.Open(out)
	if err != nil {
		return err
	}
	defer rt.Close()
	r, err := replay.Compare(ctx, t, rt, replay.DataInodes(work), g.watch)
	if err != nil {
		return err
	}
	r.Original, r.Replay, r.Path, r.Mode = name, id, out, o.mode
	if o.jsonOut {
		return writeJSON(g.stdout, r)
	}
	replay.WriteText(g.stdout, r)
	g.printTracePath(id, out)
	return nil
}
