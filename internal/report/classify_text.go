package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/tracefile"
	"github.com/ioshape/ioshape/internal/units"
)

// WriteClassification prints a classification for a terminal.
func WriteClassification(w io.Writer, path string, m tracefile.Meta, r *classify.Result, top int) error {
	ew := &errWriter{w: w}
	name := m.Header.ID
	if name == "" {
		name = path
	}
	if m.Header.Label != "" {
		name += fmt.Sprintf(" %q", m.Header.Label)
	}
	s := r.Shape
	ew.printf("Trace %s\n", name)
	ew.printf("  %s\n", r.Verdict.Text)
	ew.printf("  shape  %s\n", ShapeText(s))
	if s.LayerReason != "" {
		ew.printf("  layer  %s: %s\n", s.Layer, s.LayerReason)
	}
	if o := r.OtherLayer; o != nil {
		ew.printf("  beside %s\n", ShapeText(*o))
	}
	ew.printf("\n")

	ew.printf("Best matches\n")
	for i, m := range r.Matches {
		if i == top {
			break
		}
		tag := ""
		if !m.Verified {
			tag = " (parameters unverified)"
		}
		ew.printf("  %d. %-58s score %.2f  [%s]%s\n", i+1, m.Name, m.Score, m.Family, tag)
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
		for _, d := range m.Dimensions {
			fmt.Fprintf(tw, "       %s\t%s\tvs %s\t%.2f\t%s\n", d.Name, d.Trace, d.Pattern, d.Similarity, d.Why)
		}
		tw.Flush()
	}
	ew.printf("\n")

	if len(r.Mixture) > 0 {
		ew.printf("Mixture\n")
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  pattern\tbytes\ttime\n")
		for _, m := range r.Mixture {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Name, units.Percent(m.BytesShare), units.Percent(m.TimeShare))
		}
		tw.Flush()
		ew.printf("\n")
	}
	if len(r.Phases) > 0 {
		ew.printf("Phases\n")
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
		for _, p := range r.Phases {
			fmt.Fprintf(tw, "  %s–%s s\t%s, %s, QD %s, %s reads\t→ %s (%.2f)\n", units.Num(p.StartS, 2), units.Num(p.EndS, 2), p.Shape.Access,
				units.Bytes(p.Shape.BlockSizeBytes), units.Num(p.Shape.QueueDepth, 1), units.Percent(p.Shape.ReadFraction), p.Best.Name, p.Best.Score)
		}
		tw.Flush()
		ew.printf("\n")
	}
	if len(r.Actors) > 0 {
		ew.printf("Actors\n")
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
		for _, a := range r.Actors {
			fmt.Fprintf(tw, "  %s\t%s–%s s\t%s of the bytes\t%s, %s, QD %s, %s reads\t→ %s (%.2f)\n", a.Name, units.Num(a.StartS, 2), units.Num(a.EndS, 2),
				units.Percent(a.BytesShare), a.Shape.Access, units.Bytes(a.Shape.BlockSizeBytes), units.Num(a.Shape.QueueDepth, 1), units.Percent(a.Shape.ReadFraction), a.Best.Name, a.Best.Score)
		}
		tw.Flush()
		ew.printf("\n")
	}
	if d := r.Drive; d != nil {
		title := "What this means for your drive"
		if d.Drive != "" {
			title += " (" + d.Drive + ")"
		}
		ew.printf("%s\n", title)
		for _, c := range d.Components {
			ew.printf("  %s at %s MB/s (%s, match %.2f): %s\n", units.Bytes(c.Bytes), units.Num(c.ResultMBs, 0), c.ResultName, c.ResultMatch, units.Micros(c.TimeS*1e6))
		}
		ew.printf("  estimate: %s MB/s, %s (%s at the drive + %s of gaps); recorded: %s\n",
			units.Num(d.ThroughputMBs, 0), units.Micros(d.DurationS*1e6), units.Micros(d.DeviceS*1e6), units.Micros(d.ThinkS*1e6), units.Micros(d.TraceDurationS*1e6))
		ew.printf("  %s\n", d.Headline.Note)
	}
	return ew.err
}

// ShapeText is a shape in one line, with the layer it was read from.
func ShapeText(s classify.Shape) string {
	return fmt.Sprintf("%s, %s (by bytes), queue depth %s requested / %s at the device, %s reads, %s idle  [%s layer, %s I/Os, %s]",
		s.Access, units.Bytes(s.BlockSizeBytes), units.Num(s.QueueDepth, 1), units.Num(s.DeviceQueueDepth, 1), units.Percent(s.ReadFraction),
		units.Percent(s.IdleFraction), s.Layer, units.Count(s.IOs), units.Bytes(s.Bytes))
}
