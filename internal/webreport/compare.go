package webreport

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/units"
)

// letter names the i-th trace of a comparison, as the text view does.
func letter(i int) string { return string(rune('A' + i)) }

// mainLayer is the layer a trace's shape was read from (see
// classify.ShapeOf): the one to overlay.
func mainLayer(a *report.Analysis) (*profile.Layer, *profile.LayerSeries, string) {
	p := a.Show.Profile
	useBlock := a.Class != nil && a.Class.Shape.Layer == "block" || p.Syscall == nil || p.Syscall.IOs == 0
	if useBlock && p.Block != nil {
		var s *profile.LayerSeries
		if p.Series != nil {
			s = p.Series.Block
		}
		return p.Block, s, "block"
	}
	var s *profile.LayerSeries
	if p.Series != nil {
		s = p.Series.Syscall
	}
	return p.Syscall, s, "syscall"
}

// Compare builds the page comparing analyses; the first is the baseline.
func Compare(as []*report.Analysis, c *report.Comparison, o Options) *Page {
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = letter(i) + ": " + a.Show.Trace.Name()
	}
	p := &Page{Title: "Comparison of " + strings.Join(names, ", "), Nav: o.Nav, nonce: o.Nonce,
		Subtitle: "Each later trace is measured against A. Rows that differ by 10% (10 points for shares) or more are highlighted."}
	for i, a := range as {
		for _, bn := range traceBanners(a.Show.Trace) {
			bn.Title = letter(i) + ": " + bn.Title
			p.Banners = append(p.Banners, bn)
		}
	}
	v := &compareView{Changes: c.Changes}
	p.compare = v
	for i, t := range c.Traces {
		tv := compareTraceView{Letter: letter(i), Name: t.ID, Target: t.Target, Shape: t.Shape}
		if t.Label != "" {
			tv.Name = t.Label + " (" + t.ID + ")"
		}
		for _, m := range t.Best {
			tv.Best = append(tv.Best, fmt.Sprintf("%s (%.2f)", m.Name, m.Score))
		}
		v.Traces = append(v.Traces, tv)
	}
	for _, r := range c.Rows {
		rv := compareRowView{Name: r.Name, Matters: r.Matters}
		for i, val := range r.Values {
			s := report.FormatValue(r.Unit, val)
			if i > 0 {
				if ch := report.FormatChange(r.Unit, r.Change[i]); ch != "" {
					s += " (" + ch + ")"
				}
			}
			rv.Values = append(rv.Values, s)
		}
		v.Rows = append(v.Rows, rv)
	}
	for _, ch := range []chart{compareSizes(as), compareLatency(as), compareDepth(as), compareThroughput(as)} {
		if ch.c != nil {
			p.Charts = append(p.Charts, ch)
			v.Charts = append(v.Charts, ch.view(o.Nonce))
		}
	}
	for i, rk := range c.Drives {
		if rk == nil {
			continue
		}
		dv := drivesOf(rk)
		dv.Title = letter(i) + ": which drive finishes it first"
		ch := drivesChart("drives-"+strings.ToLower(letter(i)), rk)
		p.Charts = append(p.Charts, ch)
		dv.Chart = append(dv.Chart, ch.view(o.Nonce))
		v.Drives = append(v.Drives, dv)
	}
	return p
}

// compareView is what the comparison template shows.
type compareView struct {
	Changes []string
	Traces  []compareTraceView
	Rows    []compareRowView
	Charts  []chartView
	Drives  []*drivesView // each trace ranked on several drives
}

type compareTraceView struct {
	Letter, Name, Target, Shape string
	Best                        []string
}

type compareRowView struct {
	Name    string
	Matters bool
	Values  []string
}

func compareSizes(as []*report.Analysis) chart {
	keys := map[int64]bool{}
	for _, a := range as {
		if l, _, _ := mainLayer(a); l != nil {
			for _, h := range l.SizeBytes.Histogram {
				keys[h.From] = true
			}
		}
	}
	if len(keys) == 0 {
		return chart{}
	}
	order := make([]int64, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	labels := make([]string, len(order))
	for i, k := range order {
		labels[i] = sizeLabel(k)
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("cmp_sizes", "340px"),
		charts.WithXAxisOpts(opts.XAxis{Name: "size", Type: "category"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "% of bytes", Type: "value"}))...)
	bar.SetXAxis(labels)
	for i, a := range as {
		l, _, layer := mainLayer(a)
		data := make([]opts.BarData, len(order))
		if l != nil {
			byFrom := map[int64]int64{}
			var total int64
			for _, h := range l.SizeBytes.Histogram {
				byFrom[h.From] = h.Bytes
				total += h.Bytes
			}
			for j, k := range order {
				data[j] = opts.BarData{Value: pct(byFrom[k], total)}
			}
		}
		bar.AddSeries(fmt.Sprintf("%s (%s)", letter(i), layer), data)
	}
	return chart{ID: "cmp_sizes", Title: "Block sizes, by bytes", c: bar,
		Note: "Each trace at the layer its shape was read from (usually what the application asked for)."}
}

