package recorder

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/tracefile"
	"github.com/ioshape/ioshape/internal/tracer"
)

// Request is one recording.
type Request struct {
	Tracer tracer.Config
	Label  string
	// Owner, if set, is given the trace file.
	Owner store.Owner
	// Store, for a trace in it (an ID is given to Run), lists the
	// finished trace in its index.
	Store *store.Store
	// ToolVersion and CommandLine go into the trace's header.
	ToolVersion string
	CommandLine []string
}

// Prepared is a recording whose tracer has been checked, ready to run.
type Prepared struct {
	req  Request
	sess tracer.Session
}

// Prepare checks everything that can be checked before a file is created:
// root, the tracer, the target. Its errors are one line, for the user.
func Prepare(req Request) (*Prepared, error) {
	sess, err := tracer.Prepare(req.Tracer)
	if err != nil {
		return nil, err
	}
	return &Prepared{req: req, sess: sess}, nil
}

// Close releases what a prepared recording holds (the native backend's
// programs and maps) when it will not run. Run releases them itself.
func (p *Prepared) Close() {
	if c, ok := p.sess.(interface{ Close() }); ok {
		c.Close()
	}
}

// Run records into the trace file at path (id is its store ID, "" outside
// the store) until the target ends, the duration passes or ctx is
// cancelled, and finishes the file. The file is complete even when Run
// returns an error, unless no event was recorded (then it is removed).
func (p *Prepared) Run(ctx context.Context, id, path string) (tracer.Result, error) {
	req := p.req
	// The file is created (and, below, renamed into place) as the store's
	// owner: root writes nothing there that they could not.
	var w *tracefile.Writer
	err := req.Owner.Do(func() (err error) {
		w, err = tracefile.Create(path, header(req, id, p.sess))
		return err
	})
	if err != nil {
		return tracer.Result{}, fmt.Errorf("cannot create the trace file: %w", err)
	}
	var warnings []string
	if err := req.Owner.Chown(path + tracefile.PartialSuffix); err != nil {
		warnings = append(warnings, fmt.Sprintf("the trace file could not be given to uid %d: %v", req.Owner.UID, err))
	}
	var sink tracer.Sink = w
	if t := req.Tracer.Target; !t.Block() || !t.Syscall() {
		sink = layerFilter{w, t.Block(), t.Syscall()}
	}
	steal0, stealKnown := host.StealTime()
	res, runErr := p.sess.Run(ctx, sink)
	steal1, stealNow := host.StealTime()
	res.Warnings = append(warnings, res.Warnings...)
	footer := tracefile.Footer{
		DurationNs: res.Duration.Nanoseconds(), LostEvents: res.Lost, MapOverflows: res.MapOverflows, ProbeMisses: res.ProbeMisses,
		ProbeErrors: res.ProbeErrors, UnfinishedRequests: res.Unfinished, UnmatchedCompletions: res.Unmatched, CorruptRecords: res.CorruptCount(), ParseErrors: res.ParseErrors,
		Warnings: res.Warnings, EndReason: res.EndReason, ExitStatus: res.ExitStatus, CommandEnd: res.CommandEnd, Devices: res.Devices,
		SyscallUntilNs: res.DegradedAt.Nanoseconds(), SummarizedIOs: res.Summarized,
	}
	if stealKnown && stealNow && steal1 >= steal0 { // CPUs says it was counted, even as none
		footer.HostStealNs, footer.CPUs = (steal1 - steal0).Nanoseconds(), runtime.NumCPU()
	}
	if !res.Start.IsZero() {
		footer.Start, footer.StartSource = res.Start.UTC(), tracefile.StartTracerReady
	}
	if req.Tracer.Summary {
		footer.Unavailable = append(footer.Unavailable, SummaryUnavailable)
	}
	if runErr != nil {
		footer.EndReason = "error"
		footer.Warnings = append(footer.Warnings, runErr.Error())
	}
	if err := req.Owner.Do(func() error { return w.Close(footer) }); err != nil {
		return res, fmt.Errorf("cannot finish the trace file %s: %w", path, err)
	}
	if runErr != nil && res.Events == 0 && res.Summarized == 0 {
		os.Remove(path)
		return res, runErr
	}
	if id != "" && req.Store != nil {
		if err := req.Store.Add(id); err != nil {
			res.Warnings = append(res.Warnings, "the trace is not in the store's index yet ("+err.Error()+"); 'ioshape ls' adds it")
		}
	}
	return res, runErr
}

// SummaryUnavailable is what a summary trace cannot show.
var SummaryUnavailable = event.Unavailable{Metric: event.MetricDetail,
	Why: "recorded with --summary: the kernel kept histograms per second, not each I/O"}

// layerFilter keeps the layers record --layers asked for, from backends
// that cannot leave the other's probes out (DTrace, fs_usage).
type layerFilter struct {
	*tracefile.Writer
	block, syscall bool
}

func (f layerFilter) Write(e *event.Event) error {
	if e.Layer == event.Block && !f.block || e.Layer == event.Syscall && !f.syscall {
		return nil
	}
	return f.Writer.Write(e)
}

// Lost is every event the recording knows it lost.
func Lost(res tracer.Result) int64 { return res.AllLost() }

func header(req Request, id string, sess tracer.Session) tracefile.Header {
	hostname, _ := os.Hostname()
	sc := sess.Script()
	t := req.Tracer.Target
	h := tracefile.Header{
		ID: id, Label: req.Label, Tool: "ioshape", ToolVersion: req.ToolVersion,
		Host: hostname, OS: runtime.GOOS, Arch: runtime.GOARCH, Kernel: host.KernelRelease(),
		Backend: sess.Backend(), BackendVersion: sess.BackendVersion(), Script: sc.Name, ScriptSHA256: sc.SHA256,
		Target: tracefile.Target{
			Mode: t.Mode(), Command: t.Command, Pids: t.Pids, Names: t.Names, Launch: t.Launch, Cold: t.Cold,
		},
		CommandLine: req.CommandLine,
		Start:       time.Now().UTC(),
		Fidelity:    sess.Fidelity(),
	}
	if t.Duration > 0 {
		h.Target.Duration = t.Duration.String()
	}
	// A command runs in ioshape's own cgroup; a process named by pid, in its.
	h.Target.Cgroup, _ = host.IOCgroup(os.Getpid())
	if len(t.Pids) > 0 {
		h.Target.Cgroup, _ = host.IOCgroup(t.Pids[0])
	}
	if t.Launch {
		h.Target.Quiet = t.Quiet.String()
	}
	if req.Tracer.Summary {
		h.Target.Summary = true
		h.Fidelity = append(h.Fidelity, "recorded with --summary: histograms per second, process, device, layer and direction, kept in the kernel; no I/O on its own")
	}
	if !t.Block() || !t.Syscall() {
		h.Target.Layers = t.Layers
		h.Fidelity = append(h.Fidelity, "recorded with --layers "+t.Layers+": the other layer was not traced")
	}
	return h
}
