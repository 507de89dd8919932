// Package webreport renders analyses as HTML: the report of one trace and
// the comparison of several, with charts built by go-echarts and ECharts
// itself inlined from package web, so a page is one self-contained file
// that works offline. Pages are deterministic: fixed chart IDs, no time of
// rendering. Nothing here computes statistics; it draws what profile and
// classify computed.
package webreport
