package tracer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Sink receives events as they are parsed (a trace file writer).
type Sink interface {
	Write(*event.Event) error
	FlushIfDue(time.Duration) error
}

// User is who the target command runs as.
type User struct {
	UID, GID int
	Groups   []uint32
	Home     string
	Set      bool // false: run as ioshape's own user
}

// Config sets up a recording.
type Config struct {
	Target   Target
	Backend  string // auto, native, bpftrace, dtrace or fsusage
	DTrace   string // path; empty: look it up in PATH
	FsUsage  string // path; empty: look it up in PATH
	Bpftrace string // path; empty: look it up in PATH
	RunAs    User
	Stdin    *os.File // the command's standard streams
	Stdout   *os.File
	Stderr   *os.File
	// MapKeys sizes the tracer's in-flight maps (requests and syscalls in
	// flight at once). PerfPages sizes its per-CPU output buffers.
	MapKeys   int
	PerfPages int
	Grace     time.Duration // between SIGINT and SIGKILL
	// Raw, if set, receives a copy of the tracer's output as it was read.
	Raw      io.Writer
	Progress func(Progress)
}

// Progress is reported about once a second.
type Progress struct {
	Elapsed time.Duration
	Events  int64
	Bytes   int64
	Lost    int64
	Ready   bool
}

// Result is what a recording learned beyond its events.
type Result struct {
	Start        time.Time
	Duration     time.Duration
	Events       int64
	Lost         int64
	MapOverflows int64
	// ProbeMisses are probe firings the kernel skipped (another BPF program
	// was running on the same CPU): events lost without a word from the
	// tracer.
	ProbeMisses int64
	// ProbeErrors are probe actions that failed at run time (DTrace's
	// "error on enabled probe"): their events are missing.
	ProbeErrors int64
	// Unfinished are block requests seen issued whose completion was never
	// seen (skipped, or left in flight at the end): their I/O is missing.
	Unfinished  int64
	Unmatched   int64
	ParseErrors int64
	Warnings    []string
	EndReason   string
	ExitStatus  *int
	Devices     []tracefile.Device
}

// bpftraceSession is a recording prepared for bpftrace.
type bpftraceSession struct {
	cfg            Config
	script         Script
	backendVersion string
	seeds          []int
	command        []string // the target command with its executable resolved
}

// prepareBpftrace checks everything that can be checked before recording —
// bpftrace, the kernel's tracepoints, the target — and renders the script.
// Its errors are one line, for the user.
func prepareBpftrace(cfg Config) (*bpftraceSession, error) {
	if cfg.Bpftrace == "" {
		p, err := exec.LookPath("bpftrace")
		if err != nil {
			return nil, errors.New("bpftrace is not installed: install it with 'sudo apt-get install bpftrace' (Debian/Ubuntu) or 'sudo dnf install bpftrace' (Fedora)")
		}
		cfg.Bpftrace = p
	}
	if err := ensureTracefs(); err != nil {
		return nil, err
	}
	if m := missingTracepoints(); len(m) > 0 {
		return nil, fmt.Errorf("this kernel lacks tracepoints ioshape needs: %s", strings.Join(m, ", "))
	}
	s := &bpftraceSession{cfg: cfg}
	t := cfg.Target
	var err error
	if s.seeds, s.command, err = resolveTargets(t); err != nil {
		return nil, err
	}
	sc, err := renderBpftrace(t, s.seeds, os.Getpid())
	if err != nil {
		return nil, err
	}
	s.script = sc
	if out, err := exec.Command(cfg.Bpftrace, "--version").Output(); err == nil {
		s.backendVersion = strings.TrimSpace(string(out))
	}
	return s, nil
}

// resolveCommand finds the executable a command names, as a shell would.
func resolveCommand(name string) (string, error) {
	if strings.Contains(name, "/") {
		st, err := os.Stat(name)
		if err != nil {
			return "", errors.New("no such file")
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", errors.New("not an executable file")
		}
		return name, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errors.New("command not found")
	}
	return p, nil
}

// Backend names the tracer.
func (s *bpftraceSession) Backend() string { return "bpftrace" }

// Script is the rendered tracer script.
func (s *bpftraceSession) Script() Script { return s.script }

// BackendVersion is what the tracer said of its version.
func (s *bpftraceSession) BackendVersion() string { return s.backendVersion }

