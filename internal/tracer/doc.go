// Package tracer starts a system tracer (bpftrace on Linux), streams its
// output through the parser into a trace file, and stops it cleanly: SIGINT
// first, so the tracer prints its final counters, and a kill only after a
// grace period.
//
// It owns everything about processes — the target command, pids, names,
// dropping caches — and nothing about statistics or presentation.
package tracer
