package fsusage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// BlockSize converts fs_usage's (and DTrace's) block numbers to bytes: it
// does not say the device block size; 4096 is APFS's on current SSDs.
const BlockSize = 4096

// Args asks for both layers (file-system calls and disk I/O) from every
// process: fs_usage cannot follow children, so ioshape filters itself,
// by process tree. Without pids fs_usage still hides a few programs of its
// own choosing (sh, zsh, csh, tcsh, Terminal, sshd, telnetd, rlogind).
func Args(session.Target, []string) []string {
	return []string{"-w", "-f", "filesys", "-f", "diskio"}
}

// Options say what a Proc keeps.
type Options struct {
	Target  session.Target
	Command []string
	// BlockOnly keeps disk I/O alone (DTrace has the syscall layer).
	BlockOnly bool
}

// Proc is a running `fs_usage -w`: both layers on a Mac when DTrace cannot
// see them, or the block layer beside a DTrace that SIP restricts. fs_usage
// uses kdebug, not DTrace, so SIP does not restrict it.
type Proc struct {
	cmd    *exec.Cmd
	reader *parse.FsUsageReader
	once   sync.Once
	opts   Options
	procs  *procTable
	self   uint32 // ioshape's pid
	// selfComm and commandComm are ioshape's and the command's names as
	// fs_usage prints them (cut at 16 characters).
	selfComm, commandComm string
	// fs_usage prints the time of day; started is when it was started, on
	// the wall clock and on the monotonic clock the loop's base comes from.
	started     time.Time
	startedMono int64
	outputDone  chan struct{} // closed when its output ends
	ready       chan struct{} // closed when ioshape's marker I/O came back
	readyOnce   sync.Once

	roots     map[uint32]bool // the target's processes, whose descendants are kept
	rootsMu   sync.Mutex
	treeComms map[string]bool // names seen in the target's tree, for threads that cannot be mapped
	byName    int64           // events kept by name alone

	errMu    sync.Mutex
	errLines []string // what it said on stderr, besides overruns
}

// markerSize is the size of the read ioshape issues to see fs_usage
// running: an odd count no program is likely to ask for.
const markerSize = 0x1d5