// Fidelity lists what this backend cannot see.
func (s *bpftraceSession) Fidelity() []string {
	return []string{
		"syscall layer: memory-mapped I/O is not seen (the block layer still sees it)",
		"syscall layer: an io_uring request counts as outstanding from submission until the kernel posts its completion, not until the application reaps it, so io_uring queue depth can read lower than the application's",
		"block layer: requests are matched by device and sector; a request in flight when recording began or ended is counted as unmatched",
	}
}

// runState is the recording loop's state.
type runState struct {
	target   Target
	sink     Sink
	base     int64
	res      Result
	devs     map[event.Dev]bool
	live     map[int]bool
	bytes    int64
	lastIO   time.Time
	ready    bool
	readyAt  time.Time
	skipPids map[uint32]bool
}

// Run records until the target ends, the duration passes, the launch goes
// quiet, or ctx is cancelled (Ctrl-C). Events go to sink as they arrive.
// Whatever happens, the Result describes what was recorded; an error means
// the recording could not start or the tracer failed.
func (s *bpftraceSession) Run(ctx context.Context, sink Sink) (Result, error) {
	cfg := s.cfg
	if cfg.Target.Cold {
		if err := dropCaches(); err != nil {
			return Result{}, err
		}
	}
	if cfg.MapKeys == 0 {
		cfg.MapKeys = 1 << 16
	}
	if cfg.PerfPages == 0 {
		cfg.PerfPages = 1 << 10
	}
	if cfg.Grace == 0 {
		cfg.Grace = 5 * time.Second
	}
	scriptFile, err := os.CreateTemp("", "ioshape-*.bt")
	if err != nil {
		return Result{}, err
	}
	defer os.Remove(scriptFile.Name())
	if _, err := scriptFile.WriteString(s.script.Text); err != nil {
		scriptFile.Close()
		return Result{}, err
	}
	scriptFile.Close()

	spec, err := s.helperSpec()
	if err != nil {
		return Result{}, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	// -c names our own binary through /proc, which has no spaces: bpftrace
	// splits -c on spaces without quoting.
	helper := fmt.Sprintf("/proc/%d/exe %s", os.Getpid(), HelperCommand)
	cmd := exec.Command(cfg.Bpftrace, "-c", helper, scriptFile.Name())
	cmd.Env = append(os.Environ(),
		"BPFTRACE_MAP_KEYS_MAX="+strconv.Itoa(cfg.MapKeys),
		"BPFTRACE_PERF_RB_PAGES="+strconv.Itoa(cfg.PerfPages),
		"BPFTRACE_STRLEN=64",
		helperEnv+"="+spec,
	)
	cmd.ExtraFiles = []*os.File{orDevNull(cfg.Stdin, os.O_RDONLY), orDevNull(cfg.Stdout, os.O_WRONLY), orDevNull(cfg.Stderr, os.O_WRONLY), statusW}
	cmd.SysProcAttr = tracerProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("cannot start bpftrace: %v", err)
	}
	statusW.Close()

	st := &runState{target: s.cfg.Target, sink: sink, devs: map[event.Dev]bool{}, live: map[int]bool{},
		skipPids: map[uint32]bool{uint32(os.Getpid()): true, uint32(cmd.Process.Pid): true}}
	for _, p := range s.seeds {
		st.live[p] = true
	}
	st.base = monotonicNow()
	st.res.Start = time.Now()

	// stderr is drained in its own goroutine: a full pipe would block bpftrace.
	var errLines []string
	var errMu sync.Mutex
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if benignStderr(line) {
				continue
			}
			errMu.Lock()
			if len(errLines) < 20 {
				errLines = append(errLines, line)
			}
			errMu.Unlock()
		}
	}()

	records := make(chan []parse.Record, 64)
	var src io.Reader = stdout
	if cfg.Raw != nil {
		src = io.TeeReader(stdout, cfg.Raw)
	}
	go readRecords(src, records)
	statusCh := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(statusR)
		for sc.Scan() {
			statusCh <- sc.Text()
		}
		close(statusCh)
		statusR.Close()
	}()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var stopTimer <-chan time.Time
	var killTimer <-chan time.Time
	stopping := false
	var stoppedAt time.Time
	readMisses := func() {
		if n, ok := probeMisses(cmd.Process.Pid); ok && n > st.res.ProbeMisses {
			st.res.ProbeMisses = n
		}
	}
	stop := func(reason string) {
		if stopping {
			return
		}
		readMisses() // the programs are gone once bpftrace exits
		stopping = true
		stoppedAt = time.Now()
		st.res.EndReason = reason
		cmd.Process.Signal(syscall.SIGINT)
		killTimer = time.After(cfg.Grace)
	}
	started := time.Now()
	var runErr error
	recordsOpen := true
	for recordsOpen {
		select {
		case batch, ok := <-records:
			if !ok {
				recordsOpen = false
				break
			}
			if err := st.consume(batch); err != nil && runErr == nil {
				runErr = err
				stop("error")
			}
		case line, ok := <-statusCh:
			if !ok {
				statusCh = nil
				break
			}
			switch {
			case line == "ready":
				st.ready, st.readyAt, st.lastIO = true, time.Now(), time.Now()
				st.base = monotonicNow()
				st.res.Start = time.Now()
				if cfg.Target.Duration > 0 {
					stopTimer = time.After(cfg.Target.Duration)
				}
			default:
				exited, err := st.applyStatus(line)
				if err != nil {
					runErr = err
					stop("error")
				} else if exited {
					// bpftrace ends by itself once its child, the helper, is
					// gone: read the kernel's miss counters while its programs
					// exist.
					readMisses()
				}
			}
		case <-tick.C:
			if err := sink.FlushIfDue(time.Second); err != nil && runErr == nil {
				runErr = err
				stop("error")
			}
			if st.ready && !stopping {
				readMisses()
			}
			st.checkTargets(stop)
			if cfg.Progress != nil {
				cfg.Progress(Progress{Elapsed: time.Since(started), Events: st.res.Events, Bytes: st.bytes, Lost: st.res.Lost + st.res.ProbeMisses, Ready: st.ready})
			}
		case <-stopTimer:
			stop("duration")
		case <-ctx.Done():
			stop("interrupted")
			ctx = context.Background() // stop once
		case <-killTimer:
			cmd.Process.Kill()
			st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("bpftrace did not stop within %v of SIGINT and was killed; its final counters are missing", cfg.Grace))
		}
	}
	ended := time.Now()
	if stopping {
		ended = stoppedAt // not the tracer's detaching time
	}
	waitErr := cmd.Wait()
	<-errDone
	if st.ready {
		st.res.Duration = ended.Sub(st.readyAt)
	}
	if st.res.EndReason == "" {
		st.res.EndReason = "target exited"
	}
	errMu.Lock()
	defer errMu.Unlock()
	if !st.ready && runErr == nil {
		msg := "bpftrace exited before tracing started"
		if len(errLines) > 0 {
			msg += ": " + strings.TrimPrefix(errLines[0], "ERROR: ")
		}
		return st.res, errors.New(msg)
	}
	if waitErr != nil && !stopping {
		st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("bpftrace ended with %v: %s", waitErr, strings.Join(errLines, "; ")))
	}
	st.res.Devices = describeDevices(st.deviceList())
	st.finishWarnings("bpftrace", "raise --perf-pages")
	return st.res, runErr
}

