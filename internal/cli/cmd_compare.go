package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/webreport"
)

type compareOptions struct {
	json      bool
	output    string
	writeback string
	predictOn []string
}

func newCompareCommand(g *globals) *cobra.Command {
	o := &compareOptions{}
	c := &cobra.Command{
		Use:   "compare <trace A> <trace B> [trace C...]",
		Short: "Compare traces side by side: launches cold vs warm, before vs after, drive vs drive",
		Long: `Compare sets traces side by side, the first as the baseline: bytes read and
written, I/O count, block size, queue depth, latency, duration, random share,
and each trace's best-matching benchmark patterns. Rows that differ from the
first trace by 10% (10 points for shares) or more are marked. Text by default;
--json for scripts; -o FILE.html writes an HTML page with overlaid charts.`,
		Example: `  ioshape compare cold-launch warm-launch
  ioshape compare -o launches.html 7k3m9q 9xk2pd
  ioshape compare --json before after`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd.Context(), g, o, args) },
	}
	f := c.Flags()
	f.BoolVar(&o.json, "json", false, "print the comparison as JSON")
	f.StringVarP(&o.output, "output", "o", "", "write an HTML comparison to this file (- for standard output)")
	f.StringVar(&o.writeback, "writeback", "include", "block I/O issued by kernel threads: include or exclude")
	f.StringArrayVar(&o.predictOn, "predict-on", nil, "a drive profile (name in 'ioshape drives', or file): add each workload's predicted time there (repeatable: each workload's drives ranked)")
	return c
}

func runCompare(ctx context.Context, g *globals, o *compareOptions, args []string) error {
	if len(args) > 8 {
		return usageError{fmt.Errorf("compare takes at most 8 traces, not %d", len(args))}
	}
	var as []*report.Analysis
	for _, arg := range args {
		a, err := analyze(ctx, g, arg, o.writeback, &driveFlags{}, o.predictOn)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: %w", arg, err)
		}
		as = append(as, a)
	}
	c := report.Compare(as)
	switch {
	case o.json:
		return writeJSON(g.stdout, c)
	case o.output != "":
		page := webreport.Compare(as, c, webreport.Options{})
		if err := g.writeOutput(ctx, o.output, page.Write); err != nil {
			return err
		}
		if o.output != "-" {
			fmt.Fprintln(g.stdout, o.output)
		}
		return nil
	}
	return report.WriteCompare(g.stdout, c)
}
