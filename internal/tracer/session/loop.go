package session

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/parse"
)

// A Tracer is a running backend as the loop drives it.
type Tracer interface {
	// Records is the tracer's parsed output in batches, with what it says on
	// the side (drops, run-time errors, readiness) as records too; it closes
	// once all of that has ended, so draining it drains everything.
	Records() <-chan []parse.Record
	// Stop asks the tracer to stop; it flushes what it holds, then Records
	// closes.
	Stop()
	// Kill ends a tracer that did not stop within the grace period.
	Kill()
	// Wait is called once Records has closed: it waits for the tracer to
	// exit, releases what it holds and adds to res what it counted outside
	// its records (kernel counters, devices it named). Its error says why
	// the tracer ended on its own.
	Wait(res *Result) error
}

// Poller is a Tracer with loss counters outside its output (in the kernel):
// the loop reads them each second and just before stopping, while they
// still exist.
type Poller interface{ Poll(res *Result) }

// Marker is a Tracer that can lag behind the kernel and, stopped, drop
// what it has not read without counting it (bpftrace and its per-CPU
// buffers). Mark has a mark put in each buffer and says how many; the loop
// stops the tracer once that many KindMark records have come through
// Records, so everything buffered before the stop is in the trace or
// counted lost.
type Marker interface{ Mark() int }

// Degrader is a Tracer that can drop its syscall layer while it runs, when
// it cannot keep up with both (bpftrace): the loop asks it to once more
// than one event in ten is lost, rather than silently keep half of both.
type Degrader interface{ Degrade() }

// StatusSource is a Tracer that starts the helper itself (bpftrace -c): the
// helper's status lines come through it.
type StatusSource interface{ Status() <-chan string }

// SelfReporter is a Tracer whose own processes' I/O is not the target's.
type SelfReporter interface{ Pids() []int }

// Plan is what the loop needs of a backend.
type Plan struct {
	Name   string // the tracer, as messages name it
	Remedy string // what to do about lost events
	Seeds  []int  // processes followed from the start
	// Command, if set, is run by ioshape's helper as the target user once
	// tracing is ready.
	Command []string
	// Start starts the tracer. helperPid is the helper's pid (0 without
	// one): the process whose descendants are the target.
	Start func(helperPid int) (Tracer, error)
	// StopGrace, if longer than the configured grace, is how long the
	// tracer is given between SIGINT and SIGKILL: a tracer that detaches
	// many probes and then prints its final counters can need seconds,
	// more on a loaded machine, and killing it loses those counters.
	StopGrace time.Duration
	// KernelSummary: with Config.Summary the tracer sends summary rows it
	// made itself (in the kernel). Otherwise its events are summarized as
	// they come (package summarize).
	KernelSummary bool
}

// NotStartedError is a tracer that ended before tracing began.
type NotStartedError struct {
	Tracer string
	Reason string
}

func (e *NotStartedError) Error() string {
	if e.Reason == "" {
		return e.Tracer + " exited before tracing started"
	}
	return e.Tracer + " exited before tracing started: " + e.Reason
}

// Run records with the plan's tracer until the target ends, the duration
// passes, the launch goes quiet, the tracer ends, or ctx is cancelled
// (Ctrl-C), writing events to sink as they come. The Result describes what
// was recorded whatever happens; an error means the recording could not
// start or failed.
func Run(ctx context.Context, cfg Config, plan Plan, sink Sink) (Result, error) {
	cfg = cfg.WithDefaults()
	if cfg.Target.Cold {
		if err := host.DropCaches(); err != nil {
			return Result{}, err
		}
	}
	l := &loop{cfg: cfg, plan: plan, st: newState(cfg.Target, sink, plan.Seeds)}
	if cfg.Summary && !plan.KernelSummary {
		l.st.summarizeEvents()
	}
	helperPid := 0
	if len(plan.Command) > 0 {
		h, err := StartHelper(cfg, plan.Command)
		if err != nil {
			return Result{}, err
		}
		l.helper, helperPid = h, h.Pid()
		l.st.skip[uint32(helperPid)] = true
	}
	t, err := plan.Start(helperPid)
	if err != nil {
		l.helper.Kill()
		return Result{}, err
	}
	l.t = t
	if s, ok := t.(SelfReporter); ok {
		for _, p := range s.Pids() {
			l.st.skip[uint32(p)] = true
		}
	}
	l.run(ctx)
	return l.finish()
}

