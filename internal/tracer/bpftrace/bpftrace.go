package bpftrace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// Session is a recording prepared for bpftrace.
type Session struct {
	session.Described
	cfg     session.Config
	seeds   []int
	command []string // the target command with its executable resolved
}

// Prepare checks everything that can be checked before recording —
// bpftrace, the kernel's tracepoints, the target — and renders the script.
// Its errors are one line, for the user.
func Prepare(cfg session.Config) (*Session, error) {
	cfg = cfg.WithDefaults()
	var err error
	if cfg.Bpftrace, err = session.LookTool(cfg.Bpftrace, "bpftrace", "bpftrace is not installed: install it with 'sudo apt-get install bpftrace' (Debian/Ubuntu) or 'sudo dnf install bpftrace' (Fedora)"); err != nil {
		return nil, err
	}
	if err := ensureTracefs(); err != nil {
		return nil, err
	}
	if m := missingTracepoints(); len(m) > 0 {
		return nil, fmt.Errorf("this kernel lacks tracepoints ioshape needs: %s", strings.Join(m, ", "))
	}
	s := &Session{cfg: cfg, Described: session.Described{Name: "bpftrace", Limits: limits,
		Version: session.ToolVersion(cfg.Bpftrace, "--version", "bpftrace")}}
	if s.seeds, s.command, err = session.ResolveTargets(cfg.Target); err != nil {
		return nil, err
	}
	if s.Rendered, err = Render(cfg.Target, s.seeds, session.SelfPid); err != nil {
		return nil, err
	}
	return s, nil
}

// limits is what this backend cannot see.
var limits = []string{
	"syscall layer: memory-mapped I/O is not seen (the block layer still sees it)",
	"syscall layer: an io_uring request counts as outstanding from submission until the kernel posts its completion, not until the application reaps it, so io_uring queue depth can read lower than the application's",
	"block layer: requests are matched by device and sector; a request in flight when recording began or ended is counted as unmatched",
	"waiting: calls' sleeps and page-fault waits are not timed (the native backend times them), so predict cannot tell a call's computation from its waiting",
}

// Run records until the target ends, the duration passes, the launch goes
// quiet, or ctx is cancelled. bpftrace starts the command itself (through
// ioshape's helper as its -c child) once every probe is attached.
func (s *Session) Run(ctx context.Context, sink session.Sink) (session.Result, error) {
	plan := session.Plan{
		Name: "bpftrace", Remedy: "raise --perf-pages", Seeds: s.seeds,
		// Detaching some fifty probes takes bpftrace 0.17 3–4 s on an idle
		// 2-core VM, and over 30 s was seen under load; its final counters
		// (requests left in flight, stale entries) come after that, and a
		// kill loses them.
		StopGrace: 60 * time.Second,
		Start:     func(int) (session.Tracer, error) { return s.start() },
	}
	return session.Run(ctx, s.cfg, plan, sink)
}

// tracer is a running bpftrace.
type tracer struct {
	cmd    *exec.Cmd
	fan    *session.Fan
	status chan string

	errMu    sync.Mutex
	errLines []string // what it printed on stderr, less its noise
}

func (s *Session) start() (*tracer, error) {
	cfg := s.cfg
	spec, err := session.HelperSpec(cfg, s.command, false)
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// -c names our own binary through /proc, which has no spaces: bpftrace
	// splits -c on spaces without quoting. The script goes on the command
	// line (-e), so no file is left behind if ioshape is killed.
	helper := fmt.Sprintf("/proc/%d/exe %s", os.Getpid(), session.HelperCommand)
	cmd := exec.Command(cfg.Bpftrace, "-c", helper, "-e", s.Rendered.Text)
	cmd.Env = append(os.Environ(),
		"BPFTRACE_MAP_KEYS_MAX="+strconv.Itoa(cfg.MapKeys),
		"BPFTRACE_PERF_RB_PAGES="+strconv.Itoa(cfg.PerfPages),
		"BPFTRACE_STRLEN=64",
		session.HelperEnv+"="+spec,
	)
	std, closeStd := session.ChildStdio(cfg)
	defer closeStd()
	cmd.ExtraFiles = append(std, statusW)
	cmd.SysProcAttr = session.TracerProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return nil, err
	}
	err = session.StartChild(cmd)
	statusW.Close()
	if err != nil {
		statusR.Close()
		return nil, fmt.Errorf("cannot start bpftrace: %w", err)
	}
	t := &tracer{cmd: cmd, fan: session.NewFan(), status: make(chan string, 8)}
	t.fan.Go(func(send func([]parse.Record)) {
		in := session.NewFlushingReader(stdout, cfg.Raw)
		session.StreamRecords(parse.NewBpftraceReader(in, "bpftrace", runtime.GOARCH), in, send)
	})
	t.fan.Go(func(func([]parse.Record)) { session.ScanLines(stderr, t.keepStderr) })
	t.fan.Seal()
	go func() {
		session.ScanLines(statusR, func(line string) { t.status <- line })
		statusR.Close()
		close(t.status)
	}()
	return t, nil
}

// keepStderr keeps the first lines bpftrace printed, less its noise:
// compile warnings about the script (with their source and caret lines),
// and an RLIMIT notice it prints even when the program loads fine.
func (t *tracer) keepStderr(line string) {
	if strings.Contains(line, "couldn't set RLIMIT_MEMLOCK") || strings.Contains(line, "WARNING:") ||
		strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.TrimSpace(line) == "" {
		return
	}
	t.errMu.Lock()
	defer t.errMu.Unlock()
	if len(t.errLines) < 20 {
		t.errLines = append(t.errLines, strings.TrimPrefix(line, "ERROR: "))
	}
}

func (t *tracer) Records() <-chan []parse.Record { return t.fan.Records() }
func (t *tracer) Status() <-chan string          { return t.status }
func (t *tracer) Pids() []int                    { return []int{t.cmd.Process.Pid} }
func (t *tracer) Stop()                          { t.cmd.Process.Signal(syscall.SIGINT) }
func (t *tracer) Kill()                          { t.cmd.Process.Kill() }

// Mark prints a flush mark into each CPU's buffer (see the script).
func (t *tracer) Mark() int {
	self := os.Getpid()
	return session.OnEachCPU(func() { markCPU(self) })
}

// Degrade stops the syscall layer's probes, leaving the block layer's
// (see the script): bpftrace could not keep up with both.
func (t *tracer) Degrade() { degradeSyscalls() }

// Poll reads the kernel's miss counters of bpftrace's programs.
func (t *tracer) Poll(res *session.Result) {
	if n, ok := probeMisses(t.cmd.Process.Pid); ok && n > res.ProbeMisses {
		res.ProbeMisses = n
	}
}

func (t *tracer) Wait(*session.Result) error {
	err := t.cmd.Wait()
	t.errMu.Lock()
	defer t.errMu.Unlock()
	switch {
	case len(t.errLines) > 0:
		return errors.New(strings.Join(t.errLines, "; "))
	case err != nil:
		return err
	}
	return nil
}
