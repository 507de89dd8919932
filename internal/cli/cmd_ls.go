package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/report"
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

func runLs(g *globals, o *lsOptions) error {
	st, err := g.store()
	if err != nil {
		return err
	}
	entries, err := st.List()
	if err != nil {
		return err
	}
	list := make([]report.ListEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, report.NewListEntry(e))
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

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
