package tracer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/ioshape/ioshape/internal/tracer/bpftrace"
	"github.com/ioshape/ioshape/internal/tracer/dtrace"
	"github.com/ioshape/ioshape/internal/tracer/fsusage"
	"github.com/ioshape/ioshape/internal/tracer/native"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// The recording's types are the session package's; these names are what
// the rest of ioshape uses.
type (
	Config   = session.Config
	Target   = session.Target
	Result   = session.Result
	Progress = session.Progress
	User     = session.User
	Script   = session.Script
	Sink     = session.Sink
	// ProgramCost is an in-kernel program's cost (bpf_stats).
	ProgramCost = session.ProgramCost
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

// HelperCommand is the hidden subcommand that runs RunHelper.
const HelperCommand = session.HelperCommand

// The layers record --layers can ask for.
const (
	LayersBoth    = session.LayersBoth
	LayersBlock   = session.LayersBlock
	LayersSyscall = session.LayersSyscall
)

// RunHelper is the body of the hidden helper command.
func RunHelper() error { return session.RunHelper() }

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
	var s Session
	var err error
	switch backend {
	case BackendNative:
		s, err = orNil(native.Prepare(cfg))
	case BackendBpftrace:
		s, err = orNil(bpftrace.Prepare(cfg))
	case BackendDTrace:
		s, err = orNil(dtrace.Prepare(cfg))
	case BackendFsUsage:
		s, err = orNil(fsusage.Prepare(cfg))
	default:
		err = fmt.Errorf("unknown backend %q (auto, native, bpftrace, dtrace, fsusage)", backend)
	}
	return s, err
}

// orNil keeps a failed Prepare's nil pointer from becoming a non-nil
// Session.
func orNil[S Session](s S, err error) (Session, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

func autoBackend() string {
	if runtime.GOOS == "linux" {
		if native.Available() {
			return BackendNative
		}
		if _, err := exec.LookPath("bpftrace"); err != nil {
			if _, err := exec.LookPath("dtrace"); err == nil {
				return BackendDTrace
			}
		}
		return BackendBpftrace
	}
	if runtime.GOOS == "darwin" {
		out, err := exec.Command("csrutil", "status").Output()
		if err == nil && SIPAllowsDTrace(string(out)) {
			return BackendDTrace
		}
		// kdebug, which fs_usage reads, works for root whatever SIP says.
		return BackendFsUsage
	}
	return BackendDTrace
}

// SIPAllowsDTrace reads `csrutil status`: System Integrity Protection off,
// or on with DTrace's restrictions lifted (csrutil enable --without
// dtrace). Anything else — on, or output it does not know — keeps
// DTrace from the io provider and from Apple's binaries.
func SIPAllowsDTrace(status string) bool {
	for _, line := range strings.Split(status, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "System Integrity Protection status: disabled") || line == "DTrace Restrictions: disabled" {
			return true
		}
	}
	return false
}
