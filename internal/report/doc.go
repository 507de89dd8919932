// Package report presents profiles: as text for a terminal and as JSON for
// scripts (and, later, as HTML). Every view is built from the same computed
// profile; nothing here computes statistics.
package report
