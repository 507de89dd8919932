package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/classify"
)

func newPatternsCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "patterns",
		Short: "List the catalog of benchmark and real-work patterns that classify compares against",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			exp, err := classify.ExpectedShapes()
			if err != nil {
				return err
			}
			if asJSON {
				type entry struct {
					*classify.Pattern
					Expected classify.Shape `json:"expected_shape"`
				}
				var out []entry
				for _, e := range exp {
					out = append(out, entry{e.Pattern, e.Shape})
				}
				return writeJSON(g.stdout, out)
			}
			tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tFAMILY\tACCESS\tSIZE\tQD\tREADS\tIDLE\tVERIFIED\tNAME")
			for _, e := range exp {
				p, s := e.Pattern, e.Shape
				v := "yes"
				if !p.Verified {
					v = "no"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%g\t%.0f%%\t%.0f%%\t%s\t%s\n", p.ID, p.Family, s.Access, s.BlockSizeBytes, s.QueueDepth,
					s.ReadFraction*100, s.IdleFraction*100, v, p.Name)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the catalog, with sources and expected shapes, as JSON")
	return c
}
