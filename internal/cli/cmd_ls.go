package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/store"
)

type lsOptions struct{ json bool }

func newLsCommand(g *globals) *cobra.Command {
	o := &lsOptions{}
	c := &cobra.Command{
		Use:   "ls",
		Short: "List the traces in the store, newest first",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return runLs(g, o) },
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the list as JSON")
	return c
}

type lsEntry struct {
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

func runLs(g *globals, o *lsOptions) error {
	st, err := g.store()
	if err != nil {
		return err
	}
	entries, err := st.List()
	if err != nil {
		return err
	}
	list := make([]lsEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, toLsEntry(e))
	}
	if o.json {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(g.stderr, "no traces in %s yet: record one with 'sudo ioshape record -- COMMAND'\n", st.Dir)
		return nil
	}
	tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLABEL\tSTARTED\tDURATION\tEVENTS\tLOST\tSTATUS\tTARGET")
	for _, e := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, report.OrDash(e.Label), e.Start.Local().Format("2006-01-02 15:04"),
			report.Micros(e.DurationS*1e6), report.Count(e.Events), report.Count(e.LostEvents), e.Status, truncate(e.Target, 50))
	}
	return tw.Flush()
}

func toLsEntry(e store.Entry) lsEntry {
	le := lsEntry{ID: e.ID, Path: e.Path, Status: "ok"}
	if e.Err != nil {
		le.Status = "unreadable: " + e.Err.Error()
		return le
	}
	h := e.Meta.Header
	le.Label, le.Start = h.Label, h.Start
	le.Target = h.Target.Mode
	if len(h.Target.Command) > 0 {
		le.Target = strings.Join(h.Target.Command, " ")
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

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
