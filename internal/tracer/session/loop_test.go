package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
)

// fakeTracer is a Tracer driven by the test: it sends what the test gives
// it, and on Stop sends its exit records (unless it ignores Stop).
type fakeTracer struct {
	out         chan []parse.Record
	exitRecords []parse.Record // sent after Stop, as a tracer prints its last counters
	ignoreStop  bool
	stopDelay   time.Duration // how long Stop takes to end the tracer
	killed      chan struct{}
	once        sync.Once
	waited      bool
}

func newFake() *fakeTracer {
	return &fakeTracer{out: make(chan []parse.Record, 16), killed: make(chan struct{})}
}

func (f *fakeTracer) Records() <-chan []parse.Record { return f.out }

func (f *fakeTracer) Stop() {
	if f.ignoreStop {
		return
	}
	if f.stopDelay > 0 {
		time.AfterFunc(f.stopDelay, func() { f.end(f.exitRecords) })
		return
	}
	f.end(f.exitRecords)
}

func (f *fakeTracer) end(last []parse.Record) {
	f.once.Do(func() {
		go func() {
			if len(last) > 0 {
				f.out <- last
			}
			close(f.out)
		}()
	})
}

func (f *fakeTracer) Kill() {
	close(f.killed)
	f.end(nil)
}

func (f *fakeTracer) Wait(*Result) error { f.waited = true; return nil }

type memSink struct {
	events    []event.Event
	summaries []event.Summary
}

func (m *memSink) Write(e *event.Event) error     { m.events = append(m.events, *e); return nil }
func (m *memSink) FlushIfDue(time.Duration) error { return nil }
func (m *memSink) WriteSummary(s *event.Summary) error {
	m.summaries = append(m.summaries, *s)
	return nil
}

func runFake(t *testing.T, cfg Config, f *fakeTracer) (Result, time.Duration, error) {
	t.Helper()
	plan := Plan{Name: "fake", Remedy: "none", Start: func(int) (Tracer, error) { return f, nil }}
	start := time.Now()
	res, err := Run(context.Background(), cfg, plan, &memSink{})
	if !f.waited {
		t.Error("the loop did not wait for the tracer")
	}
	return res, time.Since(start), err
}

// A tracer whose output fails before anything stopped it (the native ring
// reader erroring out) still yields a non-negative duration and a reason.
func TestLoopTracerEndsByItself(t *testing.T) {
	f := newFake()
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	go func() {
		time.Sleep(50 * time.Millisecond)
		f.end(nil)
	}()
	res, _, err := runFake(t, Config{Target: Target{All: true}}, f)
	if err != nil {
		t.Fatal(err)
	}
	if res.Duration <= 0 || res.Duration > 5*time.Second {
		t.Errorf("duration %v: want the time from ready to the tracer's end", res.Duration)
	}
	if res.EndReason != "tracer exited" {
		t.Errorf("end reason %q", res.EndReason)
	}
}

