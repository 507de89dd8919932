package webreport

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/units"
)

// drivesView is a trace predicted on several drives, fastest first.
type drivesView struct {
	Title string // in a comparison: which trace
	Rows  []rankedDriveView
	Note  string
	Chart []chartView
}

type rankedDriveView struct {
	Rank                                                     int
	Drive, Headline, Predicted, Range, Promise, Tracks, From string
}

func drivesOf(rk *predict.Ranking) *drivesView {
	v := &drivesView{Note: rk.Note}
	for i, r := range rk.Drives {
		v.Rows = append(v.Rows, rankedDriveView{Rank: i + 1, Drive: r.Drive, Headline: units.Num(r.HeadlineMBs, 0) + " MB/s",
			Predicted: units.Micros(r.PredictedS * 1e6), Range: report.RangeText(r),
			Promise: units.Micros(r.HeadlineS * 1e6), Tracks: report.TracksText(r), From: r.Source})
	}
	return v
}

// drivesChart sets each drive's predicted time, with its range, beside
// the time its headline promises for the same bytes.
func drivesChart(id string, rk *predict.Ranking) chart {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common(id, fmt.Sprintf("%dpx", 120+48*len(rk.Drives))),
		charts.WithXAxisOpts(opts.XAxis{Name: "s", Type: "value"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Inverse: opts.Bool(true)}))...)
	var names []string
	var pred, low, high, promise []opts.BarData
	for _, r := range rk.Drives {
		names = append(names, r.Drive)
		pred = append(pred, opts.BarData{Value: r.PredictedS})
		low = append(low, opts.BarData{Value: r.PredictedLowS})
		high = append(high, opts.BarData{Value: r.PredictedHighS})
		promise = append(promise, opts.BarData{Value: r.HeadlineS})
	}
	bar.SetXAxis(names).
		AddSeries("predicted", pred).
		AddSeries("range: least", low).
		AddSeries("range: most", high).
		AddSeries("the headline's promise (SEQ1M Q8T1)", promise)
	bar.XYReversal()
	return chart{ID: id, Title: "Predicted time on each drive, and what its headline promises", c: bar,
		Note: "Fastest first. The promise is the bytes the work moved at the drive's SEQ1M Q8T1 rate; the range is what the drive's numbers leave open."}
}
