package tracer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
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
}

// RunHelper is the body of the hidden helper command.
func RunHelper() error {
	var spec helperSpec
	if err := json.Unmarshal([]byte(os.Getenv(helperEnv)), &spec); err != nil {
		return fmt.Errorf("ioshape helper: bad spec: %v", err)
	}
	setParentDeathSignal()
	status := os.NewFile(helperStatus, "status")
	if status == nil {
		return errors.New("ioshape helper: no status pipe")
	}
	fmt.Fprintln(status, "ready")
	if len(spec.Argv) == 0 {
		select {} // bpftrace kills us when the recording stops
	}
	// Ctrl-C reaches the whole foreground process group; the command gets it
	// too. The helper stays to report how the command ended.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
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
	attr := &syscall.SysProcAttr{Setsid: spec.Detach}
	if spec.SetID {
		attr.Credential = &syscall.Credential{Uid: uint32(spec.UID), Gid: uint32(spec.GID), Groups: spec.Groups}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(status, "error %s\n", msg)
		return nil
	}
	fmt.Fprintf(status, "pid %d\n", cmd.Process.Pid)
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
	return nil
}

// helperProc is the helper started by ioshape itself (for DTrace and
// fs_usage, which do not start the command): it waits for release before
// running the command, and reports through a status pipe.
type helperProc struct {
	cmd    *exec.Cmd
	goW    *os.File // closing it starts the command
	status chan string
}

func startHelperProc(cfg Config, command []string) (*helperProc, error) {
	spec, err := helperSpecFor(cfg, command, true)
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	h := &helperProc{cmd: exec.Command(exe, HelperCommand), goW: goW, status: make(chan string, 8)}
	h.cmd.Env = append(os.Environ(), helperEnv+"="+spec)
	h.cmd.ExtraFiles = []*os.File{orDevNull(cfg.Stdin, os.O_RDONLY), orDevNull(cfg.Stdout, os.O_WRONLY), orDevNull(cfg.Stderr, os.O_WRONLY), statusW, goR}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the command: %v", err)
	}
	statusW.Close()
	goR.Close()
	go func() {
		sc := bufio.NewScanner(statusR)
		for sc.Scan() {
			h.status <- sc.Text()
		}
		close(h.status)
	}()
	go h.cmd.Wait()
	return h, nil
}

// release lets the command start (once). A nil helper does nothing.
func (h *helperProc) release() {
	if h != nil && h.goW != nil {
		h.goW.Close()
		h.goW = nil
	}
}

// kill ends a helper whose command never started.
func (h *helperProc) kill() {
	if h != nil {
		h.cmd.Process.Kill()
	}
}

// statusLines is the helper's status channel; nil (never ready) without one.
func (h *helperProc) statusLines() chan string {
	if h == nil {
		return nil
	}
	return h.status
}
