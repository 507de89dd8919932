// Package summarize turns a tracer's per-I/O events into the rows `record
// --summary` keeps — a second of one process's I/O in one direction on one
// device and layer, with its histograms — as the native eBPF programs make
// them in the kernel. The tracers that print each I/O (bpftrace, DTrace,
// fs_usage) are summarized here, as their events arrive, so that an
// hours-long recording on them is as small as a native one; what it costs
// to trace each I/O is the tracer's, unchanged.
package summarize
