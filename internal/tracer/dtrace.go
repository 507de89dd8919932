package tracer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
)

// dtraceSession records with DTrace (macOS, and DTrace elsewhere). The
// command is started by ioshape, not by dtrace -c: under System Integrity
// Protection dtrace cannot control Apple-signed binaries such as /bin/cp
// (tracing.md §4). It waits until the script's BEGIN has fired, then runs.
// When SIP hides the io provider, the block layer comes from fs_usage.
type dtraceSession struct {
	cfg            Config
	seeds          []int
	command        []string
	backendVersion string
	script         Script
	fsusage        string // path, for the SIP fallback
}

// DTraceBlockSize converts io:::start's b_blkno to bytes. DTrace does not
// say the device block size; 4096 is APFS's on current SSDs (tracing.md §8).
const DTraceBlockSize = 4096

func prepareDTrace(cfg Config) (*dtraceSession, error) {
	if cfg.DTrace == "" {
		p, err := exec.LookPath("dtrace")
		if err != nil {
			return nil, errors.New("dtrace is not installed (it comes with macOS; on Linux use --backend bpftrace)")
		}
		cfg.DTrace = p
	}
	s := &dtraceSession{cfg: cfg}
	var err error
	if s.seeds, s.command, err = resolveTargets(cfg.Target); err != nil {
		return nil, err
	}
	if cfg.FsUsage != "" {
		s.fsusage = cfg.FsUsage
	} else if p, err := exec.LookPath("fs_usage"); err == nil {
		s.fsusage = p
	}
	// The script shown before recording assumes the io provider; the one run
	// names the real target pid once the helper exists.
	if s.script, err = renderDTrace(cfg.Target, s.seeds, true); err != nil {
		return nil, err
	}
	s.backendVersion = "dtrace"
	if out, err := exec.Command(cfg.DTrace, "-V").Output(); err == nil {
		s.backendVersion = strings.TrimSpace(string(out))
	}
	return s, nil
}

func (s *dtraceSession) Backend() string        { return BackendDTrace }
func (s *dtraceSession) BackendVersion() string { return s.backendVersion }
func (s *dtraceSession) Script() Script         { return s.script }

func (s *dtraceSession) Fidelity() []string {
	return []string{
		"dtrace: no split between queueing and the device (io:::start is the dispatch to the driver)",
		"dtrace: block offsets are b_blkno times 4096 (the device block size is not given)",
		"dtrace: syscalls are tied to a file descriptor, not a file: reading kernel memory for file identity fails under SIP",
		"dtrace: memory-mapped I/O is not seen at the syscall layer",
	}
}

// dtraceRun is one recording's processes and channels.
type dtraceRun struct {
	s        *dtraceSession
	st       *runState
	cmd      *exec.Cmd
	helper   *helperProc // nil without a command target
	records  chan []parse.Record
	messages chan parse.Message
	fsu      *fsusageRun
	sawSIP   bool
}

func (s *dtraceSession) Run(ctx context.Context, sink Sink) (Result, error) {
	cfg := s.cfg
	if cfg.Grace == 0 {
		cfg.Grace = 5 * time.Second
	}
	if cfg.Target.Cold {
		if err := dropCaches(); err != nil {
			return Result{}, err
		}
	}
	r := &dtraceRun{s: s, records: make(chan []parse.Record, 64), messages: make(chan parse.Message, 64)}
	r.st = &runState{target: cfg.Target, sink: sink, devs: map[event.Dev]bool{}, live: map[int]bool{},
		skipPids: map[uint32]bool{uint32(os.Getpid()): true}}
	for _, p := range s.seeds {
		r.st.live[p] = true
	}
	pids := s.seeds
	if len(s.command) > 0 {
		var err error
		if r.helper, err = startHelperProc(cfg, s.command); err != nil {
			return Result{}, err
		}
		pids = []int{r.helper.cmd.Process.Pid}
		r.st.skipPids[uint32(pids[0])] = true
		defer r.helper.release()
	}
	script, err := renderDTrace(cfg.Target, pids, true)
	if err != nil {
		return Result{}, err
	}
	s.script = script
	if err := r.startDTrace(script); err != nil {
		r.helper.kill()
		return Result{}, err
	}
	r.st.res.Start = time.Now()
	res, err := r.loop(ctx, cfg)
	if err != nil && !r.st.ready && r.sawSIP {
		// SIP made dtrace refuse the io provider outright: run without it;
		// fs_usage takes the block layer when the notice comes again.
		if script, err = renderDTrace(cfg.Target, pids, false); err != nil {
			return res, err
		}
		s.script = script
		r.records, r.messages = make(chan []parse.Record, 64), make(chan parse.Message, 64)
		r.st.res, r.fsu = Result{}, nil
		if err := r.startDTrace(script); err != nil {
			r.helper.kill()
			return Result{}, err
		}
		r.st.res.Start = time.Now()
		res, err = r.loop(ctx, cfg)
	}
	if err != nil && !r.st.ready {
		r.helper.kill() // the command never started
	}
	return res, err
}

