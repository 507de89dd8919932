package webreport

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/report"
)

// maxOffsetMaps is how many devices get an offset map (the busiest).
const maxOffsetMaps = 4

// Report builds the page for one analysed trace.
func Report(a *report.Analysis, o Options) *Page {
	if o.Top <= 0 {
		o.Top = 8
	}
	s := a.Show
	t := s.Trace
	p := &Page{Title: "Trace " + t.Name(), Subtitle: subtitle(t), Banners: traceBanners(t), Nav: o.Nav}
	if t.Label != "" && t.ID != "" {
		p.Title = fmt.Sprintf("%s (%s)", t.Label, t.ID)
	}
	var b strings.Builder
	add := func(c chart, ok bool) {
		if ok {
			p.Charts = append(p.Charts, c)
			b.WriteString(string(section(c)))
		}
	}

	// What it is, in a line, and the drive's verdict first: the question
	// people open the report with.
	if a.Class != nil {
		sh := a.Class.Shape
		fmt.Fprintf(&b, `<div class="headline">Shaped like <b>%s</b>: %s, %s by bytes, queue depth %s asked / %s at the drive, %s reads, %s idle <span class="muted">(%s layer)</span></div>`,
			esc(a.Class.Matches[0].Name), esc(sh.Access), esc(report.Bytes(sh.BlockSizeBytes)), esc(report.Num(sh.QueueDepth, 1)),
			esc(report.Num(sh.DeviceQueueDepth, 1)), esc(report.Percent(sh.ReadFraction)), esc(report.Percent(sh.IdleFraction)), esc(sh.Layer))
		if d := a.Class.Drive; d != nil {
			fmt.Fprintf(&b, `<div class="headline" id="drive-verdict">%s</div>`, esc(d.Headline.Note))
		}
	} else {
		b.WriteString(`<div class="headline">No reads or writes to classify.</div>`)
	}
	b.WriteString(`<div class="cards">`)
	for _, lp := range layers(s.Profile) {
		l := lp.l
		b.WriteString(card(lp.name+" I/Os", report.Count(l.IOs)))
		b.WriteString(card(lp.name+" bytes", report.Bytes(l.ReadBytes+l.WriteBytes)))
		b.WriteString(card(lp.name+" QD p50 / max", report.Num(l.QueueDepth.P50, 1)+" / "+report.Count(int64(l.QueueDepth.Max))))
		b.WriteString(card(lp.name+" latency p50 / p99", report.Micros(l.LatencyUs.P50)+" / "+report.Micros(l.LatencyUs.P99)))
	}
	b.WriteString(`</div>`)

	b.WriteString(`<h2>Sizes</h2><div class="grid2">`)
	for _, lp := range layers(s.Profile) {
		id := "sizes_asked"
		if lp.name == driveName {
			id = "sizes_drive"
		}
		add(sizeChart(id, lp), true)
	}
	b.WriteString(`</div><h2>Queue depth</h2><div class="grid2">`)
	add(depthTimeChart("depth_time", s.Profile))
	add(depthDistChart("depth_dist", s.Profile))
	b.WriteString(`</div><h2>Latency</h2>`)
	add(latencyChart("latency", s.Profile))
	b.WriteString(`<h2>Over time</h2>`)
	var phases []classify.Phase
	if a.Class != nil {
		phases = a.Class.Phases
	}
	add(throughputChart("throughput", s.Profile, phases))
	if s.Series != nil {
		maps := s.Series.Offsets
		if len(maps) > maxOffsetMaps {
			fmt.Fprintf(&b, `<p class="sub">Offset maps for the %d busiest of %d devices.</p>`, maxOffsetMaps, len(maps))
			maps = busiest(maps, maxOffsetMaps)
		}
		for i, m := range maps {
			add(offsetChart(fmt.Sprintf("offsets_%d", i), m), true)
		}
	}

	if a.Class != nil {
		b.WriteString(`<h2>Which benchmark it resembles</h2>`)
		add(rankingChart("ranking", a.Class, o.Top), true)
		b.WriteString(matchTable(a.Class, min(5, o.Top)))
		writeMixture(&b, a)
		if d := a.Class.Drive; d != nil {
			writeDrive(&b, a)
		}
	}
	b.WriteString(`<h2>Page cache</h2>`)
	add(layerBytesChart("layer_bytes", s.Profile))
	writeProcesses(&b, a)
	writeDevices(&b, a)
	p.Body = template.HTML(b.String())
	return p
}
