package tracer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// fsusageRun is a running `fs_usage -w -f diskio`: the block layer on a Mac
// when DTrace cannot see it, or alone with --backend fsusage. fs_usage uses
// kdebug, not DTrace, so SIP does not restrict it (tracing.md §5).
type fsusageRun struct {
	cmd     *exec.Cmd
	reader  *parse.FsUsageReader
	records chan []parse.Record
	stopped bool
	lost    int64
	// fs_usage prints the time of day; zero is local midnight of the day
	// recording started, and started is the trace's time zero.
	midnight time.Time
	started  time.Time
}

// fsusageArgs filters fs_usage to the target by pid or command name (it
// cannot follow children by itself) and keeps kernel_task, which issues
// delayed writes on processes' behalf.
func fsusageArgs(t Target, command []string) []string {
	args := []string{"-w", "-f", "diskio"}
	var filter []string
	for _, p := range t.Pids {
		filter = append(filter, fmt.Sprint(p))
	}
	filter = append(filter, t.Names...)
	if len(command) > 0 {
		filter = append(filter, filepath.Base(command[0]))
	}
	if len(filter) > 0 && !t.All {
		args = append(args, append(filter, "kernel_task")...)
	}
	return args
}

func startFsUsage(path string, t Target, command []string, started time.Time) (*fsusageRun, error) {
	f := &fsusageRun{records: make(chan []parse.Record, 64), started: started}
	y, m, d := started.Date()
	f.midnight = time.Date(y, m, d, 0, 0, 0, 0, started.Location())
	f.cmd = exec.Command(path, fsusageArgs(t, command)...)
	f.cmd.SysProcAttr = tracerProcAttr()
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := f.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := f.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start fs_usage: %v", err)
	}
	ready := make(chan struct{})
	go streamRecords(stdout, func(in io.Reader) recordScanner {
		f.reader = parse.NewFsUsageReader(in, "fs_usage", DTraceBlockSize)
		close(ready)
		return f.reader
	}, f.records)
	<-ready
	go func() { // "fs_usage: buffer overrun, events generated too quickly"
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "buffer overrun") {
				f.lost++
			}
		}
	}()
	return f, nil
}

// consume turns fs_usage's times of day into trace time and records the
// events. The reader's times count from its first line.
func (f *fsusageRun) consume(st *runState, batch []parse.Record) error {
	offset := f.midnight.Add(time.Duration(f.reader.FirstTimeOfDay())).Sub(f.started).Nanoseconds()
	for i := range batch {
		r := &batch[i]
		switch r.Kind {
		case parse.KindEvent:
			e := &r.Event
			e.Start += offset
			e.End += offset
			if e.Comm == "kernel_task" {
				e.Flags |= event.FlagKernel
			}
			st.res.Events++
			st.bytes += e.Bytes
			if e.Flags&event.FlagKernel == 0 {
				st.lastIO = time.Now()
			}
			if err := st.sink.Write(e); err != nil {
				return err
			}
		case parse.KindLost:
			st.res.Lost++
		case parse.KindError:
			st.res.ParseErrors++
		}
	}
	return nil
}

func (f *fsusageRun) stop() {
	if !f.stopped {
		f.stopped = true
		f.cmd.Process.Signal(syscall.SIGINT)
	}
}

func (f *fsusageRun) wait() { f.cmd.Wait() }

// devices names the disks fs_usage reported, numbered as the parser did.
func (f *fsusageRun) devices() []tracefile.Device {
	var out []tracefile.Device
	for i, name := range f.reader.Devices() {
		out = append(out, tracefile.Device{Major: 0, Minor: uint32(i + 1), Name: name})
	}
	return out
}

// fsusageSession records the block layer with fs_usage alone.
type fsusageSession struct {
	cfg     Config
	command []string
}

