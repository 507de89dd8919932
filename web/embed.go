// Package web holds the browser side of ioshape: ECharts (Apache-2.0, see
// echarts-LICENSE and echarts-NOTICE), shipped inside the binary so that
// reports work offline and the daemon loads nothing from elsewhere, and the
// style sheet and script of the report and daemon pages.
package web

import "embed"

// ECharts is echarts.min.js 5.4.3, the version go-echarts v2.6 targets.
//
//go:embed echarts.min.js
var ECharts string

// CSS styles reports and the daemon's pages.
//
//go:embed style.css
var CSS string

// AppJS runs the daemon's pages: the sortable trace list, the recording
// form and its live progress.
//
//go:embed app.js
var AppJS string

// HTML holds the page templates (html/template syntax): the layout of a
// report or comparison, their bodies, and the daemon's trace list. They are
// parsed once, by the packages that render them.
//
//go:embed html/*.html
var HTML embed.FS