// loop is one recording's control state; everything runs in Run's
// goroutine.
type loop struct {
	cfg    Config
	plan   Plan
	st     *state
	t      Tracer
	helper *Helper // nil when the tracer starts the command, or there is none

	status    <-chan string
	started   time.Time
	termSent  bool // the command's process group was sent SIGTERM
	stopping  bool
	stoppedAt time.Time
	endedAt   time.Time
	stopTimer <-chan time.Time
	marks     int // flush marks still awaited before the tracer is stopped
	degraded  bool
	lastTick  time.Duration // since ready, at the last tick
	markTimer <-chan time.Time
	// markEvents is the event count when the mark timer was last armed:
	// a tracer still delivering its backlog is given more time.
	markEvents int64
	killTimer  <-chan time.Time
	err        error
}

func (l *loop) run(ctx context.Context) {
	l.started = time.Now()
	records := l.t.Records()
	l.status = l.helper.StatusLines()
	if s, ok := l.t.(StatusSource); ok {
		l.status = s.Status()
	}
	status := l.status
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	done := ctx.Done()
	for records != nil {
		select {
		case batch, ok := <-records:
			if !ok {
				records = nil
				if l.marks > 0 {
					// It ended before the marks came back (not stopped
					// by us): what its buffers still held is gone.
					l.markTimer, l.marks = nil, 0
					l.st.warn(fmt.Sprintf("%s ended by itself before it had read back its buffers: whatever they still held is missing and not counted", l.plan.Name))
				}
				break
			}
			l.consume(batch)
		case line, ok := <-status:
			status = l.takeStatus(status, line, ok)
		case <-tick.C:
			l.onTick()
		case <-l.stopTimer:
			l.stop("duration")
		case <-done:
			done = nil
			l.stop("interrupted")
		case <-l.markTimer:
			waited := time.Since(l.stoppedAt)
			if l.st.res.EndReason == "target exited" && l.st.res.Events > l.markEvents && waited < maxCatchUp*l.cfg.Grace {
				// The target is gone, so what still comes is backlog: the
				// tracer is catching up, and stopping it now would drop
				// the rest uncounted. (A target still running, or the
				// whole system, never stops sending.)
				l.markEvents, l.markTimer = l.st.res.Events, time.After(l.cfg.Grace)
				break
			}
			l.markTimer, l.marks = nil, 0
			l.st.warn(fmt.Sprintf("%s had not caught up %.1f s after the recording stopped: whatever it still held unread is missing and not counted", l.plan.Name, waited.Seconds()))
			l.halt()
		case <-l.killTimer:
			l.killTimer = nil
			l.t.Kill()
			l.st.warn(fmt.Sprintf("%s did not stop within %v of SIGINT and was killed; its final counters may be missing", l.plan.Name, l.stopGrace()))
		}
	}
	l.endedAt = time.Now()
	// A status line written just before the tracer ended (the command's
	// exit) may still wait in the channel; a detached launch's helper may
	// never close it, so do not block.
	for status != nil {
		select {
		case line, ok := <-status:
			status = l.takeStatus(status, line, ok)
		default:
			status = nil
		}
	}
	l.status = status
}

// takeStatus takes one read of the status channel: the channel to keep
// reading, nil once it has closed.
func (l *loop) takeStatus(ch <-chan string, line string, ok bool) <-chan string {
	if !ok {
		return nil
	}
	l.onStatus(line)
	return ch
}

func (l *loop) fail(err error) {
	if l.err == nil {
		l.err = err
	}
	l.stop("error")
}

func (l *loop) consume(batch []parse.Record) {
	ready, err := l.st.consume(batch)
	if ready != nil {
		l.markReady(*ready)
	}
	if err != nil {
		l.fail(err)
	}
	if l.marks > 0 && len(l.st.marks) >= l.marks {
		l.markTimer, l.marks = nil, 0
		l.halt()
	}
}

// markReady starts the clock: base is the tracer's clock reading at that
// moment (0: read ours).
func (l *loop) markReady(base int64) {
	st := l.st
	if st.ready {
		return
	}
	if base == 0 {
		base = host.MonotonicNow()
	}
	now := time.Now()
	st.ready, st.readyAt, st.lastIO, st.base = true, now, now, base
	st.res.Start = now
	if l.cfg.Target.Duration > 0 {
		l.stopTimer = time.After(l.cfg.Target.Duration)
	}
	l.helper.Release()
	if l.cfg.Progress != nil {
		l.cfg.Progress(Progress{Ready: true})
	}
}

