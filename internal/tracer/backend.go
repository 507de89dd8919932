package tracer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// Session is a prepared recording on one backend.
type Session interface {
	// Run records until the target ends, the duration passes, the launch
	// goes quiet, or ctx is cancelled, writing events to sink as they come.
	Run(ctx context.Context, sink Sink) (Result, error)
	Backend() string
	BackendVersion() string
	Script() Script
	// Fidelity says, for the user, what this backend cannot see.
	Fidelity() []string
}

// Backends ioshape records with.
const (
	BackendAuto     = "auto"
	BackendNative   = "native"
	BackendBpftrace = "bpftrace"
	BackendDTrace   = "dtrace"
	BackendFsUsage  = "fsusage"
)

// Prepare checks everything that can be checked before recording — root,
// the tracer, the target — on the chosen backend (auto: the native eBPF
// backend on Linux where the kernel has BTF, else bpftrace, or DTrace on
// Linux where only it is installed; DTrace elsewhere). Its errors are one
// line, for the user.
func Prepare(cfg Config) (Session, error) {
	if err := cfg.Target.Validate(); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("recording needs root: run it with sudo")
	}
	backend := cfg.Backend
	if backend == "" || backend == BackendAuto {
		backend = autoBackend()
	}
	switch backend {
	case BackendNative:
		return prepareNative(cfg)
	case BackendBpftrace:
		return prepareBpftrace(cfg)
	case BackendDTrace:
		return prepareDTrace(cfg)
	case BackendFsUsage:
		return prepareFsUsage(cfg)
	}
	return nil, fmt.Errorf("unknown backend %q (auto, native, bpftrace, dtrace, fsusage)", backend)
}

func autoBackend() string {
	if runtime.GOOS == "linux" {
		if nativeAvailable() {
			return BackendNative
		}
		if _, err := exec.LookPath("bpftrace"); err != nil {
			if _, err := exec.LookPath("dtrace"); err == nil {
				return BackendDTrace
			}
		}
		return BackendBpftrace
	}
	return BackendDTrace
}

// resolveTargets checks the pids and names a target gives and resolves its
// command: seeds are the processes to follow from the start.
func resolveTargets(t Target) (seeds []int, command []string, err error) {
	for _, p := range t.Pids {
		if !processExists(p) {
			return nil, nil, fmt.Errorf("no process with pid %d", p)
		}
		seeds = append(seeds, p)
	}
	for _, n := range t.Names {
		pids := pidsNamed(n)
		if len(pids) == 0 && !t.WaitForNames {
			return nil, nil, fmt.Errorf("no running process is named %q (add --wait to wait for one to start)", n)
		}
		seeds = append(seeds, pids...)
	}
	if len(t.Command) > 0 {
		p, err := resolveCommand(t.Command[0])
		if err != nil {
			return nil, nil, fmt.Errorf("cannot run %s: %v", t.Command[0], err)
		}
		command = append([]string{p}, t.Command[1:]...)
	}
	return seeds, command, nil
}