// Start starts fs_usage and adds its output to fan: its stdout as events
// (with times on the monotonic clock), its stderr's buffer overruns as
// lost events.
func Start(path string, args []string, fan *session.Fan, opts Options) (*Proc, error) {
	p := &Proc{started: time.Now(), startedMono: host.MonotonicNow(), outputDone: make(chan struct{}), ready: make(chan struct{}),
		opts: opts, procs: newProcTable(), self: uint32(os.Getpid()), roots: map[uint32]bool{}, treeComms: map[string]bool{}}
	for _, pid := range opts.Target.Pids {
		p.roots[uint32(pid)] = true
	}
	p.selfComm = truncComm(filepath.Base(os.Args[0]))
	if len(opts.Command) > 0 {
		p.commandComm = truncComm(filepath.Base(opts.Command[0]))
	}
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
	if err := session.StartChild(p.cmd); err != nil {
		return nil, fmt.Errorf("cannot start fs_usage: %w", err)
	}
	in := session.NewFlushingReader(stdout, nil)
	p.reader = parse.NewFsUsageReader(in, "fs_usage", BlockSize)
	p.reader.Resolve = func(tid uint32, _ string) (uint32, bool) { return p.procs.pidOf(tid) }
	fan.Go(func(send func([]parse.Record)) {
		defer close(p.outputDone)
		session.StreamRecords(p.reader, in, func(b []parse.Record) { send(p.adapt(b)) })
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

// AddRoot adds a process whose tree is the target (the command's helper).
func (p *Proc) AddRoot(pid int) {
	p.rootsMu.Lock()
	p.roots[uint32(pid)] = true
	p.rootsMu.Unlock()
}

// keep says whether an event belongs in the trace: the target's (by
// process tree, by name, or everything), or the kernel's on its behalf.
// ioshape's own I/O — its marker reads above all — is never kept.
func (p *Proc) keep(e *event.Event) bool {
	if p.opts.BlockOnly && e.Layer != event.Block {
		return false
	}
	if e.Comm == "kernel_task" {
		return true
	}
	resolved := !parse.IsPseudoPid(e.Pid)
	if resolved && e.Pid == p.self || e.Comm == "fs_usage" {
		return false
	}
	t := p.opts.Target
	if t.All {
		return true
	}
	for _, n := range t.Names {
		if e.Comm == n {
			return true
		}
	}
	p.rootsMu.Lock()
	defer p.rootsMu.Unlock()
	if resolved {
		if p.procs.descends(e.Pid, p.roots) {
			p.treeComms[e.Comm] = true
			return true
		}
		return false
	}
	// A thread gone before ioshape could map it: its name must do.
	if p.treeComms[e.Comm] || p.commandComm != "" && e.Comm == p.commandComm {
		p.byName++
		return true
	}
	return false
}

// truncComm is a program name as the kernel keeps it (MAXCOMLEN, 16).
func truncComm(s string) string {
	if len(s) > 16 {
		return s[:16]
	}
	return s
}

// isMarker recognises ioshape's own readiness read.
func (p *Proc) isMarker(e *event.Event) bool {
	return e.Layer == event.Syscall && e.Op == event.Read && e.Bytes == markerSize &&
		(e.Pid == p.self || e.Comm == p.selfComm)
}

// adapt turns the reader's times (from its first line's time of day)
// into the monotonic clock, marks kernel_task's I/O as the kernel's, drops
// what is not the target's, and turns ioshape's marker into readiness.
func (p *Proc) adapt(batch []parse.Record) []parse.Record {
	offset := p.startedMono + MidnightBefore(p.started, p.reader.FirstTimeOfDay()).Add(time.Duration(p.reader.FirstTimeOfDay())).Sub(p.started).Nanoseconds()
	out := batch[:0]
	for _, r := range batch {
		if r.Kind == parse.KindSkip {
			continue
		}
		if r.Kind != parse.KindEvent {
			out = append(out, r)
			continue
		}
		e := &r.Event
		if p.isMarker(e) {
			p.readyOnce.Do(func() { close(p.ready) })
			continue
		}
		if !p.keep(e) {
			continue
		}
		e.Start += offset
		e.End += offset
		if e.Comm == "kernel_task" {
			e.Flags |= event.FlagKernel
		}
		out = append(out, r)
	}
	return out
}

// WaitReady issues marker reads until fs_usage shows one (it is then
// tracing), fs_usage ends, or timeout passes: readiness proven, not
// assumed after a sleep.
func (p *Proc) WaitReady(timeout time.Duration, stop <-chan struct{}) error {
	f, err := os.CreateTemp("", fmt.Sprintf("ioshape-ready-%d-*", os.Getpid()))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(make([]byte, markerSize)); err != nil {
		return err
	}
	buf := make([]byte, markerSize)
	deadline := time.After(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		f.ReadAt(buf, 0)
		select {
		case <-p.ready:
			return nil
		case <-p.outputDone:
			return errors.New("fs_usage ended before it showed any output")
		case <-stop:
			return nil
		case <-deadline:
			return fmt.Errorf("fs_usage did not show ioshape's marker read within %v: it is not tracing", timeout)
		case <-tick.C:
		}
	}
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
// stderr, if anything, made into one line the user can act on.
func (p *Proc) Wait() error {
	err := p.cmd.Wait()
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if len(p.errLines) > 0 {
		return errors.New(explain(strings.Join(p.errLines, "; ")))
	}
	return err
}

// explain turns what fs_usage says when it cannot trace into what to do.
// Only one kdebug client can trace at a time.
func explain(msg string) string {
	switch {
	case strings.Contains(msg, "Resource busy"), strings.Contains(msg, "currently in use"):
		return "the kernel trace facility (kdebug) is busy: another tracer holds it — Instruments, fs_usage, sc_usage, latency, spindump or ktrace; quit it (e.g. 'sudo pkill fs_usage') and try again"
	case strings.Contains(msg, "must be run as root"):
		return "fs_usage must run as root: use sudo"
	}
	return "fs_usage: " + msg
}

// ByName counts events whose thread could not be mapped to a process and
// that were kept by their command's name.
func (p *Proc) ByName() int64 {
	p.rootsMu.Lock()
	defer p.rootsMu.Unlock()
	return p.byName
}

// PageIns counts page-ins of memory-mapped files fs_usage showed.
func (p *Proc) PageIns() int64 { return p.reader.PageIns }

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
	script := session.Script{Name: "fs_usage " + strings.Join(Args(cfg.Target, command), " ") + " (filtered by ioshape)"}
	return &Session{cfg: cfg, command: command, Described: session.Described{Name: "fsusage", Version: "fs_usage", Rendered: script, Limits: limits}}, nil
}

// limits is what this backend cannot see.
var limits = append([]string{
	"fs_usage: hides sh, zsh, csh, tcsh, Terminal, sshd, telnetd and rlogind's own I/O (their children are seen)",
}, parse.FsUsageLimits...)

// readyTimeout is how long fs_usage is given to show ioshape's marker.
const readyTimeout = 15 * time.Second

// Run records until the target ends, the duration passes, or ctx is
// cancelled.
func (s *Session) Run(ctx context.Context, sink session.Sink) (session.Result, error) {
	plan := session.Plan{
		Name: "fs_usage", Remedy: "fs_usage reported buffer overruns", Seeds: s.cfg.Target.Pids, Command: s.command,
		Start: func(helperPid int) (session.Tracer, error) {
			t := &tracer{fan: session.NewFan(), stopped: make(chan struct{})}
			var err error
			if t.proc, err = Start(s.cfg.FsUsage, Args(s.cfg.Target, s.command), t.fan, Options{Target: s.cfg.Target, Command: s.command}); err != nil {
				return nil, err
			}
			if helperPid != 0 {
				t.proc.AddRoot(helperPid)
			}
			t.fan.Go(t.readyOnMarker)
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

func (t *tracer) readyOnMarker(send func([]parse.Record)) {
	if err := t.proc.WaitReady(readyTimeout, t.stopped); err != nil {
		send([]parse.Record{{Kind: parse.KindWarning, Text: err.Error()}})
		t.Stop()
		return
	}
	select {
	case <-t.stopped:
	default:
		send([]parse.Record{{Kind: parse.KindReady}})
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
	if n := t.proc.PageIns(); n > 0 {
		res.Warnings = append(res.Warnings, parse.PageInNote(n))
	}
	if n := t.proc.ByName(); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d events came from threads ioshape could not map to a process (gone before it looked): they were kept by their command's name", n))
	}
	return err
}
