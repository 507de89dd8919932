package dtrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracer/fsusage"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// Session records with DTrace (macOS, and DTrace elsewhere). The command is
// started by ioshape, not by dtrace -c: under System Integrity Protection
// dtrace cannot control Apple-signed binaries such as /bin/cp. It waits until the script's BEGIN has fired, then runs. When SIP
// hides the io provider, the block layer comes from fs_usage.
type Session struct {
	session.Described
	cfg     session.Config
	seeds   []int
	command []string
	fsusage string // path, for the SIP fallback
}

// Prepare checks that dtrace is there and resolves the target.
func Prepare(cfg session.Config) (*Session, error) {
	var err error
	if cfg.DTrace, err = session.LookTool(cfg.DTrace, "dtrace", "dtrace is not installed (it comes with macOS; on Linux use --backend bpftrace)"); err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, Described: session.Described{Name: "dtrace", Limits: limitsOn(runtime.GOOS),
		Version: session.ToolVersion(cfg.DTrace, "-V", "dtrace")}}
	if s.seeds, s.command, err = session.ResolveTargets(cfg.Target); err != nil {
		return nil, err
	}
	if cfg.FsUsage != "" {
		s.fsusage = cfg.FsUsage
	} else if p, err := exec.LookPath("fs_usage"); err == nil {
		s.fsusage = p
	}
	// The script shown before recording assumes the io provider; the one run
	// names the real target pid once the helper exists.
	if s.Rendered, err = render(cfg.Target, s.seeds, true); err != nil {
		return nil, err
	}
	return s, nil
}

// limitsOn is what this backend cannot see on a system: each note true of
// that system (macOS: device blocks of unknown size, SIP; Linux: sectors,
// and an Oracle DTrace that drops firings silently under load).
func limitsOn(goos string) []string {
	queue := "dtrace: no split between queueing and the device (io:::start is the dispatch to the driver)"
	mmap := "dtrace: memory-mapped I/O is not seen at the syscall layer"
	if goos == "linux" {
		return []string{queue,
			"dtrace: block offsets are b_blkno, in 512-byte sectors",
			"dtrace: syscalls are tied to a file descriptor, not a file (the script reads no kernel memory for file identity)",
			mmap,
			"dtrace: under load Oracle DTrace loses probe firings without a word: completions missing beyond a drive's queue are counted as lost, and records that cannot be right are dropped and counted",
		}
	}
	return []string{queue,
		"dtrace: block offsets are b_blkno times 4096 (the device block size is not given)",
		"dtrace: syscalls are tied to a file descriptor, not a file: reading kernel memory for file identity fails under SIP",
		mmap,
	}
}

// Run records until the target ends, the duration passes, the launch goes
// quiet, or ctx is cancelled. If SIP makes dtrace refuse the io provider
// outright, it runs again without it, and fs_usage takes the block layer.
func (s *Session) Run(ctx context.Context, sink session.Sink) (session.Result, error) {
	res, err, sawSIP := s.run(ctx, sink, true)
	var ns *session.NotStartedError
	if errors.As(err, &ns) && sawSIP {
		res, err, _ = s.run(ctx, sink, false)
	}
	return res, err
}

func (s *Session) run(ctx context.Context, sink session.Sink, block bool) (res session.Result, err error, sawSIP bool) {
	var t *tracer
	plan := session.Plan{
		Name: "dtrace", Remedy: "raise bufsize or switchrate", Seeds: s.seeds, Command: s.command,
		Start: func(helperPid int) (session.Tracer, error) {
			pids := s.seeds
			if helperPid != 0 {
				pids = []int{helperPid}
			}
			script, err := render(s.cfg.Target, pids, block)
			if err != nil {
				return nil, err
			}
			s.Rendered = script
			t, err = s.start(script, pids)
			return t, err
		},
	}
	res, err = session.Run(ctx, s.cfg, plan, sink)
	if t != nil {
		sawSIP = t.sawSIP
	}
	return res, err, sawSIP
}

// tracer is a running dtrace, and the fs_usage it may start.
type tracer struct {
	s          *Session
	cmd        *exec.Cmd
	fan        *session.Fan
	scriptFile string
	roots      []int // the target's processes, for fs_usage's filter

	mu      sync.Mutex // the rest is shared with the stderr reader
	stopped bool
	fsu     *fsusage.Proc
	sawSIP  bool
	fatal   []string
}

