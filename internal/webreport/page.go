package webreport

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/report"
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
}

// Page is a rendered report or comparison, ready to write.
type Page struct {
	Title    string
	Subtitle string
	Banners  []Banner
	Body     template.HTML
	Charts   []chart
	Nav      bool
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
	return pageTemplate.Execute(w, map[string]any{"Page": p, "ECharts": template.JS(web.ECharts), "CSS": template.CSS(web.CSS)})
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Page.Title}} — ioshape</title>
<link rel="icon" href="data:,">
<style>{{.CSS}}</style>
<script>{{.ECharts}}</script>
</head>
<body>
{{if .Page.Nav}}<header class="top"><a class="brand" href="/">ioshape</a><a href="/">traces</a></header>{{end}}
<main>
<h1>{{.Page.Title}}</h1>
<p class="sub">{{.Page.Subtitle}}</p>
{{range .Page.Banners}}<div class="banner {{if .Severe}}bad{{else}}warn{{end}}" role="alert">{{.Title}}{{if .Items}}<ul>{{range .Items}}<li>{{.}}</li>{{end}}</ul>{{end}}</div>
{{end}}
{{.Page.Body}}
</main>
<script>
"use strict";
// Charts are created as the page is parsed, before the grid has all its
// columns; size them to their final boxes.
function ioshapeResize() {
  document.querySelectorAll("div[_echarts_instance_]").forEach(function (el) { echarts.getInstanceByDom(el).resize(); });
}
window.addEventListener("load", ioshapeResize);
window.addEventListener("resize", ioshapeResize);
</script>
</body>
</html>
`))

// section renders a heading, its note and the chart.
func section(c chart) template.HTML {
	s := c.snippet()
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="chart" data-chart="%s"><h3>%s</h3>`, template.HTMLEscapeString(c.ID), template.HTMLEscapeString(c.Title))
	if c.Note != "" {
		fmt.Fprintf(&b, `<p class="sub">%s</p>`, template.HTMLEscapeString(c.Note))
	}
	b.WriteString(s.Element)
	b.WriteString(s.Script)
	b.WriteString("</div>\n")
	return template.HTML(b.String())
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// matchTable explains the top matches dimension by dimension.
func matchTable(r *classify.Result, top int) string {
	var b strings.Builder
	b.WriteString(`<table class="matches"><tr><th>#</th><th>pattern</th><th class="num">score</th><th>dimension</th><th>this trace</th><th>pattern</th><th>similarity</th><th>why</th></tr>`)
	for i, m := range r.Matches {
		if i == top {
			break
		}
		name := esc(m.Name)
		if !m.Verified {
			name += ` <span class="muted">(parameters unverified)</span>`
		}
		for j, d := range m.Dimensions {
			b.WriteString("<tr>")
			if j == 0 {
				fmt.Fprintf(&b, `<td rowspan="%d">%d</td><td rowspan="%d">%s<br><span class="muted">%s</span></td><td rowspan="%d" class="num">%.2f</td>`,
					len(m.Dimensions), i+1, len(m.Dimensions), name, esc(m.Family), len(m.Dimensions), m.Score)
			}
			fmt.Fprintf(&b, `<td>%s</td><td>%s</td><td>%s</td><td><span class="sim" style="width:%dpx"></span> %.2f</td><td>%s</td></tr>`,
				esc(d.Name), esc(d.Trace), esc(d.Pattern), int(d.Similarity*60), d.Similarity, esc(d.Why))
		}
	}
	b.WriteString("</table>")
	return b.String()
}

func card(k, v string) string {
	return fmt.Sprintf(`<div class="card"><div class="k">%s</div><div class="v">%s</div></div>`, esc(k), esc(v))
}

// traceBanners are the notices a trace's metadata calls for.
func traceBanners(t report.TraceInfo) []Banner {
	var out []Banner
	if t.LostEvents > 0 || t.ParseErrors > 0 {
		b := Banner{Severe: true, Title: fmt.Sprintf("%s events were lost: every count and rate here is a lower bound.", report.Count(t.LostEvents))}
		if t.TracerLostEvents > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s dropped by the tracer's buffers", report.Count(t.TracerLostEvents)))
		}
		if t.MapOverflows > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s not tracked: the in-flight map was full", report.Count(t.MapOverflows)))
		}
		if t.ProbeMisses > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s probe firings skipped by the kernel", report.Count(t.ProbeMisses)))
		}
		if t.ProbeErrors > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s probe errors", report.Count(t.ProbeErrors)))
		}
		if t.ParseErrors > 0 {
			b.Items = append(b.Items, fmt.Sprintf("%s unreadable tracer lines", report.Count(t.ParseErrors)))
		}
		out = append(out, b)
	}
	if !t.Complete {
		out = append(out, Banner{Severe: true, Title: "The recording did not finish (the recorder was killed or crashed): this is everything it wrote before it stopped."})
	}
	if t.UnfinishedRequests > 0 {
		out = append(out, Banner{Title: fmt.Sprintf("Up to %s more block requests may be missing: issued, but their completion was not seen or could not be confirmed.", report.Count(t.UnfinishedRequests))})
	}
	if len(t.Fidelity) > 0 {
		out = append(out, Banner{Title: "Reduced fidelity: the " + t.Backend + " backend cannot see everything.", Items: t.Fidelity})
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
	if !t.Start.IsZero() {
		parts = append(parts, t.Start.UTC().Format(time.RFC3339))
	}
	if t.Backend != "" {
		parts = append(parts, "with "+t.Backend)
	}
	parts = append(parts, report.Micros(t.DurationS*1e6), report.Count(t.Events)+" events")
	return strings.Join(parts, " · ")
}