func goarch() string { return runtime.GOARCH }

func orDevNull(f *os.File, flag int) *os.File {
	if f != nil {
		return f
	}
	n, err := os.OpenFile(os.DevNull, flag, 0)
	if err != nil {
		return nil
	}
	return n
}

// benignStderr filters bpftrace's noise: compile warnings about the script
// (with their source and caret lines), and an RLIMIT notice it prints even
// when the program loads fine.
func benignStderr(line string) bool {
	return strings.Contains(line, "couldn't set RLIMIT_MEMLOCK") ||
		strings.Contains(line, "WARNING:") ||
		strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") ||
		strings.TrimSpace(line) == ""
}

func readRecords(r io.Reader, out chan<- []parse.Record) {
	streamRecords(r, func(in io.Reader) recordScanner { return parse.NewBpftraceReader(in, "bpftrace", goarch()) }, out)
}

func (st *runState) consume(batch []parse.Record) error {
	ownIO := false
	defer func() {
		if ownIO { // once per batch: the clock is not free at 100k events/s
			st.lastIO = time.Now()
		}
	}()
	for i := range batch {
		r := &batch[i]
		switch r.Kind {
		case parse.KindEvent:
			e := &r.Event
			if st.skipPids[e.Pid] {
				continue
			}
			e.Start -= st.base
			e.End -= st.base
			if e.Flags&event.FlagDispatched != 0 {
				e.Dispatch -= st.base
			}
			st.devs[e.Dev] = true
			st.res.Events++
			st.bytes += e.Bytes
			if e.Flags&event.FlagKernel == 0 { // the target's own I/O, not the system's writeback
				ownIO = true
			}
			if err := st.sink.Write(e); err != nil {
				return err
			}
		case parse.KindLost:
			st.res.Lost += r.N
		case parse.KindCounter:
			switch r.Name {
			case "unmatched":
				st.res.Unmatched += r.N
			case "map_full":
				st.res.MapOverflows += r.N
			case "stale", "unfinished":
				st.res.Unfinished += r.N
			}
		case parse.KindReady:
			if r.N != 0 { // the tracer's own clock at start (DTrace's timestamp)
				st.base = r.N
			}
		case parse.KindFork:
			st.live[r.Child] = true
		case parse.KindExit:
			delete(st.live, r.Pid)
		case parse.KindError:
			st.res.ParseErrors++
			if st.res.ParseErrors <= 5 { // the first few, to diagnose with
				st.res.Warnings = append(st.res.Warnings, "tracer output "+r.Err.Error())
			}
		}
	}
	return nil
}

