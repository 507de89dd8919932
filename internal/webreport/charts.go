package webreport

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/units"
)

// chart is one rendered chart: go-echarts builds its options; the page
// places it under its heading.
type chart struct {
	ID    string
	Title string
	Note  string // below the heading: what was aggregated, how to read it
	c     renderable
}

type renderable interface {
	RenderSnippet() snippet
}

// layerNames are how charts label the two layers.
const (
	askedName = "asked (syscall)"
	driveName = "drive (block)"
)

// common are the options every chart shares: a fixed ID (the report is
// deterministic), full width, no animation (charts appear at once, and a
// screenshot shows them whole), a legend below.
func common(id string, height string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{ChartID: id, Width: "100%", Height: height}),
		charts.WithAnimation(false),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Bottom: "0"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithGridOpts(opts.Grid{Left: "12", Right: "24", Top: "36", Bottom: "36", ContainLabel: opts.Bool(true)}),
	}
}

type layerPair struct {
	name string
	l    *profile.Layer
	s    *profile.LayerSeries
}

func layers(p *profile.Profile) []layerPair {
	var out []layerPair
	var ss *profile.Series
	if p.Series != nil {
		ss = p.Series
	}
	if p.Syscall != nil && p.Syscall.IOs > 0 {
		lp := layerPair{name: askedName, l: p.Syscall}
		if ss != nil {
			lp.s = ss.Syscall
		}
		out = append(out, lp)
	}
	if p.Block != nil && p.Block.IOs > 0 {
		lp := layerPair{name: driveName, l: p.Block}
		if ss != nil {
			lp.s = ss.Block
		}
		out = append(out, lp)
	}
	return out
}

func pct(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(total)*1000) / 10
}

// sizeChart is a layer's block-size histogram, by count and by bytes.
func sizeChart(id string, lp layerPair) chart {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common(id, "320px"),
		charts.WithYAxisOpts(opts.YAxis{Name: "% of total", Type: "value"}),
		charts.WithXAxisOpts(opts.XAxis{Name: "size", Type: "category"}))...)
	var labels []string
	var byCount, byBytes []opts.BarData
	var n, total int64
	for _, b := range lp.l.SizeBytes.Histogram {
		n += b.Count
		total += b.Bytes
	}
	for _, b := range lp.l.SizeBytes.Histogram {
		labels = append(labels, sizeLabel(b.From))
		byCount = append(byCount, opts.BarData{Value: pct(b.Count, n)})
		byBytes = append(byBytes, opts.BarData{Value: pct(b.Bytes, total)})
	}
	bar.SetXAxis(labels).AddSeries("I/Os", byCount).AddSeries("bytes", byBytes)
	return chart{ID: id, Title: "Block sizes — " + lp.name, c: bar,
		Note: fmt.Sprintf("%s I/Os; each bar holds sizes from its label to twice that. Half the bytes moved in I/Os of %s or less.",
			units.Count(n), units.Bytes(lp.l.SizeBytes.P50ByBytes))}
}

func sizeLabel(from int64) string {
	if from == 0 {
		return "0"
	}
	return units.Bytes(from)
}

// seriesTimes are the start times of a series' bins, in seconds.
func seriesTimes(s *profile.Series, n int) []float64 {
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = round3(s.FirstBinS + float64(i)*s.BinS)
	}
	return ts
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func binNote(s *profile.Series) string {
	return fmt.Sprintf("Aggregated into %s bins (%s).", units.Micros(s.BinS*1e6),
		map[bool]string{true: "widened to keep the chart small", false: "the finest the report uses"}[s.BinS > 0.001])
}

