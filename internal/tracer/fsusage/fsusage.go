package fsusage

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// BlockSize converts fs_usage's (and DTrace's) block numbers to bytes: it
// does not say the device block size; 4096 is APFS's on current SSDs
// (tracing.md §8).
const BlockSize = 4096

// Args filters fs_usage to the target by pid or command name (it cannot
// follow children by itself) and keeps kernel_task, which issues delayed
// writes on processes' behalf.
func Args(t session.Target, command []string) []string {
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

// Proc is a running `fs_usage -w -f diskio`: the block layer on a Mac when
// DTrace cannot see it, or alone with --backend fsusage. fs_usage uses
// kdebug, not DTrace, so SIP does not restrict it (tracing.md §5).
type Proc struct {
	cmd    *exec.Cmd
	reader *parse.FsUsageReader
	once   sync.Once
	// fs_usage prints the time of day; started is when it was started, on
	// the wall clock and on the monotonic clock the loop's base comes from.
	started     time.Time
	startedMono int64
	outputDone  chan struct{} // closed when its output ends

	errMu    sync.Mutex
	errLines []string // what it said on stderr, besides overruns
}

// Start starts fs_usage and adds its output to fan: its stdout as events
// (with times on the monotonic clock), its stderr's buffer overruns as
// lost events.
func Start(path string, args []string, fan *session.Fan) (*Proc, error) {
	p := &Proc{started: time.Now(), startedMono: session.MonotonicNow(), outputDone: make(chan struct{})}
	p.cmd = exec.Command(path, args...)
	p.cmd.SysProcAttr = session.TracerProcAttr()
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start fs_usage: %w", err)
	}
	in := session.NewFlushingReader(stdout, nil)
	p.reader = parse.NewFsUsageReader(in, "fs_usage", BlockSize)
	fan.Go(func(send func([]parse.Record)) {
		defer close(p.outputDone)
		session.StreamRecords(p.reader, in, func(b []parse.Record) { send(p.toMonotonic(b)) })
	})
	fan.Go(func(send func([]parse.Record)) {
		// "fs_usage: buffer overrun, events generated too quickly"
		session.ScanLines(stderr, func(line string) {
			if strings.Contains(line, "buffer overrun") {
				send([]parse.Record{{Kind: parse.KindLost, N: 1}})
				return
			}
			p.errMu.Lock()
			if len(p.errLines) < 5 && strings.TrimSpace(line) != "" {
				p.errLines = append(p.errLines, strings.TrimSpace(line))
			}
			p.errMu.Unlock()
		})
	})
	return p, nil
}

// toMonotonic turns the reader's times (from its first line's time of day)
// into the monotonic clock, and marks kernel_task's I/O as the kernel's.
func (p *Proc) toMonotonic(batch []parse.Record) []parse.Record {
	offset := p.startedMono + MidnightBefore(p.started, p.reader.FirstTimeOfDay()).Add(time.Duration(p.reader.FirstTimeOfDay())).Sub(p.started).Nanoseconds()
	for i := range batch {
		if batch[i].Kind != parse.KindEvent {
			continue
		}
		e := &batch[i].Event
		e.Start += offset
		e.End += offset
		if e.Comm == "kernel_task" {
			e.Flags |= event.FlagKernel
		}
	}
	return batch
}

// MidnightBefore is the local midnight that a time of day tod (ns after
// midnight) printed around started counts from: started's own day, or the
// next one when started is just before midnight and tod just after.
func MidnightBefore(started time.Time, tod int64) time.Time {
	y, m, d := started.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, started.Location())
	const halfDay = 12 * time.Hour
	at := midnight.Add(time.Duration(tod))
	switch {
	case started.Sub(at) > halfDay:
		return midnight.AddDate(0, 0, 1)
	case at.Sub(started) > halfDay:
		return midnight.AddDate(0, 0, -1)
	}
	return midnight
}