func (r *dtraceRun) startDTrace(script Script) error {
	f, err := os.CreateTemp("", "ioshape-*.d")
	if err != nil {
		return err
	}
	if _, err := f.WriteString(script.Text); err != nil {
		f.Close()
		return err
	}
	f.Close()
	// -Z: probes this system lacks (the _nocancel variants outside macOS)
	// do not stop the rest; -q: only the script's output on stdout.
	r.cmd = exec.Command(r.s.cfg.DTrace, "-Z", "-q", "-s", f.Name())
	r.cmd.SysProcAttr = tracerProcAttr()
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := r.cmd.Start(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cannot start dtrace: %v", err)
	}
	go func() {
		defer os.Remove(f.Name())
		streamRecords(stdout, func(in io.Reader) recordScanner { return parse.NewDTraceReader(in, "dtrace", DTraceBlockSize) }, r.records)
	}()
	go func() {
		defer close(r.messages)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.messages <- parse.ParseDTraceMessage(sc.Text())
		}
	}()
	return nil
}

// recordScanner is what the tracers' output readers have in common.
type recordScanner interface {
	Scan() bool
	Record() *parse.Record
}

// streamRecords parses a tracer's output and sends its records in batches,
// then closes out. A batch goes out when it is full, and also whenever the
// parser has used up the input it has and is about to wait for more: a
// quiet tracer's few records (READY, a launch's last I/O) must not wait for
// a batch to fill.
func streamRecords(r io.Reader, newParser func(io.Reader) recordScanner, out chan<- []parse.Record) {
	defer close(out)
	batch := make([]parse.Record, 0, 256)
	flush := func() {
		if len(batch) > 0 {
			out <- batch
			batch = make([]parse.Record, 0, 256)
		}
	}
	p := newParser(flushBeforeRead{r, flush})
	for p.Scan() {
		batch = append(batch, *p.Record())
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
}

// flushBeforeRead calls flush before each read of the tracer's output: the
// parser reads only when it has nothing left to parse, so that is when the
// records so far should go.
type flushBeforeRead struct {
	r     io.Reader
	flush func()
}

func (f flushBeforeRead) Read(p []byte) (int, error) {
	f.flush()
	return f.r.Read(p)
}

func (r *dtraceRun) loop(ctx context.Context, cfg Config) (Result, error) {
	st := r.st
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var stopTimer, killTimer <-chan time.Time
	var stoppedAt time.Time
	stopping := false
	var runErr error
	var fatal []string
	stop := func(reason string) {
		if stopping {
			return
		}
		stopping, stoppedAt = true, time.Now()
		st.res.EndReason = reason
		r.cmd.Process.Signal(syscall.SIGINT)
		if r.fsu != nil {
			r.fsu.stop()
		}
		killTimer = time.After(cfg.Grace)
	}
	started := time.Now()
	messages := r.messages
	status := r.helper.statusLines()
	var fsRecords chan []parse.Record
	for recordsOpen := true; recordsOpen; {
		select {
		case batch, ok := <-r.records:
			if !ok {
				recordsOpen = false
				break
			}
			for _, rec := range batch {
				if rec.Kind == parse.KindReady && !st.ready {
					st.ready, st.readyAt, st.lastIO = true, time.Now(), time.Now()
					st.res.Start = time.Now()
					if cfg.Target.Duration > 0 {
						stopTimer = time.After(cfg.Target.Duration)
					}
					r.helper.release()
				}
			}
			if err := st.consume(batch); err != nil && runErr == nil {
				runErr = err
				stop("error")
			}
		case batch, ok := <-fsRecords:
			if !ok {
				fsRecords = nil
				break
			}
			if err := r.fsu.consume(st, batch); err != nil && runErr == nil {
				runErr = err
				stop("error")
			}
		case m, ok := <-messages:
			if !ok {
				messages = nil
				break
			}
			switch m.Kind {
			case parse.MsgDrop, parse.MsgAggDrop, parse.MsgSpecDrop:
				st.res.Lost += m.N
			case parse.MsgDynDrop:
				st.res.MapOverflows += m.N
			case parse.MsgRuntimeError:
				st.res.ProbeErrors++
				if st.res.ProbeErrors <= 3 {
					st.res.Warnings = append(st.res.Warnings, m.Text)
				}
			case parse.MsgSIP:
				r.sawSIP = true
				if r.fsu == nil && !stopping {
					st.res.Warnings = append(st.res.Warnings, sipWarning(r.s.fsusage != ""))
					if r.s.fsusage != "" {
						fsu, err := startFsUsage(r.s.fsusage, r.s.cfg.Target, r.s.command, started)
						if err != nil {
							st.res.Warnings = append(st.res.Warnings, "fs_usage: "+err.Error())
						} else {
							r.fsu, fsRecords = fsu, fsu.records
						}
					}
				}
			case parse.MsgFatal, parse.MsgNoProbes:
				fatal = append(fatal, m.Text)
			}
		case line, ok := <-status:
			if !ok {
				status = nil
				break
			}
			if err := st.helperStatus(line, stop); err != nil {
				runErr = err
			}
		case <-tick.C:
			if err := st.sink.FlushIfDue(time.Second); err != nil && runErr == nil {
				runErr = err
				stop("error")
			}
			if !stopping {
				st.checkTargets(stop)
			}
			if cfg.Progress != nil {
				cfg.Progress(Progress{Elapsed: time.Since(started), Events: st.res.Events, Bytes: st.bytes, Lost: st.res.Lost, Ready: st.ready})
			}
		case <-stopTimer:
			stop("duration")
		case <-ctx.Done():
			stop("interrupted")
			ctx = context.Background()
		case <-killTimer:
			r.cmd.Process.Kill()
			st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("dtrace did not stop within %v of SIGINT and was killed", cfg.Grace))
		}
	}
	for m := range orClosed(messages) { // what dtrace said on its way out
		if m.Kind == parse.MsgDrop || m.Kind == parse.MsgAggDrop || m.Kind == parse.MsgSpecDrop {
			st.res.Lost += m.N
		} else if m.Kind == parse.MsgFatal || m.Kind == parse.MsgNoProbes {
			fatal = append(fatal, m.Text)
		}
	}
	waitErr := r.cmd.Wait()
	if r.fsu != nil {
		r.fsu.stop()
		for batch := range orClosed(fsRecords) {
			r.fsu.consume(st, batch)
		}
		r.fsu.wait()
		st.res.Devices = append(st.res.Devices, r.fsu.devices()...)
	}
	ended := time.Now()
	if stopping {
		ended = stoppedAt
	}
	if st.ready {
		st.res.Duration = ended.Sub(st.readyAt)
	}
	if st.res.EndReason == "" {
		st.res.EndReason = "tracer exited"
	}
	if !st.ready && runErr == nil {
		msg := "dtrace exited before tracing started"
		if len(fatal) > 0 {
			msg += ": " + strings.TrimPrefix(fatal[0], "dtrace: ")
		} else if waitErr != nil {
			msg += ": " + waitErr.Error()
		}
		return st.res, errors.New(msg)
	}
	st.res.Devices = append(describeDevices(st.deviceList()), st.res.Devices...)
	st.finishWarnings("dtrace", "raise bufsize or switchrate")
	if st.res.ProbeErrors > 0 {
		st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("%d probe actions failed at run time (dtrace: error on enabled probe): their events are missing", st.res.ProbeErrors))
	}
	return st.res, runErr
}

