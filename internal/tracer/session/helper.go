package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// The helper is ioshape itself, started by bpftrace as its -c child, which
// bpftrace runs only once every probe is attached. It tells the recorder so,
// then (for a command target) starts the command as the invoking user and
// reports its pid and exit status. It talks through file descriptors the
// recorder passed down through bpftrace: the user's stdin, stdout and stderr
// for the command, and a status pipe.
const (
	helperEnv    = "IOSHAPE_HELPER_SPEC"
	helperStdin  = 3
	helperStdout = 4
	helperStderr = 5
	helperStatus = 6
	helperGo     = 7 // with WaitGo: the command starts when this closes
	// HelperCommand is the hidden subcommand that runs RunHelper.
	HelperCommand = "__helper"
)

// helperSpec is what the helper is asked to do.
type helperSpec struct {
	Argv   []string `json:"argv,omitempty"` // empty: only signal readiness, then wait to be killed
	Dir    string   `json:"dir"`
	Env    []string `json:"env"`
	UID    int      `json:"uid"`
	GID    int      `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	SetID  bool     `json:"set_id"`
	Detach bool     `json:"detach"`  // app launch: the app outlives the recording
	WaitGo bool     `json:"wait_go"` // wait for fd 7 to close before starting the command
	// KeepRunning leaves the command running when the recording stops;
	// otherwise it belongs to the recording and ends with it.
	KeepRunning bool `json:"keep_running"`
}

// RunHelper is the body of the hidden helper command.
func RunHelper() error {
	var spec helperSpec
	if err := json.Unmarshal([]byte(os.Getenv(helperEnv)), &spec); err != nil {
		return fmt.Errorf("ioshape helper: bad spec: %w", err)
	}
	SetParentDeathSignal()
	status := os.NewFile(helperStatus, "status")
	if status == nil {
		return errors.New("ioshape helper: no status pipe")
	}
	if !spec.WaitGo {
		// Run by the tracer (bpftrace -c), which starts its child only once
		// every probe is attached: tracing is ready.
		fmt.Fprintln(status, "ready")
	}
	if len(spec.Argv) == 0 {
		select {} // bpftrace kills us when the recording stops
	}
	// Ctrl-C at the terminal reaches ioshape, which stops the recording and
	// then the command; the helper stays to report how the command ended.
	// SIGTERM — ioshape gone (the parent-death signal), or the tracer
	// ending its child — ends the command's process group, unless it is to
	// keep running.
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if spec.WaitGo {
		// The tracer is ready when the recorder closes its end.
		io.Copy(io.Discard, os.NewFile(helperGo, "go"))
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdin = os.NewFile(helperStdin, "stdin")
	cmd.Stdout = os.NewFile(helperStdout, "stdout")
	cmd.Stderr = os.NewFile(helperStderr, "stderr")
	owned := !spec.Detach && !spec.KeepRunning
	attr := commandProcAttr(spec.Detach, owned)
	if spec.SetID {
		attr.Credential = &syscall.Credential{Uid: uint32(spec.UID), Gid: uint32(spec.GID), Groups: spec.Groups}
	}
	cmd.SysProcAttr = attr
	// A parent-death signal follows the thread that started the child.
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(status, "error %s\n", msg)
		return nil
	}
	fmt.Fprintf(status, "pid %d\n", cmd.Process.Pid)
	go func() {
		<-term
		if owned {
			EndGroup(cmd.Process.Pid, helperGrace)
		}
		os.Exit(128 + int(syscall.SIGTERM))
	}()
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		code = -1
	}
	fmt.Fprintf(status, "exit %d\n", code)
	if !spec.WaitGo {
		// bpftrace ends when its -c child does, printing its maps as it
		// goes; the recorder's SIGINT, sent once the tracer's buffers are
		// drained, would then cut that print short. So its child stays
		// until bpftrace ends it.
		select {}
	}
	return nil
}

// helperExecutable is ioshape's own binary, which doubles as the helper (a
// variable for tests).
var helperExecutable = os.Executable

// helperGrace is how long the helper gives a command between SIGTERM and
// SIGKILL when ioshape is gone.
const helperGrace = 3 * time.Second

// EndGroup ends a command's process group: SIGTERM, then SIGKILL if any of
// it is still there after grace. It reports whether SIGKILL was needed.
func EndGroup(pgid int, grace time.Duration) (killed bool) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return false // already gone
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if syscall.Kill(-pgid, 0) != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	return true
}

// Helper is the helper started by ioshape itself (for the backends whose
// tracer does not start the command): it waits for Release before running
// the command, and reports through a status pipe.
type Helper struct {
	cmd    *exec.Cmd
	goW    *os.File // closing it starts the command
	status chan string
}

// StartHelper starts the helper for a command; the command waits for
// Release.
func StartHelper(cfg Config, command []string) (*Helper, error) {
	spec, err := HelperSpec(cfg, command, true)
	if err != nil {
		return nil, err
	}
	exe, err := helperExecutable()
	if err != nil {
		return nil, fmt.Errorf("cannot find ioshape's own executable: %w", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return nil, err
	}
	h := &Helper{cmd: exec.Command(exe, HelperCommand), goW: goW, status: make(chan string, 8)}
	h.cmd.Env = append(os.Environ(), helperEnv+"="+spec)
	std, closeStd := ChildStdio(cfg)
	h.cmd.ExtraFiles = append(std, statusW, goR)
	err = StartChild(h.cmd)
	closeStd()
	statusW.Close()
	goR.Close()
	if err != nil {
		statusR.Close()
		goW.Close()
		return nil, fmt.Errorf("cannot start the command: %w", err)
	}
	go func() {
		ScanLines(statusR, func(line string) { h.status <- line })
		statusR.Close()
		close(h.status)
	}()
	go h.cmd.Wait()
	return h, nil
}

// Pid is the helper's process ID.
func (h *Helper) Pid() int { return h.cmd.Process.Pid }

// Release lets the command start (once). A nil helper does nothing.
func (h *Helper) Release() {
	if h != nil && h.goW != nil {
		h.goW.Close()
		h.goW = nil
	}
}

// Kill ends a helper whose command never started.
func (h *Helper) Kill() {
	if h != nil {
		h.cmd.Process.Kill()
		if h.goW != nil {
			h.goW.Close()
			h.goW = nil
		}
	}
}

// StatusLines is the helper's status channel; nil (never ready) without
// one.
func (h *Helper) StatusLines() <-chan string {
	if h == nil {
		return nil
	}
	return h.status
}

// ChildStdio is the command's standard streams as the helper's descriptors
// 3, 4 and 5 (/dev/null for any not given); closeOpened closes the ones it
// opened once the child has them.
func ChildStdio(cfg Config) (files []*os.File, closeOpened func()) {
	var opened []*os.File
	pick := func(f *os.File, flag int) *os.File {
		if f != nil {
			return f
		}
		n, err := os.OpenFile(os.DevNull, flag, 0)
		if err != nil {
			return nil
		}
		opened = append(opened, n)
		return n
	}
	files = []*os.File{pick(cfg.Stdin, os.O_RDONLY), pick(cfg.Stdout, os.O_WRONLY), pick(cfg.Stderr, os.O_WRONLY)}
	return files, func() {
		for _, f := range opened {
			f.Close()
		}
	}
}

// HelperSpec is the helper's instructions for a command target (empty: only
// signal readiness). waitGo: the command waits for Release.
func HelperSpec(cfg Config, command []string, waitGo bool) (string, error) {
	if len(command) == 0 {
		return `{}`, nil
	}
	spec := helperSpec{Argv: command, Detach: cfg.Target.Launch, WaitGo: waitGo, KeepRunning: cfg.Target.KeepRunning}
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

// HelperEnv is the environment variable that carries the helper's spec.
const HelperEnv = helperEnv

// init keeps the helper's main goroutine on the process's main thread, so
// that it forks the command from there: some DTraces (Oracle's on Linux)
// do not count a child forked by another thread as progenyof the parent,
// and a recording of the command came back empty half the time.
func init() {
	if os.Getenv(helperEnv) != "" {
		runtime.LockOSThread()
	}
}