// Stop asks fs_usage to stop (once).
func (p *Proc) Stop() { p.once.Do(func() { p.cmd.Process.Signal(syscall.SIGINT) }) }

// Kill ends an fs_usage that did not stop.
func (p *Proc) Kill() { p.cmd.Process.Kill() }

// Wait waits for fs_usage to exit; its error is what fs_usage said on
// stderr, if anything.
func (p *Proc) Wait() error {
	err := p.cmd.Wait()
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if len(p.errLines) > 0 {
		return errors.New(strings.Join(p.errLines, "; "))
	}
	return err
}

// Devices names the disks fs_usage reported, numbered as the parser did.
func (p *Proc) Devices() []event.Device {
	var out []event.Device
	for i, name := range p.reader.Devices() {
		out = append(out, event.Device{Major: 0, Minor: uint32(i + 1), Name: name})
	}
	return out
}

// Session records the block layer with fs_usage alone.
type Session struct {
	session.Described
	cfg     session.Config
	command []string
}

// Prepare checks that fs_usage is there and resolves the target.
func Prepare(cfg session.Config) (*Session, error) {
	var err error
	if cfg.FsUsage, err = session.LookTool(cfg.FsUsage, "fs_usage", "fs_usage is not installed (it comes with macOS)"); err != nil {
		return nil, err
	}
	_, command, err := session.ResolveTargets(cfg.Target)
	if err != nil {
		return nil, err
	}
	script := session.Script{Name: "fs_usage " + strings.Join(Args(cfg.Target, command), " ")}
	return &Session{cfg: cfg, command: command, Described: session.Described{Name: "fsusage", Version: "fs_usage", Rendered: script, Limits: limits}}, nil
}

// limits is what this backend cannot see.
var limits = []string{
	"fs_usage: the block layer only (no syscall layer, so no requested queue depth)",
	"fs_usage: no split between queueing and the device; issue time is completion minus elapsed time",
	"fs_usage: offsets are device block numbers times 4096, not file offsets",
	"fs_usage: it filters by pid or command name and cannot follow children with other names; it prints thread IDs, so processes are grouped by name",
}

// settle is how long fs_usage is given to start before the command runs:
// unlike DTrace it says nothing when it is ready.
const settle = time.Second

// Run records until the target ends, the duration passes, or ctx is
// cancelled.
func (s *Session) Run(ctx context.Context, sink session.Sink) (session.Result, error) {
	plan := session.Plan{
		Name: "fs_usage", Remedy: "fs_usage reported buffer overruns", Seeds: s.cfg.Target.Pids, Command: s.command,
		Start: func(int) (session.Tracer, error) {
			t := &tracer{fan: session.NewFan(), stopped: make(chan struct{})}
			var err error
			if t.proc, err = Start(s.cfg.FsUsage, Args(s.cfg.Target, s.command), t.fan); err != nil {
				return nil, err
			}
			t.fan.Go(t.readyAfterSettle)
			t.fan.Seal()
			return t, nil
		},
	}
	return session.Run(ctx, s.cfg, plan, sink)
}

// tracer is fs_usage alone, as the loop drives it.
type tracer struct {
	proc    *Proc
	fan     *session.Fan
	stopped chan struct{}
	once    sync.Once
}

func (t *tracer) readyAfterSettle(send func([]parse.Record)) {
	select {
	case <-time.After(settle):
		send([]parse.Record{{Kind: parse.KindReady}})
	case <-t.stopped:
	case <-t.proc.outputDone: // it ended before it was ready
	}
}

func (t *tracer) Records() <-chan []parse.Record { return t.fan.Records() }

func (t *tracer) Stop() {
	t.once.Do(func() { close(t.stopped) })
	t.proc.Stop()
}

func (t *tracer) Kill() { t.proc.Kill() }

func (t *tracer) Wait(res *session.Result) error {
	err := t.proc.Wait()
	res.Devices = append(res.Devices, t.proc.Devices()...)
	return err
}
