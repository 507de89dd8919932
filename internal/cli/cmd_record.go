package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ioshape/ioshape/internal/recorder"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/tracer"
	"github.com/ioshape/ioshape/internal/units"
)

type recordOptions struct {
	pids      []int
	names     []string
	all       bool
	wait      bool
	duration  time.Duration
	launch    bool
	quiet     time.Duration
	cold      bool
	label     string
	output    string
	backend   string
	mapKeys   int
	perfPages int
	json      bool
	raw       string
	layers    string
	keep      bool
	summary   bool
}

func newRecordCommand(g *globals) *cobra.Command {
	o := &recordOptions{}
	c := &cobra.Command{
		Use:   "record [flags] [-- command [args...]]",
		Short: "Record the I/O of a command, processes, or the whole system",
		Example: `  sudo ioshape record -- cp /data/big.mov /mnt/ext/
  sudo ioshape record --pid 4242 --duration 30s
  sudo ioshape record --name firefox --duration 20s
  sudo ioshape record --all --duration 10s
  sudo ioshape record --all --summary --duration 8h
  sudo ioshape record --launch --cold -- /usr/bin/someapp`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() < 0 && len(args) > 0 {
				return usageError{fmt.Errorf("put the command after --: ioshape record -- %s", args[0])}
			}
			return runRecord(cmd, g, o, args)
		},
	}
	f := c.Flags()
	f.IntSliceVarP(&o.pids, "pid", "p", nil, "trace this process and its children (repeatable)")
	f.StringSliceVarP(&o.names, "name", "n", nil, "trace processes with this name, and their children (repeatable)")
	f.BoolVar(&o.wait, "wait", false, "with --name: wait for a process that has not started yet")
	f.BoolVarP(&o.all, "all", "a", false, "trace the whole system")
	f.DurationVarP(&o.duration, "duration", "d", 0, "stop after this long (default: when the target ends, or Ctrl-C)")
	f.BoolVar(&o.launch, "launch", false, "app launch: stop once the target's I/O has been idle for --quiet")
	f.DurationVar(&o.quiet, "quiet", 2*time.Second, "with --launch: the idle period that ends the recording")
	f.BoolVar(&o.cold, "cold", false, "sync and drop the page cache first, as after a reboot")
	f.BoolVar(&o.keep, "keep-running", false, "leave the command running if the recording stops first (by default it is stopped with it)")
	f.StringVarP(&o.label, "label", "l", "", "a name for the trace")
	f.StringVarP(&o.output, "output", "o", "", "write the trace to this file instead of the store")
	f.StringVar(&o.backend, "backend", "auto", "tracer: auto (native eBPF on Linux, DTrace on macOS), native, bpftrace, dtrace or fsusage")
	f.IntVar(&o.mapKeys, "map-keys", 1<<16, "in-flight I/Os the tracer can track at once")
	f.IntVar(&o.perfPages, "perf-pages", 1<<10, "tracer output buffer per CPU, in pages (a power of two)")
	f.StringVar(&o.layers, "layers", tracer.LayersBoth, "what to trace: both, block (what the drive saw) or syscall (what the application asked for); one layer costs less")
	f.BoolVar(&o.summary, "summary", false, "keep histograms per second, not each I/O, for hours-long recordings: made in the kernel at almost no cost on the native backend, of each I/O's record as it comes on bpftrace, DTrace and fs_usage")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	f.StringVar(&o.raw, "raw-output", "", "also save the tracer's raw output to this file (for bug reports)")
	return c
}

func runRecord(cmd *cobra.Command, g *globals, o *recordOptions, args []string) error {
	id, path, res, err := recordTrace(cmd.Context(), g, o, args)
	if err != nil {
		return err
	}
	if err := printRecorded(g, o, id, path, res); err != nil {
		return err
	}
	if res.ExitStatus != nil && *res.ExitStatus != 0 {
		return exitStatus(*res.ExitStatus)
	}
	return nil
}

// recordTrace records the target the options and args name into the store
// (or --output) and returns the trace's ID, path and the recording's result.
func recordTrace(ctx context.Context, g *globals, o *recordOptions, args []string) (id, path string, res tracer.Result, err error) {
	switch o.backend {
	case tracer.BackendAuto, tracer.BackendNative, tracer.BackendBpftrace, tracer.BackendDTrace, tracer.BackendFsUsage:
	default:
		return "", "", res, usageError{fmt.Errorf("unknown backend %q (auto, native, bpftrace, dtrace, fsusage)", o.backend)}
	}
	if o.perfPages <= 0 || o.perfPages&(o.perfPages-1) != 0 {
		return "", "", res, usageError{errors.New("--perf-pages must be a power of two")}
	}
	if o.mapKeys <= 0 {
		return "", "", res, usageError{errors.New("--map-keys must be positive")}
	}
	switch o.layers {
	case "", tracer.LayersBoth, tracer.LayersBlock, tracer.LayersSyscall: // "": replay's own recordings
	default:
		return "", "", res, usageError{fmt.Errorf("--layers %q: say both, block or syscall", o.layers)}
	}
	target := tracer.Target{
		Command: args, Pids: o.pids, Names: o.names, WaitForNames: o.wait, All: o.all,
		Duration: o.duration, Launch: o.launch, Quiet: o.quiet, Cold: o.cold, KeepRunning: o.keep, Layers: o.layers,
	}
	if !o.launch {
		target.Quiet = 0
	}
	owner := store.InvokingUser()
	cfg := tracer.Config{
		Target: target, Backend: o.backend, RunAs: runAs(owner),
		Stdin: g.stdin, Stdout: fileOf(g.stdout), Stderr: fileOf(g.stderr),
		MapKeys: o.mapKeys, PerfPages: o.perfPages, Summary: o.summary,
	}
	if o.raw != "" {
		raw, err := g.createRaw(o.raw)
		if err != nil {
			return "", "", res, err
		}
		defer raw.Close()
		cfg.Raw = raw
	}
	progress := newProgress(g)
	cfg.Progress = progress.update
	rec, err := recorder.Prepare(recorder.Request{
		Tracer: cfg, Label: o.label, Owner: owner, Store: g.storeIfAny(), ToolVersion: Version, CommandLine: os.Args,
	})
	if err != nil {
		return "", "", res, err
	}
	if id, path, err = g.newTracePath(o.output); err != nil {
		return "", "", res, err
	}
	res, err = rec.Run(ctx, id, path)
	progress.done()
	return id, path, res, err
}