// A tracer whose plan asks for a longer stop grace (bpftrace detaching its
// probes) is given it: not killed, and its final counters are kept.
func TestLoopStopGrace(t *testing.T) {
	f := newFake()
	f.stopDelay = 500 * time.Millisecond
	f.exitRecords = []parse.Record{{Kind: parse.KindCounter, Name: parse.CounterUnfinished, N: 7}}
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	cfg := Config{Target: Target{All: true, Duration: 50 * time.Millisecond}, Grace: 100 * time.Millisecond}
	plan := Plan{Name: "fake", Remedy: "none", StopGrace: 5 * time.Second, Start: func(int) (Tracer, error) { return f, nil }}
	res, err := Run(context.Background(), cfg, plan, &memSink{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.killed:
		t.Error("killed within the plan's stop grace")
	default:
	}
	if res.Unfinished != 7 || hasWarning(res, "did not stop within") {
		t.Errorf("final counters %d (want 7), warnings %q", res.Unfinished, res.Warnings)
	}
}

// A tracer that ignores SIGINT is killed after the grace period, and the
// trace says so (fs_usage used to be left running).
func TestLoopKillsAfterGrace(t *testing.T) {
	f := newFake()
	f.ignoreStop = true
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	cfg := Config{Target: Target{All: true, Duration: 50 * time.Millisecond}, Grace: 200 * time.Millisecond}
	res, took, err := runFake(t, cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.killed:
	default:
		t.Fatal("the tracer was not killed")
	}
	if took > 3*time.Second {
		t.Errorf("took %v", took)
	}
	if !hasWarning(res, "did not stop within") {
		t.Errorf("no warning of the kill: %q", res.Warnings)
	}
	if res.EndReason != "duration" || res.Duration < 50*time.Millisecond || res.Duration > time.Second {
		t.Errorf("end %q after %v: the duration ends at the stop, not the kill", res.EndReason, res.Duration)
	}
}

// What a tracer reports on its way out (DTrace's dynamic variable drops
// and run-time errors printed at shutdown, fs_usage's last overruns) is
// counted like anything it said while running.
func TestLoopDrainsExitReports(t *testing.T) {
	f := newFake()
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	f.exitRecords = []parse.Record{
		{Kind: parse.KindCounter, Name: parse.CounterMapFull, N: 7},
		{Kind: parse.KindCounter, Name: parse.CounterProbeError, N: 1, Text: "dtrace: error on enabled probe ID 1"},
		{Kind: parse.KindLost, N: 3},
		{Kind: parse.KindWarning, Text: "said at exit"},
	}
	res, _, err := runFake(t, Config{Target: Target{All: true, Duration: 20 * time.Millisecond}}, f)
	if err != nil {
		t.Fatal(err)
	}
	if res.MapOverflows != 7 || res.ProbeErrors != 1 || res.Lost != 3 {
		t.Errorf("map overflows %d, probe errors %d, lost %d: want 7, 1, 3", res.MapOverflows, res.ProbeErrors, res.Lost)
	}
	for _, w := range []string{"error on enabled probe", "said at exit", "lost 3 events", "1 probe actions failed", "7 in-flight"} {
		if !hasWarning(res, w) {
			t.Errorf("no warning %q in %q", w, res.Warnings)
		}
	}
}

// A tracer that ends before it is ready is an error that names it, and the
// loop does not wait for a stop.
func TestLoopNotStarted(t *testing.T) {
	f := newFake()
	f.end(nil)
	_, _, err := runFake(t, Config{Target: Target{All: true}}, f)
	var ns *NotStartedError
	if !errors.As(err, &ns) || ns.Tracer != "fake" {
		t.Fatalf("error %v: want a NotStartedError", err)
	}
}

// Events count from the tracer's clock at readiness; ioshape's own I/O is
// left out.
func TestLoopRebasesAndSkipsSelf(t *testing.T) {
	f := newFake()
	f.out <- []parse.Record{
		{Kind: parse.KindReady, N: 1000},
		{Kind: parse.KindEvent, Event: event.Event{Pid: 42, Start: 1500, End: 1700, Bytes: 4096}},
		{Kind: parse.KindEvent, Event: event.Event{Pid: uint32(SelfPid), Start: 1600, End: 1800, Bytes: 512}},
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.end(nil)
	}()
	sink := &memSink{}
	plan := Plan{Name: "fake", Start: func(int) (Tracer, error) { return f, nil }}
	res, err := Run(context.Background(), Config{Target: Target{All: true}}, plan, sink)
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 1 || len(sink.events) != 1 || sink.events[0].Start != 500 || sink.events[0].End != 700 {
		t.Fatalf("events %d %+v: want one, at 500-700", res.Events, sink.events)
	}
}

// Ctrl-C before the tracer is ready is an interruption, not a failure of
// the tracer.
func TestLoopInterruptedBeforeReady(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	plan := Plan{Name: "fake", Start: func(int) (Tracer, error) { return f, nil }}
	_, err := Run(ctx, Config{Target: Target{All: true}}, plan, &memSink{})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("error %v", err)
	}
}

func hasWarning(res Result, s string) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// markingTracer is a fakeTracer with per-CPU buffers still holding a
// backlog when the recording stops: Mark queues the backlog, then one mark
// per CPU, as bpftrace would read them.
type markingTracer struct {
	*fakeTracer
	backlog   []parse.Record
	cpus      int
	markSent  bool
	stoppedAt int // events the loop had taken when Stop came
	sink      *memSink
	answer    bool // whether the marks come back at all
	// pace, if set, delivers the backlog in ten parts this far apart: a
	// tracer slowly catching up.
	pace time.Duration
	mu   sync.Mutex
	done bool // stopped: a paced backlog sends no more
}