// depthTimeChart is the mean number of I/Os in flight per time bin.
func depthTimeChart(id string, p *profile.Profile) (chart, bool) {
	s := p.Series
	if s == nil {
		return chart{}, false
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common(id, "320px"),
		charts.WithXAxisOpts(opts.XAxis{Name: "s", Type: "value", Min: "dataMin"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "in flight", Type: "value"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	seen := false
	for _, lp := range layers(p) {
		if lp.s == nil {
			continue
		}
		ts := seriesTimes(s, len(lp.s.InFlight))
		data := make([]opts.LineData, len(ts))
		for i, v := range lp.s.InFlight {
			data[i] = opts.LineData{Value: []float64{ts[i], v}}
		}
		line.AddSeries(lp.name, data, charts.WithLineChartOpts(opts.LineChart{Step: "start", ShowSymbol: opts.Bool(false)}))
		seen = true
	}
	return chart{ID: id, Title: "Queue depth over time", c: line,
		Note: "Mean number of I/Os in flight in each bin. " + binNote(s)}, seen
}

// depthLabel groups depths above 32 into powers of two, so a depth-1000
// run does not make a thousand bars.
func depthLabel(d int) (int, string) {
	if d <= 32 {
		return d, strconv.Itoa(d)
	}
	k := 1 << (bits.Len(uint(d)) - 1)
	return k, fmt.Sprintf("%d–%d", k, 2*k-1)
}

// depthSeries is one bar series of a depth distribution; without a
// histogram (ok false) its bars are empty.
type depthSeries struct {
	name string
	hist []profile.DepthBucket
	ok   bool
}

// depthBars charts depth distributions side by side, as shares of I/Os,
// on a shared axis. It reports false when no series has data.
func depthBars(id, height string, series []depthSeries) (*charts.Bar, bool) {
	keys := map[int]string{}
	for _, sr := range series {
		for _, b := range sr.hist {
			k, label := depthLabel(b.Depth)
			keys[k] = label
		}
	}
	if len(keys) == 0 {
		return nil, false
	}
	order := make([]int, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	sort.Ints(order)
	labels := make([]string, len(order))
	for i, k := range order {
		labels[i] = keys[k]
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common(id, height),
		charts.WithXAxisOpts(opts.XAxis{Name: "depth", Type: "category"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "% of I/Os", Type: "value"}))...)
	bar.SetXAxis(labels)
	for _, sr := range series {
		data := make([]opts.BarData, len(order))
		if sr.ok {
			counts := map[int]int64{}
			var n int64
			for _, b := range sr.hist {
				k, _ := depthLabel(b.Depth)
				counts[k] += b.Count
				n += b.Count
			}
			for i, k := range order {
				data[i] = opts.BarData{Value: pct(counts[k], n)}
			}
		}
		bar.AddSeries(sr.name, data)
	}
	return bar, true
}

// depthDistChart is the queue depth each arriving I/O found.
func depthDistChart(id string, p *profile.Profile) (chart, bool) {
	var series []depthSeries
	for _, lp := range layers(p) {
		series = append(series, depthSeries{lp.name, lp.l.QueueDepth.Histogram, true})
	}
	bar, ok := depthBars(id, "320px", series)
	if !ok {
		return chart{}, false
	}
	return chart{ID: id, Title: "Queue depth distribution", c: bar,
		Note: "The depth each I/O found on arrival, itself included: what a benchmark's \"QD\" sets."}, true
}

// latencyChart is the latency distribution on log-spaced buckets with the
// percentiles marked.
func latencyChart(id string, p *profile.Profile) (chart, bool) {
	lps := layers(p)
	type bucket struct{ from, to float64 }
	seen := map[float64]bucket{}
	for _, lp := range lps {
		if lp.s == nil {
			continue
		}
		for _, b := range lp.s.Latency {
			seen[b.FromUs] = bucket{b.FromUs, b.ToUs}
		}
	}
	if len(seen) == 0 {
		return chart{}, false
	}
	var order []bucket
	for _, b := range seen {
		order = append(order, b)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].from < order[j].from })
	// Fill the gaps so the axis stays logarithmic.
	var full []bucket
	for i, b := range order {
		if i > 0 {
			for prev := full[len(full)-1]; prev.to < b.from*0.999; prev = full[len(full)-1] {
				full = append(full, bucket{prev.to, round3(prev.to * math.Pow(2, 0.25))})
			}
		}
		full = append(full, b)
	}
	labels := make([]string, len(full))
	for i, b := range full {
		labels[i] = units.Micros(b.from)
	}
	labelOf := func(us float64) string {
		for i := len(full) - 1; i >= 0; i-- {
			if us >= full[i].from {
				return labels[i]
			}
		}
		return labels[0]
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common(id, "340px"),
		charts.WithXAxisOpts(opts.XAxis{Name: "latency (log scale)", Type: "category"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "% of I/Os", Type: "value"}))...)
	bar.SetXAxis(labels)
	for _, lp := range lps {
		if lp.s == nil {
			continue
		}
		counts := map[float64]int64{}
		var n int64
		for _, b := range lp.s.Latency {
			counts[b.FromUs] += b.Count
			n += b.Count
		}
		data := make([]opts.BarData, len(full))
		for i, b := range full {
			data[i] = opts.BarData{Value: pct(counts[b.from], n)}
		}
		short := "asked"
		if lp.name == driveName {
			short = "drive"
		}
		d := lp.l.LatencyUs
		bar.AddSeries(lp.name, data, charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
			Label: &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "insideEndTop"}}), charts.WithMarkLineNameXAxisItemOpts(
			opts.MarkLineNameXAxisItem{Name: short + " p50 " + units.Micros(d.P50), XAxis: labelOf(d.P50)},
			opts.MarkLineNameXAxisItem{Name: short + " p99 " + units.Micros(d.P99), XAxis: labelOf(d.P99)},
			opts.MarkLineNameXAxisItem{Name: short + " p99.9 " + units.Micros(d.P999), XAxis: labelOf(d.P999)},
		), charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			// Two layers' lines sit close: stagger their labels.
			if short == "drive" {
				s.MarkLines.Label = &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "insideEndBottom"}
			}
		}))
	}
	return chart{ID: id, Title: "Latency", c: bar,
		Note: "Issue to completion. Buckets are a quarter of a power of two wide; the lines mark p50, p99 and p99.9."}, true
}