func (s *Session) start(script session.Script, roots []int) (*tracer, error) {
	f, err := os.CreateTemp("", "ioshape-*.d")
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(script.Text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	t := &tracer{s: s, fan: session.NewFan(), scriptFile: f.Name(), roots: roots}
	if err != nil {
		t.removeScript()
		return nil, err
	}
	// -Z: probes this system lacks (the _nocancel variants outside macOS)
	// do not stop the rest; -q: only the script's output on stdout.
	cmd := exec.Command(s.cfg.DTrace, "-Z", "-q", "-s", f.Name())
	cmd.SysProcAttr = session.TracerProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		var stderr io.ReadCloser
		if stderr, err = cmd.StderrPipe(); err == nil {
			if err = session.StartChild(cmd); err == nil {
				t.cmd = cmd
				t.readStderr(stderr)
			}
		}
	}
	if err != nil {
		t.removeScript()
		return nil, fmt.Errorf("cannot start dtrace: %w", err)
	}
	t.fan.Go(func(send func([]parse.Record)) {
		in := session.NewFlushingReader(stdout, s.cfg.Raw)
		session.StreamRecords(parse.NewDTraceReader(in, "dtrace", 0), in, send)
		t.Stop() // dtrace has ended: so does the fs_usage beside it
	})
	t.fan.Seal()
	return t, nil
}

func (t *tracer) readStderr(stderr io.Reader) {
	t.fan.Go(func(send func([]parse.Record)) {
		session.ScanLines(stderr, func(line string) {
			if rec, ok := t.message(parse.ParseDTraceMessage(line)); ok {
				send([]parse.Record{rec})
			}
		})
	})
}

func (t *tracer) removeScript() { os.Remove(t.scriptFile) }

// message turns a line dtrace printed on stderr into a record for the loop,
// whenever it prints it (while running or on its way out), or acts on it.
func (t *tracer) message(m parse.Message) (parse.Record, bool) {
	switch m.Kind {
	case parse.MsgDrop, parse.MsgAggDrop, parse.MsgSpecDrop:
		return parse.Record{Kind: parse.KindLost, N: m.N}, true
	case parse.MsgDynDrop:
		return parse.Record{Kind: parse.KindCounter, Name: parse.CounterMapFull, N: m.N}, true
	case parse.MsgRuntimeError:
		return parse.Record{Kind: parse.KindCounter, Name: parse.CounterProbeError, N: 1, Text: m.Text}, true
	case parse.MsgSIP:
		return t.sip()
	case parse.MsgFatal, parse.MsgNoProbes:
		t.mu.Lock()
		t.fatal = append(t.fatal, strings.TrimPrefix(m.Text, "dtrace: "))
		t.mu.Unlock()
	}
	return parse.Record{}, false
}

// sip starts fs_usage for the block layer, once, unless recording is
// already stopping, and warns.
func (t *tracer) sip() (parse.Record, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := !t.sawSIP
	t.sawSIP = true
	if !first || t.stopped {
		return parse.Record{}, false
	}
	msg := "System Integrity Protection restricts DTrace: the block layer (io provider) is invisible to it. " +
		"To trace it with DTrace, boot into recoveryOS and run 'csrutil enable --without dtrace'"
	if t.s.fsusage == "" {
		return parse.Record{Kind: parse.KindWarning, Text: msg + "; fs_usage was not found, so this trace has no block layer"}, true
	}
	msg += "; meanwhile the block layer comes from fs_usage"
	fsu, err := fsusage.Start(t.s.fsusage, fsusage.Args(t.s.cfg.Target, t.s.command), t.fan,
		fsusage.Options{Target: t.s.cfg.Target, Command: t.s.command, BlockOnly: true})
	if err != nil {
		msg += " (" + err.Error() + ")"
	} else {
		for _, pid := range t.roots {
			fsu.AddRoot(pid)
		}
	}
	t.fsu = fsu
	return parse.Record{Kind: parse.KindWarning, Text: msg}, true
}

func (t *tracer) Records() <-chan []parse.Record { return t.fan.Records() }

func (t *tracer) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.cmd.Process.Signal(syscall.SIGINT)
	if t.fsu != nil {
		t.fsu.Stop()
	}
}

func (t *tracer) Kill() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cmd.Process.Kill()
	if t.fsu != nil {
		t.fsu.Kill()
	}
}

func (t *tracer) Wait(res *session.Result) error {
	err := t.cmd.Wait()
	t.removeScript()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fsu != nil {
		t.fsu.Wait()
		res.Devices = append(res.Devices, t.fsu.Devices()...)
	}
	if len(t.fatal) > 0 {
		return errors.New(t.fatal[0])
	}
	return err
}