// orClosed is ch, or a closed channel if ch is nil (already drained), so
// that ranging over it ends.
func orClosed[T any](ch chan T) chan T {
	if ch == nil {
		ch = make(chan T)
		close(ch)
	}
	return ch
}

func sipWarning(fallback bool) string {
	msg := "System Integrity Protection restricts DTrace: the block layer (io provider) is invisible to it. " +
		"To trace it with DTrace, boot into recoveryOS and run 'csrutil enable --without dtrace'"
	if fallback {
		return msg + "; meanwhile the block layer comes from fs_usage"
	}
	return msg + "; fs_usage was not found, so this trace has no block layer"
}

// helperSpecFor is the helper's instructions for a command target.
func helperSpecFor(cfg Config, command []string, waitGo bool) (string, error) {
	spec := helperSpec{Argv: command, Detach: cfg.Target.Launch, WaitGo: waitGo}
	dir, err := os.Getwd()
	if err != nil {
		dir = "/"
	}
	spec.Dir = dir
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "IOSHAPE_") || strings.HasPrefix(kv, "BPFTRACE_") {
			continue
		}
		if u := cfg.RunAs; u.Set && u.Home != "" && strings.HasPrefix(kv, "HOME=") {
			kv = "HOME=" + u.Home
		}
		spec.Env = append(spec.Env, kv)
	}
	if u := cfg.RunAs; u.Set {
		spec.UID, spec.GID, spec.Groups, spec.SetID = u.UID, u.GID, u.Groups, true
	}
	b, err := json.Marshal(spec)
	return string(b), err
}