// onStatus takes a helper status line: "ready" (bpftrace ran the helper, so
// its probes are attached), "pid N" (the command started), "exit N" (it
// ended), "error MSG" (it could not start).
func (l *loop) onStatus(line string) {
	if line == "ready" {
		l.markReady(0)
		return
	}
	exited, err := l.st.applyStatus(line)
	l.endLateCommand()
	switch {
	case err != nil:
		l.fail(err)
	case exited:
		// The tracer may end with its child: read its kernel counters
		// while they exist.
		l.poll()
		if !l.cfg.Target.Launch && l.cfg.Target.Duration == 0 {
			l.stop("target exited")
		}
	}
}

func (l *loop) onTick() {
	if err := l.st.sink.FlushIfDue(time.Second); err != nil {
		l.fail(err)
	}
	notice := ""
	if l.st.ready && !l.stopping {
		l.poll()
		notice = l.maybeDegrade()
		l.st.tickOldest, l.st.tickAny = 0, false
		l.lastTick = time.Since(l.st.readyAt)
		if reason := l.st.targetGone(); reason != "" {
			l.stop(reason)
		}
	}
	if l.cfg.Progress != nil {
		st := l.st
		l.cfg.Progress(Progress{Elapsed: time.Since(l.started), Events: st.res.Events + st.res.Summarized, Bytes: st.bytes, Lost: st.res.AllLost(), Ready: st.ready, Notice: notice})
	}
}

// maybeDegrade turns a tracer that is not keeping up early in the
// recording down to the block layer, once, and says so.
func (l *loop) maybeDegrade() string {
	d, ok := l.t.(Degrader)
	since := time.Since(l.st.readyAt)
	// Judged from the first full second on (so that the syscall layer
	// kept is a fair sample), at every tick: a loss or a lag that grows
	// later is said as soon as it is seen.
	if !ok || l.degraded || since < time.Second || !l.cfg.Target.Syscall() || !l.cfg.Target.Block() {
		return ""
	}
	// Some lost events are counted and said at the end; a tracer losing
	// more than one event in ten is not keeping up, and both layers would
	// be left with holes. One whose events come in well after they
	// completed is falling behind — the oldest, as one CPU's buffer can lag
	// while another's keeps up: its buffers overflow next, and it learns of
	// it too late to act.
	lost := l.st.res.AllLost()
	// Each event is written at its completion: one that completed before
	// the last tick and comes in only now was held back that long.
	lag := l.lastTick - time.Duration(l.st.tickOldest)
	var why string
	switch {
	case lost > 0 && lost*10 >= l.st.res.Events+lost:
		why = fmt.Sprintf("%d events lost in the first %.1f s of tracing", lost, since.Seconds())
	case l.st.tickAny && lag > maxLag:
		why = fmt.Sprintf("its events came in %.1f s after they happened, %.1f s into tracing", lag.Seconds(), since.Seconds())
	default:
		return ""
	}
	l.degraded = true
	d.Degrade()
	l.st.res.DegradedAt = since
	msg := fmt.Sprintf("%s could not keep up: %s; from then on only the block layer is traced, so the syscall layer covers the first %.1f s only (--backend native, or --layers block from the start, costs less)",
		l.plan.Name, why, since.Seconds())
	l.st.warn(msg)
	return msg
}

// maxLag is how far behind the clock a tracer's newest events may be
// before it is taken as not keeping up: events reach ioshape within
// milliseconds of their completion when it does.
const maxLag = time.Second

func (l *loop) poll() {
	if p, ok := l.t.(Poller); ok {
		p.Poll(&l.st.res)
	}
}

// stop asks the tracer to stop (once) and arms the kill timer. The
// recording's duration ends here, not when the tracer has torn down.
func (l *loop) stop(reason string) {
	if l.stopping {
		return
	}
	l.poll() // a tracer's kernel counters are gone once it stops
	l.stopping, l.stoppedAt = true, time.Now()
	l.st.res.EndReason = reason
	l.endLateCommand()
	if m, ok := l.t.(Marker); ok && l.st.ready && l.err == nil {
		clear(l.st.marks)
		if l.marks = m.Mark(); l.marks > 0 {
			l.markEvents, l.markTimer = l.st.res.Events, time.After(l.cfg.Grace)
			return
		}
	}
	l.halt()
}