// applyStatus takes a helper status line: "pid N" (the command started),
// "exit N" (it ended: exited is true), "error MSG" (it could not start).
func (st *runState) applyStatus(line string) (exited bool, err error) {
	switch {
	case strings.HasPrefix(line, "pid "):
		if p, err := strconv.Atoi(line[4:]); err == nil {
			st.live[p] = true
		}
	case strings.HasPrefix(line, "exit "):
		if c, err := strconv.Atoi(line[5:]); err == nil {
			st.res.ExitStatus = &c
		}
		return true, nil
	case strings.HasPrefix(line, "error "):
		return false, fmt.Errorf("cannot start %s: %s", st.target.Command[0], line[6:])
	}
	return false, nil
}

// helperStatus takes a helper status line as applyStatus does, and stops
// the recording when the command could not start or — unless it is a
// launch or has a duration — when it exited.
func (st *runState) helperStatus(line string, stop func(string)) error {
	exited, err := st.applyStatus(line)
	if err != nil {
		stop("error")
		return err
	}
	if exited && !st.target.Launch && st.target.Duration == 0 {
		stop("target exited")
	}
	return nil
}

// deviceList is the devices seen, in order.
func (st *runState) deviceList() []event.Dev {
	var devs []event.Dev
	for d := range st.devs {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool {
		return devs[i].Major < devs[j].Major || devs[i].Major == devs[j].Major && devs[i].Minor < devs[j].Minor
	})
	return devs
}

// finishWarnings explains every loss the recording counted.
func (st *runState) finishWarnings(tracer, remedy string) {
	if st.res.Lost > 0 {
		st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("%s lost %d events: its output buffers overflowed (%s)", tracer, st.res.Lost, remedy))
	}
	if st.res.ProbeMisses > 0 {
		st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("the kernel skipped %d probe firings (a probe fired while another BPF program was running on the same CPU, e.g. a completion interrupt during a syscall probe): that many I/O events are missing or incomplete", st.res.ProbeMisses))
	}
	if st.res.Unfinished > 0 {
		st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("up to %d block requests may be missing: they were issued, but their completion was not seen or could not be confirmed (a map delete can fail under contention, so this is an upper bound)", st.res.Unfinished))
	}
	if st.res.MapOverflows > 0 {
		st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("%d in-flight I/Os could not be tracked: the tracer had no room for them", st.res.MapOverflows))
	}
	if st.res.ParseErrors > 0 {
		st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("%d tracer lines could not be parsed", st.res.ParseErrors))
	}
}

// checkTargets stops a recording whose target is gone: attached pids that
// have all exited, or a launch that has gone quiet.
func (st *runState) checkTargets(stop func(string)) {
	t := st.target
	if !st.ready {
		return
	}
	if t.Launch && time.Since(st.lastIO) >= t.Quiet {
		stop("quiet")
		return
	}
	if len(t.Pids) > 0 && len(t.Names) == 0 {
		for p := range st.live {
			if !processExists(p) {
				delete(st.live, p)
			}
		}
		if len(st.live) == 0 {
			stop("target exited")
		}
	}
}

func (s *bpftraceSession) helperSpec() (string, error) {
	if len(s.command) == 0 { // only to signal readiness
		return `{}`, nil
	}
	return helperSpecFor(s.cfg, s.command, false)
}