func (m *markingTracer) Mark() int {
	m.markSent = true
	go func() {
		if m.pace == 0 {
			m.out <- m.backlog
		}
		for part := 0; m.pace > 0 && part < 10; part++ {
			time.Sleep(m.pace)
			m.mu.Lock()
			if m.done {
				m.mu.Unlock()
				return
			}
			m.out <- m.backlog[part*len(m.backlog)/10 : (part+1)*len(m.backlog)/10]
			m.mu.Unlock()
		}
		if m.answer {
			for c := 0; c < m.cpus; c++ {
				m.out <- []parse.Record{{Kind: parse.KindMark, N: int64(c)}}
			}
		}
	}()
	return m.cpus
}

func (m *markingTracer) Stop() {
	m.mu.Lock()
	m.done = true
	m.mu.Unlock()
	m.stoppedAt = len(m.sink.events)
	m.fakeTracer.Stop()
}

func runMarking(t *testing.T, m *markingTracer, grace time.Duration) (Result, time.Duration) {
	t.Helper()
	plan := Plan{Name: "fake", Remedy: "none", Start: func(int) (Tracer, error) { return m, nil }}
	cfg := Config{Target: Target{All: true, Duration: 20 * time.Millisecond}, Grace: grace}
	start := time.Now()
	res, err := Run(context.Background(), cfg, plan, m.sink)
	if err != nil {
		t.Fatal(err)
	}
	return res, time.Since(start)
}

func backlog(n int) []parse.Record {
	b := make([]parse.Record, n)
	for i := range b {
		b[i] = parse.Record{Kind: parse.KindEvent, Event: event.Event{Layer: event.Block, Pid: 7, Start: 10, End: 20, Bytes: 4096}}
	}
	return b
}

// A tracer that lags is stopped only once every CPU's mark has come back,
// so its backlog is in the trace (bpftrace dropped it, uncounted).
func TestLoopStopsAfterMarks(t *testing.T) {
	f := newFake()
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	m := &markingTracer{fakeTracer: f, backlog: backlog(500), cpus: 3, sink: &memSink{}, answer: true}
	res, _ := runMarking(t, m, 5*time.Second)
	if !m.markSent {
		t.Fatal("the loop did not ask for marks")
	}
	if m.stoppedAt != 500 || res.Events != 500 {
		t.Errorf("stopped after %d of 500 events, recorded %d", m.stoppedAt, res.Events)
	}
	if hasWarning(res, "caught up") {
		t.Errorf("warned: %q", res.Warnings)
	}
}

// exitingTracer is a marking tracer whose target exits (bpftrace -c's
// helper says so on the status channel).
type exitingTracer struct {
	*markingTracer
	status chan string
}

func (e *exitingTracer) Status() <-chan string { return e.status }

// A tracer still delivering its backlog when the grace period ends, after
// its target exited, is given more time: stopping it would drop the rest
// uncounted. A recording stopped while its target runs on (a duration, the
// whole system) is not: what keeps coming is new, not backlog.
func TestLoopWaitsForSlowBacklog(t *testing.T) {
	f := newFake()
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	m := &markingTracer{fakeTracer: f, backlog: backlog(500), cpus: 2, sink: &memSink{}, answer: true, pace: 50 * time.Millisecond}
	e := &exitingTracer{markingTracer: m, status: make(chan string, 2)}
	go func() {
		// After the loop has taken the ready record: an exit before
		// tracing was ready would be another case.
		time.Sleep(200 * time.Millisecond)
		e.status <- "pid 42"
		e.status <- "exit 0"
	}()
	plan := Plan{Name: "fake", Remedy: "none", Start: func(int) (Tracer, error) { return e, nil }}
	cfg := Config{Target: Target{Command: []string{"true"}}, Grace: 120 * time.Millisecond} // the backlog takes 500 ms
	res, err := Run(context.Background(), cfg, plan, m.sink)
	if err != nil {
		t.Fatal(err)
	}
	if res.EndReason != "target exited" || m.stoppedAt != 500 || res.Events != 500 {
		t.Errorf("ended %q, stopped after %d of 500 events, recorded %d", res.EndReason, m.stoppedAt, res.Events)
	}
	if hasWarning(res, "caught up") {
		t.Errorf("warned: %q", res.Warnings)
	}

	f = newFake()
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	m = &markingTracer{fakeTracer: f, backlog: backlog(500), cpus: 2, sink: &memSink{}, answer: true, pace: 50 * time.Millisecond}
	res, took := runMarking(t, m, 120*time.Millisecond)
	if !hasWarning(res, "had not caught up") || took > 400*time.Millisecond {
		t.Errorf("duration stop: took %v, warnings %q", took, res.Warnings)
	}
}

