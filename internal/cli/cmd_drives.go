package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/units"
)

func newDrivesCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "drives",
		Short: "List the drive profiles in the store (measured by 'ioshape bench', or imported)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := g.store()
			if err != nil {
				return err
			}
			ds, err := st.Drives()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, ds)
			}
			if len(ds) == 0 {
				fmt.Fprintf(g.stderr, "no drive profiles in %s yet: measure one with 'sudo ioshape bench --dir DIR --label NAME'\n", st.Dir)
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tHOST\tDEVICE\tFS\tDATE\tSEQ1M Q8T1 READ\tRND4K Q1T1 READ\tSOURCE")
			for _, d := range ds {
				note := "bench (" + d.Tool + ")"
				switch {
				case d.Provenance != nil:
					note = d.Provenance.String()
				case d.Coarse:
					note = "coarse: " + d.Tool
				case d.Buffered:
					note += ", buffered (no O_DIRECT)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s MB/s\t%s MB/s\t%s\n", d.Name, report.OrDash(d.Host), report.OrDash(d.Device), report.OrDash(d.FSType),
					d.Date.Local().Format("2006-01-02 15:04"), units.Num(d.Headline("read"), 0), units.Num(d.MBs("read", "rand", 4096, 1), 1), note)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the profiles as JSON")
	c.AddCommand(newDrivesImportCommand(g))
	return c
}
