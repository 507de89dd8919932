package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/store"
)

// Version, Commit and Date are stamped at build time (goreleaser's
// ldflags: -X github.com/ioshape/ioshape/internal/cli.Version=…, Date the
// commit's time so that a release builds the same twice); `go install
// …@vX` stamps none of them, and the module's version and VCS settings in
// the build info stand in (init, below).
var (
	Version = "0.1.0-dev"
	Commit  = ""
	Date    = ""
)

// devVersion is Version when nothing stamped it.
const devVersion = "0.1.0-dev"

func init() {
	if info, ok := debug.ReadBuildInfo(); ok && Version == devVersion {
		Version = cmp.Or(moduleVersion(info), Version)
	}
}

// moduleVersion is the version go install stamps in the build info
// (v1.2.3, or a pseudo-version), without its v; "" for a local build.
func moduleVersion(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	return ""
}

// Main's first act: files ioshape writes name its version.
func stampVersion() { export.Version = Version }

// buildDate is when the build's source was committed (stamped, or the VCS
// stamp of a plain go build), RFC 3339; "" if unknown.
func buildDate() string {
	if Date != "" {
		return Date
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.time" {
				return s.Value
			}
		}
	}
	return ""
}

// versionLine is what --version prints.
func versionLine() string {
	commit, dirty := Commit, false
	if info, ok := debug.ReadBuildInfo(); ok && Commit == "" {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if commit == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			// go install …@vX: the module proxy's version names the commit
			// (a pseudo-version ends with it).
			commit = info.Main.Version
			if i := strings.LastIndexByte(commit, '-'); i >= 0 && strings.Count(commit, "-") >= 2 {
				commit = commit[i+1:]
			}
		}
	}
	commit = cmp.Or(commit, "unknown")
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if dirty {
		commit += "-dirty"
	}
	return fmt.Sprintf("ioshape %s (commit %s, built %s, %s %s/%s)", Version, commit, cmp.Or(buildDate(), "unknown"), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// globals are the flags every command shares.
type globals struct {
	storeDir string
	stdin    *os.File
	stdout   io.Writer
	stderr   io.Writer
}

func (g *globals) store() (*store.Store, error) {
	dir := g.storeDir
	if dir == "" {
		d, err := store.DefaultDir()
		if err != nil {
			return nil, fmt.Errorf("cannot find a data directory for the trace store: %w (use --store)", err)
		}
		dir = d
	}
	return store.Open(dir), nil
}

// storeIfAny is the store, or nil if it cannot be found (a trace written
// with -o needs none).
func (g *globals) storeIfAny() *store.Store {
	st, err := g.store()
	if err != nil {
		return nil
	}
	return st
}

// noteBestMatch keeps the best match of a classified trace that is in the
// store in its index, for the lists.
func (g *globals) noteBestMatch(t *analysis.Trace, c *classify.Result) {
	st := g.storeIfAny()
	if st == nil || c == nil || len(c.Matches) == 0 {
		return
	}
	if id, ok := st.IDOf(t.Path()); ok {
		st.SetBestMatch(id, t.Meta(), c.Matches[0].Name, c.Matches[0].Score)
	}
}

// newTracePath is where a new trace goes: the file the user named with -o,
// or a fresh ID in the store.
func (g *globals) newTracePath(output string) (id, path string, err error) {
	if output != "" {
		resolved, _, err := resolveOutput(output)
		if err != nil {
			return "", "", err
		}
		return "", resolved, checkOutput(output)
	}
	st, err := g.store()
	if err != nil {
		return "", "", err
	}
	return st.NewPath()
}

// printTracePath tells scripts where a new trace is: "ID PATH", or the path.
func (g *globals) printTracePath(id, path string) {
	if id != "" {
		fmt.Fprintf(g.stdout, "%s %s\n", id, path)
	} else {
		fmt.Fprintln(g.stdout, path)
	}
}

// usageError marks errors in how a command was called (exit status 2).
type usageError struct{ error }

// exitStatus ends ioshape with a status and no message: record's traced
// command failed, and record exits as it did (as time and strace do).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "ioshape",
		Short: "Record what a storage workload really does, and which benchmark predicts it",
		Long: `ioshape records the I/O a real workload issues — sizes, queue depth, latency,
gaps, sequential or random, per process — at the syscall layer (what the
application asked for) and the block layer (what the drive saw), and profiles it.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{with .Annotations}}{{.version}}{{end}}\n")
	root.Annotations = map[string]string{"version": versionLine()}
	root.PersistentFlags().StringVar(&g.storeDir, "store", "", "trace store directory (default: the per-user data directory)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRecordCommand(g), newLsCommand(g), newShowCommand(g), newEventsCommand(g), newClassifyCommand(g), newPatternsCommand(g), newImportCommand(g), newReportCommand(g), newCompareCommand(g), newServeCommand(g), newBenchCommand(g), newDrivesCommand(g), newPredictCommand(g), newExportCommand(g), newReplayCommand(g), newManCommand(root))
	registerCompletions(g, root)
	return root
}

// Main runs ioshape with args and returns the exit status.
func Main(args []string, stdin *os.File, stdout, stderr io.Writer) (status int) {
	// A bug must not greet the user with a stack trace; IOSHAPE_DEBUG=1
	// keeps it for whoever fixes the bug.
	if os.Getenv("IOSHAPE_DEBUG") == "" {
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(stderr, "ioshape: internal error: %v (please report it; IOSHAPE_DEBUG=1 shows where)\n", r)
				status = 3
			}
		}()
	}
	stampVersion()
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// IOSHAPE_CPUPROFILE=FILE profiles ioshape itself (e.g. the recorder's
	// consumer while tracing).
	if path := os.Getenv("IOSHAPE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var es exitStatus
	if errors.As(err, &es) {
		return int(es)
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "ioshape: interrupted")
		return 130
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	fmt.Fprintf(stderr, "ioshape: %s\n", msg)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return 2
	}
	return 1
}

func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
