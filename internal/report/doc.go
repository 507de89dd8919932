// Package report presents profiles and classifications: as text for a
// terminal and as JSON for scripts (package webreport makes the HTML from
// the same values). Every view is built from the same computed profile;
// nothing here computes statistics or opens a trace file.
package report
