package webreport

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/units"
	"github.com/ioshape/ioshape/web"
)

type snippet = render.ChartSnippet

// Options change what a page shows and how it links.
type Options struct {
	// Nav adds the daemon's navigation bar (a report file has none: it
	// links nowhere).
	Nav bool
	// Top is how many matches the ranking shows.
	Top int
	// Nonce, if set, is put on every script so that a Content-Security-
	// Policy without 'unsafe-inline' lets them run (the daemon's pages).
	Nonce string
}

// Page is a built report or comparison, ready to write.
type Page struct {
	Title    string
	Subtitle string
	Banners  []Banner
	Nav      bool
	Charts   []chart
	nonce    string
	report   *reportView
	compare  *compareView
}

// Banner is a prominent notice: lost events, an incomplete recording, a
// backend that cannot see everything.
type Banner struct {
	Severe bool
	Title  string
	Items  []string
}

// ChartOptions returns each chart's ECharts options as JSON, by chart ID:
// the report's data, which golden tests pin down.
func (p *Page) ChartOptions() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, c := range p.Charts {
		out[c.ID] = json.RawMessage(c.snippet().Option)
	}
	return out
}

func (c chart) snippet() snippet {
	s := c.c.RenderSnippet()
	s.Option = strings.TrimSuffix(strings.TrimSpace(s.Option), ";")
	return s
}

// Write writes the page as one self-contained HTML document: ECharts, the
// style sheet and every chart's data are inline, so it opens offline and
// loads nothing from anywhere.
func (p *Page) Write(w io.Writer) error {
	return templates.ExecuteTemplate(w, "page", pageView{
		Title: p.Title, Subtitle: p.Subtitle, Banners: p.Banners, Nav: p.Nav, Nonce: p.nonce,
		CSS: template.CSS(web.CSS), ECharts: template.JS(web.ECharts),
		Report: p.report, Compare: p.compare,
	})
}

// templates are web/html's report and comparison templates, parsed once.
var templates = template.Must(template.ParseFS(web.HTML, "html/page.html", "html/report.html", "html/compare.html"))

// pageView is what the page template shows.
type pageView struct {
	Title, Subtitle string
	Banners         []Banner
	Nav             bool
	Nonce           string
	CSS             template.CSS
	ECharts         template.JS
	Report          *reportView
	Compare         *compareView
}

// chartView is a chart as the template shows it: go-echarts' element and
// script, which it generated and escaped itself.
type chartView struct {
	ID, Title, Note string
	Element         template.HTML
	Script          template.HTML
}

func (c chart) view(nonce string) chartView {
	s := c.snippet()
	script := s.Script
	if nonce != "" { // nonces are hex: nothing to escape
		script = strings.ReplaceAll(script, `<script type="text/javascript">`, `<script type="text/javascript" nonce="`+nonce+`">`)
	}
	return chartView{ID: c.ID, Title: c.Title, Note: c.Note, Element: template.HTML(s.Element), Script: template.HTML(script)}
}

// traceBanners are the notices a trace's metadata calls for.
func traceBanners(t report.TraceInfo) []Banner {
	var out []Banner
	if t.LostEvents > 0 || t.ParseErrors > 0 {
		b := Banner{Severe: true, Title: fmt.Sprintf("%s events were lost: every count and rate here is a lower bound.", units.Count(t.LostEvents))}
		if t.TracerLostEvents > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s dropped by the tracer's buffers", units.Count(t.TracerLostEvents)))
		}
		if t.MapOverflows > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s not tracked: the in-flight map was full", units.Count(t.MapOverflows)))
		}
		if t.ProbeMisses > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s probe firings skipped by the kernel", units.Count(t.ProbeMisses)))
		}
		if t.ProbeErrors > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s probe errors", units.Count(t.ProbeErrors)))
		}
		if t.ParseErrors > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s unreadable tracer lines", units.Count(t.ParseErrors)))
		}
		out = append(out, b)
	}
	if !t.Complete {
		out = append(out, Banner{Severe: true, Title: "The recording did not finish (the recorder was killed or crashed): this is everything it wrote before it stopped."})
	}
	if t.UnfinishedRequests > 0 {
		out = append(out, Banner{Title: fmt.Sprintf("Up to %s more block requests or asynchronous calls may be missing: issued, but their completion was not seen or could not be confirmed.", units.Count(t.UnfinishedRequests))})
	}
	if len(t.Fidelity) > 0 {
		out = append(out, Banner{Title: "Reduced fidelity: the " + t.Backend + " backend cannot see everything.", Items: t.Fidelity})
	}
	if len(t.Unavailable) > 0 {
		b := Banner{Title: "Not in this capture: these metrics are shown as n/a, not as zeros."}
		for _, u := range t.Unavailable {
			b.Items = append(b.Items, u.Metric+": "+u.Why)
		}
		out = append(out, b)
	}
	if len(t.Warnings) > 0 {
		out = append(out, Banner{Title: "Warnings", Items: t.Warnings})
	}
	return out
}

func subtitle(t report.TraceInfo) string {
	parts := []string{report.TargetText(t)}
	if t.Host != "" {
		parts = append(parts, "on "+t.Host)
	}
	if t.Start != nil {
		parts = append(parts, t.Start.UTC().Format(time.RFC3339))
	}
	if t.Backend != "" {
		parts = append(parts, "with "+t.Backend)
	}
	if t.Target.Summary {
		parts = append(parts, units.Micros(t.DurationS*1e6), "summary of "+units.Count(t.SummarizedIOs)+" I/Os")
	} else {
		parts = append(parts, units.Micros(t.DurationS*1e6), units.Count(t.Events)+" events")
	}
	return strings.Join(parts, " · ")
}
