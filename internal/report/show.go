package report

import (
	"slices"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Show is the document `ioshape show --json` prints (schema in
// docs/show-json.md).
type Show struct {
	Trace TraceInfo `json:"trace"`
	*profile.Profile
}

// TraceInfo describes the recording.
type TraceInfo struct {
	ID             string           `json:"id"`
	Label          string           `json:"label,omitempty"`
	Path           string           `json:"path"`
	Backend        string           `json:"backend"`
	BackendVersion string           `json:"backend_version,omitempty"`
	Fidelity       []string         `json:"fidelity,omitempty"`
	Host           string           `json:"host"`
	Kernel         string           `json:"kernel,omitempty"`
	Target         tracefile.Target `json:"target"`
	// Start is when the trace's events began: null where nothing says
	// (an imported capture without dates); StartSource says how it is known.
	Start       *time.Time `json:"start"`
	StartSource string     `json:"start_source,omitempty"`
	// Imported is when an imported capture was read.
	Imported  *time.Time `json:"imported,omitempty"`
	DurationS float64    `json:"duration_s"`
	Events    int64      `json:"events"`
	// SummarizedIOs and SummaryRows: a summary trace's (record --summary)
	// I/Os, counted in the kernel, and its rows.
	SummarizedIOs        int64    `json:"summarized_ios,omitempty"`
	SummaryRows          int64    `json:"summary_rows,omitempty"`
	LostEvents           int64    `json:"lost_events"`
	TracerLostEvents     int64    `json:"tracer_lost_events"`
	MapOverflows         int64    `json:"map_overflows"`
	ProbeMisses          int64    `json:"probe_misses"`
	ProbeErrors          int64    `json:"probe_errors"`
	UnfinishedRequests   int64    `json:"unfinished_requests"`
	UnmatchedCompletions int64    `json:"unmatched_completions"`
	CorruptRecords       int64    `json:"corrupt_records"`
	ParseErrors          int64    `json:"parse_errors"`
	Complete             bool     `json:"complete"`
	EndReason            string   `json:"end_reason,omitempty"`
	ExitStatus           *int     `json:"exit_status,omitempty"`
	CommandEnd           string   `json:"command_end,omitempty"`
	Warnings             []string `json:"warnings,omitempty"`
	// HostStealS is the CPUs' time a virtual machine's host took while
	// recording, summed over its CPUs (CPUs of them), where the kernel
	// counts it (CPUs is 0 where it was not counted).
	HostStealS float64 `json:"host_steal_s,omitempty"`
	CPUs       int     `json:"cpus,omitempty"`
	// Unavailable names what the capture cannot show, and why; those
	// metrics are null in the profile.
	Unavailable []event.Unavailable `json:"unavailable,omitempty"`
}

// NewShow joins a trace's metadata and its profile.
func NewShow(path string, m tracefile.Meta, p *profile.Profile) *Show {
	h := m.Header
	ti := TraceInfo{
		ID: h.ID, Label: h.Label, Path: path, Backend: h.Backend, BackendVersion: h.BackendVersion,
		Fidelity: h.Fidelity, Host: m.HostName(), Kernel: h.Kernel, Target: h.Target,
	}
	if start, how := m.Start(); !start.IsZero() {
		ti.Start, ti.StartSource = &start, how
	}
	if !h.Imported.IsZero() {
		imported := h.Imported
		ti.Imported = &imported
	}
	if f := m.Footer; f != nil {
		ti.Complete = true
		ti.DurationS = float64(f.DurationNs) / 1e9
		ti.Events = f.Events
		ti.SummarizedIOs, ti.SummaryRows = f.SummarizedIOs, f.SummaryRows
		ti.TracerLostEvents = f.LostEvents
		ti.MapOverflows = f.MapOverflows
		ti.ProbeMisses = f.ProbeMisses
		ti.ProbeErrors = f.ProbeErrors
		ti.UnfinishedRequests = f.UnfinishedRequests
		ti.LostEvents = f.LostEvents + f.MapOverflows + f.ProbeMisses + f.ProbeErrors
		ti.UnmatchedCompletions = f.UnmatchedCompletions
		ti.CorruptRecords = f.CorruptRecords
		ti.ParseErrors = f.ParseErrors
		ti.EndReason = f.EndReason
		ti.ExitStatus = f.ExitStatus
		ti.CommandEnd = f.CommandEnd
		ti.Warnings = append(ti.Warnings, f.Warnings...)
		ti.Unavailable = f.Unavailable
		ti.HostStealS, ti.CPUs = float64(max(f.HostStealNs, 0))/1e9, f.CPUs
		p.MarkUnavailable(Metrics(f.Unavailable))
	}
	if m.Footer == nil {
		ti.Events = p.Events
	}
	ti.Warnings = append(ti.Warnings, m.Notes...)
	ti.Warnings = append(ti.Warnings, p.Warnings...)
	return &Show{Trace: ti, Profile: p}
}

// Metrics lists the metric names of what a trace cannot show.
func Metrics(u []event.Unavailable) []string {
	var out []string
	for _, x := range u {
		if !slices.Contains(out, x.Metric) {
			out = append(out, x.Metric)
		}
	}
	return out
}