// Marks that never come back stop the tracer after the grace period, with
// a warning that what it still held is missing.
func TestLoopMarksTimeOut(t *testing.T) {
	f := newFake()
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	m := &markingTracer{fakeTracer: f, backlog: backlog(10), cpus: 2, sink: &memSink{}}
	res, took := runMarking(t, m, 150*time.Millisecond)
	if took > 3*time.Second {
		t.Errorf("took %v", took)
	}
	if !hasWarning(res, "had not caught up") {
		t.Errorf("no warning: %q", res.Warnings)
	}
	if res.EndReason != "duration" || res.Duration > time.Second {
		t.Errorf("end %q after %v: the duration ends at the stop, not after the marks", res.EndReason, res.Duration)
	}
}

// A tracer that ends by itself while its marks are awaited (bpftrace
// sent SIGINT by someone else) dropped what its buffers held: said, not
// hidden.
func TestLoopTracerEndsBeforeItsMarks(t *testing.T) {
	f := newFake()
	f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
	m := &markingTracer{fakeTracer: f, backlog: backlog(10), cpus: 2, sink: &memSink{}}
	ended := &endingMarker{markingTracer: m}
	plan := Plan{Name: "fake", Remedy: "none", Start: func(int) (Tracer, error) { return ended, nil }}
	cfg := Config{Target: Target{All: true, Duration: 20 * time.Millisecond}, Grace: 5 * time.Second}
	start := time.Now()
	res, err := Run(context.Background(), cfg, plan, m.sink)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v: the loop waited out the grace period for a tracer already gone", took)
	}
	if !hasWarning(res, "ended by itself before it had read back its buffers") {
		t.Errorf("no warning: %q", res.Warnings)
	}
	if hasWarning(res, "had not caught up") {
		t.Errorf("also warned of a timeout: %q", res.Warnings)
	}
}

// endingMarker's marks never come back: it ends as soon as they are asked
// for.
type endingMarker struct{ *markingTracer }

func (e *endingMarker) Mark() int {
	e.end(nil)
	return e.cpus
}

// degradingTracer is a fake that can be turned down to the block layer.
type degradingTracer struct {
	*fakeTracer
	degraded chan struct{}
}

func (d *degradingTracer) Degrade() { close(d.degraded) }

// A tracer whose events come in seconds after they completed is falling
// behind before it loses anything: it is degraded, and the recording
// says why; one that keeps up is left alone.
func TestLoopDegradesATracerFallingBehind(t *testing.T) {
	for _, behind := range []bool{true, false} {
		f := newFake()
		d := &degradingTracer{fakeTracer: f, degraded: make(chan struct{})}
		f.out <- []parse.Record{{Kind: parse.KindReady, N: 1}}
		start := time.Now()
		go func() {
			// Every 100 ms for 3.5 s, an event that completed then, or
			// one of the first 10 ms (written up to 3.5 s late).
			for range 35 {
				time.Sleep(100 * time.Millisecond)
				end := int64(time.Since(start))
				if behind {
					end = int64(10 * time.Millisecond)
				}
				f.out <- []parse.Record{{Kind: parse.KindEvent, Event: event.Event{Pid: 42, Start: end - 1000, End: end + 1, Bytes: 4096}}}
			}
			f.end(nil)
		}()
		plan := Plan{Name: "fake", Start: func(int) (Tracer, error) { return d, nil }}
		res, err := Run(context.Background(), Config{Target: Target{All: true}}, plan, &memSink{})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-d.degraded:
			if !behind {
				t.Errorf("a tracer keeping up was degraded: %q", res.Warnings)
			}
			if !hasWarning(res, "could not keep up: its events came in") || res.DegradedAt < time.Second {
				t.Errorf("degraded at %v, warnings %q", res.DegradedAt, res.Warnings)
			}
		default:
			if behind {
				t.Errorf("a tracer seconds behind was not degraded: %q", res.Warnings)
			}
		}
	}
}