func (l *loop) stopGrace() time.Duration { return max(l.cfg.Grace, l.plan.StopGrace) }

// maxCatchUp bounds, in grace periods, how long a stopped tracer that is
// still delivering its backlog is waited for.
const maxCatchUp = 6

// halt stops the tracer and arms the kill timer.
func (l *loop) halt() {
	l.t.Stop()
	l.killTimer = time.After(l.stopGrace())
}

// ownsCommand reports whether a command ioshape started is to end with the
// recording.
func (l *loop) ownsCommand() bool {
	t := l.cfg.Target
	return l.st.command != 0 && !t.KeepRunning && !t.Launch
}

// endLateCommand sends the command's process group SIGTERM once the
// recording has stopped for a reason other than its end, the command
// belongs to the recording (it ends with it), and it has not been sent:
// at the stop, or when the helper says the command started after it (a
// stop right after the start, before the helper's "pid" line came: the
// daemon's Stop button left such a command running).
func (l *loop) endLateCommand() {
	if !l.stopping || l.termSent || l.st.res.EndReason == "target exited" || !l.ownsCommand() {
		return
	}
	l.termSent = syscall.Kill(-l.st.command, syscall.SIGTERM) == nil
}

// endCommand, after a stop that sent the command SIGTERM, waits for its
// process group to go (SIGKILL after the grace period) and for its exit
// status, and says what happened; a command left running is said to be.
func (l *loop) endCommand() {
	st, t := l.st, l.cfg.Target
	l.endLateCommand()
	switch {
	case l.termSent:
		st.res.CommandEnd = "stopped with SIGTERM when the recording stopped"
		if EndGroup(st.command, l.cfg.Grace) {
			st.res.CommandEnd = fmt.Sprintf("killed with SIGKILL: it was still running %v after SIGTERM", l.cfg.Grace)
		}
		l.awaitExitStatus(time.Second)
	case st.command != 0 && st.res.ExitStatus == nil && host.ProcessExists(st.command):
		if t.Launch {
			st.res.CommandEnd = "left running: an app launch outlives its recording"
		} else if t.KeepRunning {
			st.res.CommandEnd = "left running (--keep-running)"
		}
	}
}

// awaitExitStatus reads helper status lines until the command's exit
// status comes, or for at most d.
func (l *loop) awaitExitStatus(d time.Duration) {
	timeout := time.After(d)
	for l.status != nil && l.st.res.ExitStatus == nil {
		select {
		case line, ok := <-l.status:
			if !ok {
				return
			}
			l.st.applyStatus(line)
		case <-timeout:
			return
		}
	}
}

// finish waits for the tracer and explains the recording's end and losses.
func (l *loop) finish() (Result, error) {
	st := l.st
	waitErr := l.t.Wait(&st.res)
	if err := st.closeSummary(); err != nil && l.err == nil {
		l.err = err
	}
	if !st.ready {
		l.helper.Kill() // the command never started
	}
	l.endCommand()
	ended := l.endedAt
	if l.stopping {
		ended = l.stoppedAt
	}
	if st.ready && ended.After(st.readyAt) {
		st.res.Duration = ended.Sub(st.readyAt)
	}
	if st.res.EndReason == "" {
		st.res.EndReason = "tracer exited"
	}
	if !st.ready && l.err == nil {
		if st.res.EndReason == "interrupted" {
			return st.res, fmt.Errorf("interrupted before %s was ready", l.plan.Name)
		}
		ns := &NotStartedError{Tracer: l.plan.Name}
		if waitErr != nil {
			ns.Reason = waitErr.Error()
		}
		return st.res, ns
	}
	if waitErr != nil && !l.stopping {
		st.warn(fmt.Sprintf("%s ended by itself: %v", l.plan.Name, waitErr))
	}
	st.res.Devices = st.describeDevices(st.res.Devices)
	for i, d := range st.res.Devices {
		if c := st.res.Content[event.Dev{Major: d.Major, Minor: d.Minor}]; c != nil && c.Samples > 0 {
			st.res.Devices[i].Content = c
		}
	}
	st.finishWarnings(l.plan.Name, l.plan.Remedy)
	return st.res, l.err
}

// SelfPid is ioshape's own pid, whose I/O (the trace writer's) is never
// the target's.
var SelfPid = os.Getpid()