func prepareFsUsage(cfg Config) (*fsusageSession, error) {
	if cfg.FsUsage == "" {
		p, err := exec.LookPath("fs_usage")
		if err != nil {
			return nil, errors.New("fs_usage is not installed (it comes with macOS)")
		}
		cfg.FsUsage = p
	}
	_, command, err := resolveTargets(cfg.Target)
	if err != nil {
		return nil, err
	}
	return &fsusageSession{cfg: cfg, command: command}, nil
}

func (s *fsusageSession) Backend() string        { return BackendFsUsage }
func (s *fsusageSession) BackendVersion() string { return "fs_usage" }
func (s *fsusageSession) Script() Script {
	return Script{Name: "fs_usage " + strings.Join(fsusageArgs(s.cfg.Target, s.command), " ")}
}

func (s *fsusageSession) Fidelity() []string {
	return []string{
		"fs_usage: the block layer only (no syscall layer, so no requested queue depth)",
		"fs_usage: no split between queueing and the device; issue time is completion minus elapsed time",
		"fs_usage: offsets are device block numbers times 4096, not file offsets",
		"fs_usage: it filters by pid or command name and cannot follow children with other names; it prints thread IDs, so processes are grouped by name",
	}
}

// fsusageSettle is how long fs_usage is given to start before the command
// runs: unlike DTrace it says nothing when it is ready.
const fsusageSettle = time.Second

func (s *fsusageSession) Run(ctx context.Context, sink Sink) (Result, error) {
	cfg := s.cfg
	if cfg.Target.Cold {
		if err := dropCaches(); err != nil {
			return Result{}, err
		}
	}
	st := &runState{target: cfg.Target, sink: sink, devs: map[event.Dev]bool{}, live: map[int]bool{}}
	for _, p := range cfg.Target.Pids {
		st.live[p] = true
	}
	var helper *helperProc
	if len(s.command) > 0 {
		var err error
		if helper, err = startHelperProc(cfg, s.command); err != nil {
			return Result{}, err
		}
		defer helper.release()
	}
	started := time.Now()
	f, err := startFsUsage(cfg.FsUsage, cfg.Target, s.command, started)
	if err != nil {
		helper.kill()
		return Result{}, err
	}
	st.res.Start = started
	select {
	case <-time.After(fsusageSettle):
	case <-ctx.Done():
	}
	st.ready, st.readyAt, st.lastIO = true, time.Now(), time.Now()
	helper.release()
	if cfg.Progress != nil {
		cfg.Progress(Progress{Ready: true})
	}
	var stopTimer <-chan time.Time
	if cfg.Target.Duration > 0 {
		stopTimer = time.After(cfg.Target.Duration)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var runErr error
	stoppedAt := time.Time{}
	stop := func(reason string) {
		if f.stopped {
			return
		}
		stoppedAt = time.Now()
		st.res.EndReason = reason
		f.stop()
	}
	status := helper.statusLines()
	for open := true; open; {
		select {
		case batch, ok := <-f.records:
			if !ok {
				open = false
				break
			}
			if err := f.consume(st, batch); err != nil && runErr == nil {
				runErr = err
				stop("error")
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
			if err := sink.FlushIfDue(time.Second); err != nil && runErr == nil {
				runErr = err
				stop("error")
			}
			if !f.stopped {
				st.checkTargets(stop)
			}
			if cfg.Progress != nil {
				cfg.Progress(Progress{Elapsed: time.Since(started), Events: st.res.Events, Bytes: st.bytes, Lost: st.res.Lost, Ready: true})
			}
		case <-stopTimer:
			stop("duration")
		case <-ctx.Done():
			stop("interrupted")
			ctx = context.Background()
		}
	}
	f.wait()
	st.res.Lost += f.lost
	if stoppedAt.IsZero() {
		stoppedAt = time.Now()
		st.res.EndReason = "tracer exited"
	}
	st.res.Duration = stoppedAt.Sub(st.readyAt)
	st.res.Devices = f.devices()
	st.finishWarnings("fs_usage", "fs_usage reported buffer overruns")
	return st.res, runErr
}
