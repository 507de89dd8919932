package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ioshape/ioshape/internal/units"
)

// FormatValue formats a compare value in its unit.
func FormatValue(unit string, v *float64) string {
	if v == nil {
		return "–"
	}
	switch unit {
	case UnitBytes:
		return units.Bytes(int64(*v))
	case UnitCount:
		return units.Count(int64(*v))
	case UnitMicros:
		return units.Micros(*v)
	case UnitSeconds:
		return units.Num(*v, 2) + " s"
	case UnitFraction:
		return units.Percent(*v)
	case UnitMBs:
		return units.Num(*v, 1) + " MB/s"
	}
	return units.Num(*v, 1)
}

// FormatChange formats a change from the baseline.
func FormatChange(unit string, ch *float64) string {
	if ch == nil {
		return ""
	}
	if unit == UnitFraction {
		return fmt.Sprintf("%+.0f pt", *ch*100)
	}
	return fmt.Sprintf("%+.0f%%", *ch*100)
}

// WriteCompare prints a comparison for a terminal: one column per trace,
// the change from the first beside each later value, and "*" on the rows
// that differ by 10% (10 points) or more.
func WriteCompare(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	for i, t := range c.Traces {
		name := t.ID
		if name == "" {
			name = t.Path
		}
		if t.Label != "" {
			name += fmt.Sprintf(" %q", t.Label)
		}
		ew.printf("%s  %s  %s", string(rune('A'+i)), name, t.Target)
		if t.LostEvents > 0 {
			ew.printf("  (LOST %s events)", units.Count(t.LostEvents))
		}
		if !t.Complete {
			ew.printf("  (incomplete recording)")
		}
		ew.printf("\n")
	}
	ew.printf("\n")
	for _, s := range c.Changes {
		ew.printf("%s\n", s)
	}
	if len(c.Changes) > 0 {
		ew.printf("\n")
	}
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	head := []string{"", ""}
	for i := range c.Traces {
		head = append(head, string(rune('A'+i)))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range c.Rows {
		mark := " "
		if r.Matters {
			mark = "*"
		}
		cells := []string{mark, r.Name}
		for i, v := range r.Values {
			s := FormatValue(r.Unit, v)
			if i > 0 {
				if ch := FormatChange(r.Unit, r.Change[i]); ch != "" {
					s += " (" + ch + ")"
				}
			}
			cells = append(cells, s)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	ew.printf("\n* differs from A by 10%% (10 points) or more\n\nBest matches\n")
	for i, t := range c.Traces {
		ew.printf("  %s  ", string(rune('A'+i)))
		if t.Shape == "" {
			ew.printf("no data I/O to classify\n")
			continue
		}
		var names []string
		for _, m := range t.Best {
			names = append(names, fmt.Sprintf("%s (%.2f)", m.Name, m.Score))
		}
		ew.printf("%s → %s\n", t.Shape, strings.Join(names, "; "))
	}
	for i, rk := range c.Drives {
		if rk == nil {
			continue
		}
		ew.printf("\n%s on %d drives, fastest first:\n", string(rune('A'+i)), len(rk.Drives))
		if ew.err == nil {
			ew.err = WriteRanking(ew.w, rk)
		}
	}
	return ew.err
}
