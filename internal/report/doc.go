// Package report presents profiles and classifications. Its documents —
// Show, Analysis, Comparison (show.go, analysis.go, compare.go) — are the
// values every view is built from, and what --json prints; the *_text.go
// files render them for a terminal (package webreport makes the HTML from
// the same documents, package units writes their quantities). Nothing here
// computes statistics or opens a trace file.
package report
