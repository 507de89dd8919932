package tracefile

import (
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// Version is the newest format version this package reads. It writes
// version 3 (events as columns) for traces of events and version 2 for
// summary traces; it reads version 1's varint rows too.
const Version = 3

// Header is written first, when recording starts.
type Header struct {
	FormatVersion  int      `json:"format_version"`
	ID             string   `json:"id,omitempty"`
	Label          string   `json:"label,omitempty"`
	Tool           string   `json:"tool"`
	ToolVersion    string   `json:"tool_version"`
	Host           string   `json:"host"`
	OS             string   `json:"os"`
	Arch           string   `json:"arch"`
	Kernel         string   `json:"kernel"`
	Backend        string   `json:"backend"`
	BackendVersion string   `json:"backend_version,omitempty"`
	Script         string   `json:"script,omitempty"`
	ScriptSHA256   string   `json:"script_sha256,omitempty"`
	Target         Target   `json:"target"`
	CommandLine    []string `json:"command_line"`
	// Start is when the header was written; zero for an import, whose
	// capture may say when it was made (Footer.Start). Meta.Start says
	// which to believe.
	Start time.Time `json:"start,omitzero"`
	// Imported is when an imported capture was read.
	Imported time.Time `json:"imported,omitzero"`
	// Fidelity says what the backend cannot see, in words for the user.
	Fidelity []string `json:"fidelity,omitempty"`
}

// Target is what was recorded.
type Target struct {
	Mode     string   `json:"mode"`
	Command  []string `json:"command,omitempty"`
	Pids     []int    `json:"pids,omitempty"`
	Names    []string `json:"names,omitempty"`
	Launch   bool     `json:"launch,omitempty"`
	Cold     bool     `json:"cold,omitempty"`
	Duration string   `json:"duration,omitempty"`
	Quiet    string   `json:"quiet,omitempty"`
	// Layers is "block" or "syscall" when only that layer was traced
	// (record --layers); empty: both.
	Layers string `json:"layers,omitempty"`
	// Cgroup is the cgroup governing the target's block I/O (blkio or
	// io), empty for the root: I/O limits make another drive of the same
	// disk, and predict pairs the trace with the profile benched under them.
	Cgroup string `json:"cgroup,omitempty"`
	// Summary: recorded with --summary, histograms per second and no
	// per-I/O events (summary chunks; format version 2).
	Summary bool `json:"summary,omitempty"`
}

// Footer is written last, when recording ends. A file without one was cut
// short (the recorder crashed or was killed).
type Footer struct {
	DurationNs int64 `json:"duration_ns"`
	Events     int64 `json:"events"`
	// SummaryRows and SummarizedIOs: a summary trace's rows, and the I/Os
	// they count.
	SummaryRows   int64 `json:"summary_rows,omitempty"`
	SummarizedIOs int64 `json:"summarized_ios,omitempty"`
	// LostEvents counts events the tracer reported dropping.
	LostEvents int64 `json:"lost_events"`
	// MapOverflows counts in-flight records the tracer could not store.
	MapOverflows int64 `json:"map_overflows"`
	// ProbeMisses counts probe firings the kernel skipped.
	ProbeMisses int64 `json:"probe_misses,omitempty"`
	// ProbeErrors counts probe actions that failed at run time (DTrace).
	ProbeErrors int64 `json:"probe_errors,omitempty"`
	// UnfinishedRequests counts block requests issued whose completion was
	// never seen.
	UnfinishedRequests int64 `json:"unfinished_requests,omitempty"`
	// Start is the time zero of the trace's events, when known at the end:
	// when the tracer became ready, or what an imported capture's own
	// clock says; StartSource says which.
	Start       time.Time `json:"start,omitzero"`
	StartSource string    `json:"start_source,omitempty"`
	// Host is the machine an imported capture names, when it does.
	Host string `json:"host,omitempty"`
	// HostStealNs is the CPUs' time the hypervisor took while recording,
	// summed over the CPUs (CPUs of them), where the kernel counts it:
	// a virtual machine's host keeping its CPUs from the work, which then
	// took that much longer.
	HostStealNs int64 `json:"host_steal_ns,omitempty"`
	CPUs        int   `json:"cpus,omitempty"`
	// CorruptRecords counts tracer records that could not be right
	// (DTrace under load), dropped rather than profiled.
	CorruptRecords int64 `json:"corrupt_records,omitempty"`
	// UnmatchedCompletions counts completions seen without their issue.
	UnmatchedCompletions int64          `json:"unmatched_completions"`
	ParseErrors          int64          `json:"parse_errors"`
	Warnings             []string       `json:"warnings,omitempty"`
	EndReason            string         `json:"end_reason"`
	ExitStatus           *int           `json:"exit_status,omitempty"`
	CommandEnd           string         `json:"command_end,omitempty"`
	Devices              []event.Device `json:"devices,omitempty"`
	// SyscallUntilNs, if set, is when the tracer, unable to keep up, was
	// degraded to the block layer: the syscall layer covers only the
	// trace's start, up to then.
	SyscallUntilNs int64 `json:"syscall_until_ns,omitempty"`
	// Unavailable names the metrics the capture cannot show (an imported
	// format that lacks a field): shown as unavailable, never as zeros.
	Unavailable []event.Unavailable `json:"unavailable,omitempty"`
}

// Meta is a trace's header and, if the recording finished, its footer.
type Meta struct {
	Header Header
	Footer *Footer
	// Notes say what the reader left out of the header and footer (lists
	// and strings past its limits); never written.
	Notes []string `json:"-"`
}

// How a trace's start is known (Meta.Start).
const (
	StartTracerReady  = "when the tracer became ready"
	StartCapture      = "the capture's own clock"
	StartCaptureDated = "the capture's time of day" // followed by how the date was found
	StartRecorder     = "when the recording began"  // traces of earlier versions
)

// Start is when the trace's events began, and how that is known; zero and
// "" when nothing says (an import of a capture without dates).
func (m Meta) Start() (time.Time, string) {
	if m.Footer != nil && !m.Footer.Start.IsZero() {
		return m.Footer.Start, m.Footer.StartSource
	}
	if m.Header.Target.Mode == "import" || m.Header.Start.IsZero() {
		return time.Time{}, ""
	}
	return m.Header.Start, StartRecorder
}

// HostName is the machine the trace's I/O ran on: the recording's, or the
// one an imported capture names.
func (m Meta) HostName() string {
	if m.Header.Host == "" && m.Footer != nil {
		return m.Footer.Host
	}
	return m.Header.Host
}