func compareLatency(as []*report.Analysis) chart {
	type key = float64
	seen := map[key]float64{}
	for _, a := range as {
		if _, s, _ := mainLayer(a); s != nil {
			for _, b := range s.Latency {
				seen[b.FromUs] = b.ToUs
			}
		}
	}
	if len(seen) == 0 {
		return chart{}
	}
	lo, hi := math.Inf(1), 0.0
	for from, to := range seen {
		lo, hi = math.Min(lo, from), math.Max(hi, to)
	}
	var froms []float64
	for f := lo; f < hi*0.999; f = round3(f * math.Pow(2, 0.25)) {
		froms = append(froms, f)
	}
	labels := make([]string, len(froms))
	for i, f := range froms {
		labels[i] = units.Micros(f)
	}
	bar := charts.NewLine()
	bar.SetGlobalOptions(append(common("cmp_latency", "340px"),
		charts.WithXAxisOpts(opts.XAxis{Name: "latency (log scale)", Type: "category"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "% of I/Os", Type: "value"}))...)
	bar.SetXAxis(labels)
	for i, a := range as {
		_, s, layer := mainLayer(a)
		data := make([]opts.LineData, len(froms))
		if s != nil {
			var n int64
			for _, b := range s.Latency {
				n += b.Count
			}
			for j, f := range froms {
				var c int64
				for _, b := range s.Latency {
					if math.Abs(b.FromUs-f) <= f*0.01 {
						c += b.Count
					}
				}
				data[j] = opts.LineData{Value: pct(c, n)}
			}
		}
		bar.AddSeries(fmt.Sprintf("%s (%s)", letter(i), layer), data, charts.WithLineChartOpts(opts.LineChart{Step: "middle", ShowSymbol: opts.Bool(false)}))
	}
	return chart{ID: "cmp_latency", Title: "Latency", c: bar, Note: "Issue to completion, a quarter of a power of two per step."}
}

func compareDepth(as []*report.Analysis) chart {
	var series []depthSeries
	for i, a := range as {
		l, _, layer := mainLayer(a)
		sr := depthSeries{name: fmt.Sprintf("%s (%s)", letter(i), layer), ok: l != nil}
		if l != nil {
			sr.hist = l.QueueDepth.Histogram
		}
		series = append(series, sr)
	}
	bar, ok := depthBars("cmp_depth", "340px", series)
	if !ok {
		return chart{}
	}
	return chart{ID: "cmp_depth", Title: "Queue depth", c: bar, Note: "The depth each I/O found on arrival."}
}

func compareThroughput(as []*report.Analysis) chart {
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("cmp_throughput", "340px"),
		charts.WithXAxisOpts(opts.XAxis{Name: "s from start", Type: "value", Min: "dataMin"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "MB/s", Type: "value"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	seen := false
	var widest float64
	for i, a := range as {
		ser := a.Show.Series
		_, s, layer := mainLayer(a)
		if ser == nil || s == nil {
			continue
		}
		widest = math.Max(widest, ser.BinS)
		ts := seriesTimes(ser, len(s.IOs))
		data := make([]opts.LineData, len(ts))
		for j := range ts {
			data[j] = opts.LineData{Value: []float64{ts[j], round3(float64(s.ReadBytes[j]+s.WriteBytes[j]) / 1e6 / ser.BinS)}}
		}
		line.AddSeries(fmt.Sprintf("%s (%s)", letter(i), layer), data, charts.WithLineChartOpts(opts.LineChart{Step: "start", ShowSymbol: opts.Bool(false)}))
		seen = true
	}
	if !seen {
		return chart{}
	}
	return chart{ID: "cmp_throughput", Title: "Throughput over time", c: line,
		Note: fmt.Sprintf("Each trace from its first I/O, in bins of up to %s (each trace's own).", units.Micros(widest*1e6))}
}
