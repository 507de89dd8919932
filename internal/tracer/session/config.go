package session

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// Sink receives events as they are parsed (a trace file writer).
type Sink interface {
	Write(*event.Event) error
	WriteSummary(*event.Summary) error
	FlushIfDue(time.Duration) error
}

// User is who the target command runs as.
type User struct {
	UID, GID int
	Groups   []uint32
	Home     string
	Set      bool // false: run as ioshape's own user
}

// Config sets up a recording.
type Config struct {
	Target   Target
	Backend  string // auto, native, bpftrace, dtrace or fsusage
	DTrace   string // path; empty: look it up in PATH
	FsUsage  string // path; empty: look it up in PATH
	Bpftrace string // path; empty: look it up in PATH
	RunAs    User
	Stdin    *os.File // the command's standard streams
	Stdout   *os.File
	Stderr   *os.File
	// MapKeys sizes the tracer's in-flight maps (requests and syscalls in
	// flight at once). PerfPages sizes its per-CPU output buffers.
	MapKeys   int
	PerfPages int
	Grace     time.Duration // between SIGINT and SIGKILL
	// Summary keeps histograms, a row per second, process, device, layer
	// and direction, instead of a record per I/O (record --summary): in
	// the kernel on the native backend, made of each I/O's record as it
	// comes on the others.
	Summary bool
	// Raw, if set, receives a copy of the tracer's output as it was read.
	Raw      io.Writer
	Progress func(Progress)
}

// WithDefaults fills the sizes and the grace period a zero Config leaves
// open.
func (c Config) WithDefaults() Config {
	if c.MapKeys == 0 {
		c.MapKeys = 1 << 16
	}
	if c.PerfPages == 0 {
		c.PerfPages = 1 << 10
	}
	if c.Grace == 0 {
		c.Grace = 5 * time.Second
	}
	return c
}

// Progress is reported about once a second.
type Progress struct {
	Elapsed time.Duration
	Events  int64
	Bytes   int64
	Lost    int64
	Ready   bool
	// Notice is something the user must be told now, not at the end (the
	// tracer was degraded); empty almost always.
	Notice string
}

// Result is what a recording learned beyond its events.
type Result struct {
	Start    time.Time
	Duration time.Duration
	Events   int64
	// Summarized is how many I/Os summary rows count (Config.Summary).
	Summarized   int64
	Lost         int64
	MapOverflows int64
	// ProbeMisses are probe firings the kernel skipped (another BPF program
	// was running on the same CPU): events lost without a word from the
	// tracer.
	ProbeMisses int64
	// ProbeErrors are probe actions that failed at run time (DTrace's
	// "error on enabled probe"): their events are missing.
	ProbeErrors int64
	// Unfinished are block requests seen issued whose completion was never
	// seen (skipped, or left in flight at the end): their I/O is missing.
	Unfinished int64
	Unmatched  int64
	// Corrupt are records the tracer printed that cannot be right (by
	// reason), dropped: DTrace under load emits them.
	Corrupt     map[string]int64
	ParseErrors int64
	Warnings    []string
	EndReason   string
	ExitStatus  *int
	// CommandEnd says what became of a command ioshape started when the
	// recording stopped before it ended: stopped, killed, or left running.
	CommandEnd string
	Devices    []event.Device
	// Content is, by file system device, samples of the data calls moved
	// (native backend only); finish puts each on its device.
	Content map[event.Dev]*event.Content
	// DegradedAt is when, from the start of tracing, the tracer was
	// degraded to the block layer (0: it was not).
	DegradedAt time.Duration
	// Programs is each in-kernel program's cost, when the kernel keeps
	// it (sysctl kernel.bpf_stats_enabled=1; native backend only).
	Programs []ProgramCost `json:"programs,omitempty"`
}

// ProgramCost is what one eBPF program cost while recording.
type ProgramCost struct {
	Name      string  `json:"name"`
	Runs      uint64  `json:"runs"`
	NsPerRun  float64 `json:"ns_per_run"`
	Recursion uint64  `json:"recursion_misses"`
}

// AllLost is every event the recording knows it lost.
func (r Result) AllLost() int64 {
	return r.Lost + r.MapOverflows + r.ProbeMisses + r.ProbeErrors
}

// Script is a rendered tracer script (or, for a compiled program, its name)
// and its checksum.
type Script struct {
	Name   string
	Text   string
	SHA256 string
}

// Described is what a prepared recording says of itself, for the trace's
// header; every backend's session embeds it.
type Described struct {
	Name     string   // the backend
	Version  string   // what the tracer said of its version
	Rendered Script   // the script it runs (updated when it is rendered for the real target)
	Limits   []string // what the backend cannot see, for the user
}

func (d *Described) Backend() string        { return d.Name }
func (d *Described) BackendVersion() string { return d.Version }
func (d *Described) Script() Script         { return d.Rendered }
func (d *Described) Fidelity() []string     { return d.Limits }

// ToolVersion is what a tracer prints of its version (its first line), or
// fallback if it says nothing.
func ToolVersion(path, flag, fallback string) string {
	out, err := exec.Command(path, flag).Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return fallback
}

// CorruptCount is how many records were dropped as corrupt.
func (r Result) CorruptCount() int64 {
	var n int64
	for _, c := range r.Corrupt {
		n += c
	}
	return n
}
