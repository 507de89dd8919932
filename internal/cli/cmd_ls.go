package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/units"
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
	// Streamed from the store's index: memory does not grow with the number
	// of traces (the table's columns are aligned a block of rows at a time).
	w := bufio.NewWriter(g.stdout)
	defer w.Flush()
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	local := time.Local
	n := 0
	var werr error
	err = st.Each(func(e store.Summary) bool {
		switch {
		case o.json && n == 0:
			w.WriteString("[\n")
		case o.json:
			w.WriteString(",\n")
		case n == 0:
			fmt.Fprintln(tw, "ID\tLABEL\tSTARTED\tDURATION\tEVENTS\tLOST\tSTATUS\tTARGET")
		}
		n++
		if o.json { // one object a line: as readable, and twice as fast to write
			b, _ := json.Marshal(e)
			w.WriteString("  ")
			_, werr = w.Write(b)
			return werr == nil
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, report.OrDash(e.Label), e.Start.In(local).Format("2006-01-02 15:04"),
			units.Micros(e.DurationS*1e6), units.Count(e.Events), units.Count(e.LostEvents), e.Status, truncate(e.Target, 50))
		if n%256 == 0 {
			werr = tw.Flush()
		}
		return werr == nil
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	switch {
	case o.json && n == 0:
		w.WriteString("[]\n")
	case o.json:
		w.WriteString("\n]\n")
	case n == 0:
		fmt.Fprintf(g.stderr, "no traces in %s yet: record one with 'sudo ioshape record -- COMMAND'\n", st.Dir)
	}
	return tw.Flush()
}

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
