package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/units"
)

// WriteRanking prints a trace predicted on several drives, fastest first:
// each drive's headline, predicted time and range, the number the work
// tracks there and where the drive's numbers came from; then the sentence
// on the headline's order, and the notes, once each.
func WriteRanking(w io.Writer, rk *predict.Ranking) error {
	ew := &errWriter{w: w}
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tDRIVE\tHEADLINE\tPREDICTED\tRANGE\tTRACKS\tNUMBERS FROM")
	for i, r := range rk.Drives {
		fmt.Fprintf(tw, "  %d\t%s\t%s MB/s\t%s\t%s\t%s\t%s\n", i+1, r.Drive, units.Num(r.HeadlineMBs, 0), units.Micros(r.PredictedS*1e6),
			RangeText(r), TracksText(r), r.Source)
	}
	tw.Flush()
	if rk.Note != "" {
		ew.printf("%s\n", rk.Note)
	}
	seen := map[string]bool{}
	for _, r := range rk.Drives {
		for _, n := range r.Notes {
			if !seen[n] {
				seen[n] = true
				ew.printf("note: %s\n", n)
			}
		}
	}
	return ew.err
}

// TracksText is the test a prediction tracks with the drive's figure for
// it: "RND4K Q1T1 read, 0.6 MB/s" ("–" for none).
func TracksText(r *predict.Result) string {
	if r.Tracks == "" {
		return "–"
	}
	return fmt.Sprintf("%s, %s MB/s", r.Tracks, units.Num(r.TracksMBs, 1))
}

// RangeText is a prediction's range: "1.42 s – 1.87 s".
func RangeText(r *predict.Result) string {
	return units.Micros(r.PredictedLowS*1e6) + " – " + units.Micros(r.PredictedHighS*1e6)
}