// offsetChart is a seekwatcher-style map of where on a device I/O went.
func offsetChart(id string, m profile.OffsetMap) chart {
	sc := charts.NewScatter()
	sc.SetGlobalOptions(append(common(id, "360px"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Name: "s", Type: "value", Min: "dataMin"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "offset (GiB)", Type: "value"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	var reads, writes []opts.ScatterData
	for _, c := range m.Cells {
		gib := math.Round(float64(c.Offset)/(1<<30)*1e4) / 1e4
		if c.Reads > 0 {
			reads = append(reads, opts.ScatterData{Value: []float64{c.S, gib, float64(c.Reads)}})
		}
		if c.Writes > 0 {
			writes = append(writes, opts.ScatterData{Value: []float64{c.S, gib, float64(c.Writes)}})
		}
	}
	small := charts.WithScatterChartOpts(opts.ScatterChart{SymbolSize: 4})
	sc.AddSeries("reads", reads, small).AddSeries("writes", writes, small)
	note := fmt.Sprintf("%s I/Os, counted in cells of %s × %s of device offset; a point is a cell with I/O in it.",
		units.Count(m.IOs), units.Micros(m.CellS*1e6), units.Bytes(m.CellBytes))
	if m.CellS > 0.001 || m.CellBytes > 4096 {
		note += " Cells were widened to keep the chart small."
	}
	return chart{ID: id, Title: "Offsets over time — " + m.Device, Note: note, c: sc}
}

// throughputChart is IOPS and MB/s over time, with the classified phases
// shaded.
func throughputChart(id string, p *profile.Profile, phases []classify.Phase) (chart, bool) {
	s := p.Series
	if s == nil {
		return chart{}, false
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common(id, "360px"),
		charts.WithXAxisOpts(opts.XAxis{Name: "s", Type: "value", Min: "dataMin"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "MB/s", Type: "value"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	line.ExtendYAxis(opts.YAxis{Name: "IOPS", Type: "value", Position: "right"})
	first := true
	for _, lp := range layers(p) {
		if lp.s == nil {
			continue
		}
		ts := seriesTimes(s, len(lp.s.IOs))
		mbs := make([]opts.LineData, len(ts))
		iops := make([]opts.LineData, len(ts))
		for i := range ts {
			mbs[i] = opts.LineData{Value: []float64{ts[i], round3(float64(lp.s.ReadBytes[i]+lp.s.WriteBytes[i]) / 1e6 / s.BinS)}}
			iops[i] = opts.LineData{Value: []float64{ts[i], round3(float64(lp.s.IOs[i]) / s.BinS)}}
		}
		mbOpts := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{Step: "start", ShowSymbol: opts.Bool(false)})}
		if first && len(phases) > 1 {
			mbOpts = append(mbOpts, phaseAreas(phases))
		}
		first = false
		line.AddSeries(lp.name+" MB/s", mbs, mbOpts...)
		line.AddSeries(lp.name+" IOPS", iops, charts.WithLineChartOpts(opts.LineChart{Step: "start", ShowSymbol: opts.Bool(false), YAxisIndex: 1}),
			charts.WithLineStyleOpts(opts.LineStyle{Type: "dashed"}))
	}
	note := "MB/s on the left, IOPS (dashed) on the right. " + binNote(s)
	if len(phases) > 1 {
		note += " Shaded: the phases classify found, numbered as in the phases table, with their best match where there is room."
	}
	return chart{ID: id, Title: "Throughput and IOPS over time", c: line, Note: note}, true
}

func phaseAreas(phases []classify.Phase) charts.SeriesOpts {
	colors := []string{"rgba(47,91,211,0.08)", "rgba(211,120,47,0.10)"}
	return charts.WithSeriesOpts(func(s *charts.SingleSeries) {
		type end struct {
			Name      string          `json:"name,omitempty"`
			XAxis     float64         `json:"xAxis"`
			ItemStyle *opts.ItemStyle `json:"itemStyle,omitempty"`
		}
		ma := &opts.MarkAreas{MarkAreaStyle: opts.MarkAreaStyle{Label: &opts.Label{Show: opts.Bool(true), Position: "insideTop", FontSize: 10}}}
		for i, ph := range phases {
			ma.Data = append(ma.Data, []end{
				{Name: phaseLabel(i, ph, phases), XAxis: ph.StartS, ItemStyle: &opts.ItemStyle{Color: colors[i%2]}},
				{XAxis: ph.EndS},
			})
		}
		s.MarkAreas = ma
	})
}

// phaseLabel names a phase on the chart by its number in the phases
// table, with as much of its best match's name as its width has room for:
// full names on short phases would run into each other.
func phaseLabel(i int, ph classify.Phase, all []classify.Phase) string {
	label := strconv.Itoa(i + 1)
	span := all[len(all)-1].EndS - all[0].StartS
	if span <= 0 {
		return label
	}
	room := int((ph.EndS - ph.StartS) / span * 90) // characters at about 900 px
	if room < 8 {
		return label
	}
	name := []rune(ph.Best.Name)
	if len(name) > room-3 {
		name = append(name[:room-4], '…')
	}
	return label + ". " + string(name)
}

// rankingChart is the best matches' scores.
func rankingChart(id string, r *classify.Result, top int) chart {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common(id, "360px"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithXAxisOpts(opts.XAxis{Name: "score", Type: "value", Min: 0, Max: 1}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Inverse: opts.Bool(true)}))...)
	var names []string
	var data []opts.BarData
	for i, m := range r.Matches {
		if i == top {
			break
		}
		names = append(names, m.Name)
		data = append(data, opts.BarData{Value: m.Score})
	}
	bar.SetXAxis(names).AddSeries("score", data)
	bar.XYReversal()
	return chart{ID: id, Title: "Best-matching benchmark patterns", c: bar,
		Note: "1 is identical in every dimension; the table below explains each score."}
}

// layerBytesChart sets what was asked for beside what reached the drive.
func layerBytesChart(id string, p *profile.Profile) (chart, bool) {
	pc := p.PageCache
	if pc.SyscallReadBytes+pc.SyscallWriteBytes+pc.BlockReadBytes+pc.BlockWriteBytes == 0 {
		return chart{}, false
	}
	mib := func(n int64) opts.BarData { return opts.BarData{Value: round3(float64(n) / (1 << 20))} }
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common(id, "300px"),
		charts.WithYAxisOpts(opts.YAxis{Name: "MiB", Type: "value"}))...)
	bar.SetXAxis([]string{"read", "written"}).
		AddSeries(askedName, []opts.BarData{mib(pc.SyscallReadBytes), mib(pc.SyscallWriteBytes)}).
		AddSeries(driveName, []opts.BarData{mib(pc.BlockReadBytes), mib(pc.BlockWriteBytes)})
	note := "What the application asked for against what the drive moved: the difference is the page cache, readahead and writeback."
	if p.Writeback.IOs > 0 {
		note += fmt.Sprintf(" Kernel writeback: %s in %s I/Os (%s).", units.Bytes(p.Writeback.Bytes), units.Count(p.Writeback.IOs),
			map[bool]string{true: "included", false: "excluded"}[p.Writeback.Included])
	}
	return chart{ID: id, Title: "Bytes asked for vs bytes at the drive", c: bar, Note: note}, true
}
