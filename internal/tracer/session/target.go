package session

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/host"
)

// Target says what to record.
type Target struct {
	Command []string // run this command as the invoking user and trace it and its descendants
	Pids    []int    // attach to these processes and their descendants
	Names   []string // processes with these names, running now or started later
	// WaitForNames allows names that no running process has yet.
	WaitForNames bool
	All          bool // the whole system

	Duration time.Duration // stop after this long (0: until the target ends or Ctrl-C)
	Launch   bool          // app launch: stop once the target's I/O has been idle for Quiet
	Quiet    time.Duration
	Cold     bool // sync and drop the page cache before starting
	// KeepRunning leaves a command ioshape started running when the
	// recording stops (by default it belongs to the recording).
	KeepRunning bool
	// Layers is what to trace: LayersBoth (also ""), LayersBlock or
	// LayersSyscall. A backend that can leave a layer's probes out does;
	// the recorder drops what the others still deliver.
	Layers string
}

// The layers record --layers can ask for.
const (
	LayersBoth    = "both"
	LayersBlock   = "block"
	LayersSyscall = "syscall"
)

// Block reports whether the block layer is traced.
func (t Target) Block() bool { return t.Layers != LayersSyscall }

// Syscall reports whether the syscall layer is traced.
func (t Target) Syscall() bool { return t.Layers != LayersBlock }

// Mode names the kind of target, as stored in the trace header.
func (t Target) Mode() string {
	switch {
	case len(t.Command) > 0:
		return "command"
	case len(t.Pids) > 0 && len(t.Names) > 0:
		return "pid+name"
	case len(t.Pids) > 0:
		return "pid"
	case len(t.Names) > 0:
		return "name"
	case t.All:
		return "all"
	}
	return "none"
}

// Validate reports a target that cannot be recorded.
func (t Target) Validate() error {
	n := 0
	if len(t.Command) > 0 {
		n++
	}
	if len(t.Pids) > 0 || len(t.Names) > 0 {
		n++
	}
	if t.All {
		n++
	}
	switch {
	case n == 0:
		return errors.New("nothing to record: give a command after --, or --pid, --name or --all")
	case n > 1:
		return errors.New("choose one target: a command, --pid/--name, or --all")
	case t.Duration < 0 || t.Quiet < 0:
		return errors.New("--duration and --quiet must not be negative")
	case t.Launch && t.Quiet == 0:
		return errors.New("--launch needs a --quiet period greater than zero")
	case !t.Launch && len(t.Command) == 0 && len(t.Pids) == 0 && t.Duration == 0 && !t.All && len(t.Names) == 0:
		return fmt.Errorf("nothing to wait for")
	}
	for _, p := range t.Pids {
		if p <= 0 {
			return fmt.Errorf("invalid pid %d", p)
		}
	}
	for _, name := range t.Names {
		if name == "" {
			return errors.New("--name must not be empty")
		}
	}
	return nil
}

// LookTool finds a tracer's executable: path if the user gave one, else
// name in PATH; missing is the one-line message when it is not there.
func LookTool(path, name, missing string) (string, error) {
	if path != "" {
		return path, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errors.New(missing)
	}
	return p, nil
}

// ResolveTargets checks the pids and names a target gives and resolves its
// command: seeds are the processes to follow from the start.
func ResolveTargets(t Target) (seeds []int, command []string, err error) {
	for _, p := range t.Pids {
		if !host.ProcessExists(p) {
			return nil, nil, fmt.Errorf("no process with pid %d", p)
		}
		seeds = append(seeds, p)
	}
	for _, n := range t.Names {
		pids := host.PidsNamed(n)
		if len(pids) == 0 && !t.WaitForNames {
			return nil, nil, fmt.Errorf("no running process is named %q (add --wait to wait for one to start)", n)
		}
		seeds = append(seeds, pids...)
	}
	if len(t.Command) > 0 {
		p, err := resolveCommand(t.Command[0])
		if err != nil {
			return nil, nil, fmt.Errorf("cannot run %s: %w", t.Command[0], err)
		}
		command = append([]string{p}, t.Command[1:]...)
	}
	return seeds, command, nil
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