func printRecorded(g *globals, o *recordOptions, id, path string, res tracer.Result) error {
	if o.json {
		out := map[string]any{
			"id": id, "path": path, "events": res.Events, "summarized_ios": res.Summarized, "lost_events": recorder.Lost(res), "unfinished_requests": res.Unfinished,
			"duration_s": res.Duration.Seconds(), "end_reason": res.EndReason, "exit_status": res.ExitStatus,
			"command_end": res.CommandEnd,
		}
		if len(res.Programs) > 0 {
			out["programs"] = res.Programs
		}
		return writeJSON(g.stdout, out)
	}
	reportRecording(g, res)
	g.printTracePath(id, path)
	return nil
}

// reportRecording says on stderr what was recorded, what was lost and
// what went wrong.
func reportRecording(g *globals, res tracer.Result) {
	if res.Summarized > 0 && res.Events == 0 {
		fmt.Fprintf(g.stderr, "summarized %s I/Os in %s (%s)", units.Count(res.Summarized), res.Duration.Round(time.Millisecond), res.EndReason)
	} else {
		fmt.Fprintf(g.stderr, "recorded %s events in %s (%s)", units.Count(res.Events), res.Duration.Round(time.Millisecond), res.EndReason)
	}
	if lost := recorder.Lost(res); lost > 0 {
		fmt.Fprintf(g.stderr, ", LOST %s events", units.Count(lost))
	}
	fmt.Fprintln(g.stderr)
	if res.CommandEnd != "" {
		fmt.Fprintf(g.stderr, "the command was %s\n", res.CommandEnd)
	}
	if res.ExitStatus != nil && *res.ExitStatus != 0 {
		fmt.Fprintf(g.stderr, "the command exited with status %d\n", *res.ExitStatus)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(g.stderr, "warning: %s\n", w)
	}
}

func runAs(o store.Owner) tracer.User {
	if !o.Set {
		return tracer.User{}
	}
	u := tracer.User{UID: o.UID, GID: o.GID, Home: o.Home, Set: true}
	if usr, err := user.LookupId(strconv.Itoa(o.UID)); err == nil {
		if gids, err := usr.GroupIds(); err == nil {
			for _, s := range gids {
				if n, err := strconv.ParseUint(s, 10, 32); err == nil {
					u.Groups = append(u.Groups, uint32(n))
				}
			}
		}
	}
	return u
}

func fileOf(w any) *os.File {
	if f, ok := w.(*os.File); ok {
		return f
	}
	return nil
}

// progress prints a status line on stderr while recording, when stderr is
// a terminal.
type progressLine struct {
	g     *globals
	tty   bool
	shown bool
	ready bool
}

func newProgress(g *globals) *progressLine {
	f := fileOf(g.stderr)
	return &progressLine{g: g, tty: f != nil && term.IsTerminal(int(f.Fd()))}
}

func (p *progressLine) update(pr tracer.Progress) {
	if pr.Notice != "" {
		if p.tty {
			fmt.Fprint(p.g.stderr, "\r\033[K")
		}
		fmt.Fprintf(p.g.stderr, "warning: %s\n", pr.Notice)
	}
	if pr.Ready && !p.ready {
		p.ready = true
		if !p.tty {
			fmt.Fprintln(p.g.stderr, "tracing started")
		}
	}
	if !p.tty {
		return
	}
	state := "starting the tracer…"
	if pr.Ready {
		state = fmt.Sprintf("recording: %s events, %s", units.Count(pr.Events), units.Bytes(pr.Bytes))
		if pr.Lost > 0 {
			state += fmt.Sprintf(", %s LOST", units.Count(pr.Lost))
		}
	}
	fmt.Fprintf(p.g.stderr, "\r\033[K%s  %s", pr.Elapsed.Round(time.Second), state)
	p.shown = true
}

func (p *progressLine) done() {
	if p.shown {
		fmt.Fprint(p.g.stderr, "\r\033[K")
	}
}

// createRaw opens the file --raw-output names: a directory is refused, a
// device or FIFO written to as it is, and a new file given to the sudo
// caller, like the trace.
func (g *globals) createRaw(path string) (*os.File, error) {
	resolved, _, err := resolveOutput(path)
	if err != nil {
		return nil, err
	}
	fi, statErr := os.Stat(resolved)
	if statErr == nil && !fi.Mode().IsRegular() {
		return openWriteNoWait(resolved)
	}
	// Made (or truncated) as the sudo caller, the last link not followed.
	var f *os.File
	err = store.InvokingUser().Do(func() (err error) {
		f, err = os.OpenFile(resolved, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return f, nil
}
