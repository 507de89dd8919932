package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/store"
)

// ListEntry is a trace in the store's list (ls --json, the daemon's list).
type ListEntry struct {
	ID         string    `json:"id"`
	Label      string    `json:"label,omitempty"`
	Path       string    `json:"path"`
	Start      time.Time `json:"start"`
	DurationS  float64   `json:"duration_s"`
	Target     string    `json:"target"`
	Events     int64     `json:"events"`
	LostEvents int64     `json:"lost_events"`
	Status     string    `json:"status"`
}

// NewListEntry describes a store entry for a list.
func NewListEntry(e store.Entry) ListEntry {
	le := ListEntry{ID: e.ID, Path: e.Path, Status: "ok"}
	if e.Err != nil {
		le.Status = "unreadable: " + e.Err.Error()
		return le
	}
	h := e.Meta.Header
	le.Label, le.Start = h.Label, h.Start
	le.Target = h.Target.Mode
	if len(h.Target.Command) > 0 {
		// One line: a shell script given as an argument may span several.
		le.Target = strings.Join(strings.Fields(strings.Join(h.Target.Command, " ")), " ")
	} else if len(h.Target.Names) > 0 {
		le.Target = "name " + strings.Join(h.Target.Names, ",")
	} else if len(h.Target.Pids) > 0 {
		le.Target = fmt.Sprintf("pid %v", h.Target.Pids)
	}
	if f := e.Meta.Footer; f != nil {
		le.DurationS = float64(f.DurationNs) / 1e9
		le.Events = f.Events
		le.LostEvents = f.LostEvents + f.MapOverflows + f.ProbeMisses + f.ProbeErrors
		if le.LostEvents > 0 {
			le.Status = "lost events"
		}
	} else if e.Partial {
		le.Status = "recording or cut short"
	}
	return le
}
