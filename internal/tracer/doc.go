// Package tracer records with one of four backends and streams what it
// sees, through the parser, into a trace file: the native backend loads
// ioshape's own eBPF programs (dscripts/ebpf, compiled by bpf2go) and reads
// binary records from a ring buffer; bpftrace, dtrace and fs_usage are
// external tracers whose text output is parsed, stopped cleanly with SIGINT
// first (so they print their final counters) and a kill only after a grace
// period.
//
// It owns everything about processes — the target command, pids, names,
// dropping caches — and nothing about statistics or presentation.
package tracer
