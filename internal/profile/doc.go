// Package profile computes what a trace's I/O looks like — sizes, queue
// depth, latency, gaps, sequentiality, per process and per device — at the
// syscall layer (what was asked for) and the block layer (what the drive
// saw).
//
// A Builder takes events one at a time in file order and keeps memory
// bounded by the I/O rate, not the trace's length: events are re-sorted by
// arrival within a time window, distributions are log-bucketed histograms.
// It does no I/O and knows nothing of tracers or output formats.
package profile
