// Package tracer prepares a recording on one of four backends, each in its
// own package — native (ioshape's eBPF programs), bpftrace, dtrace and
// fsusage — which all run in the one loop of package session: tracer
// output → parse records → events into a trace file sink.
//
// It owns everything about processes (the target command, pids, names,
// dropping caches) and nothing about statistics or presentation. To add a
// backend: a package with Prepare and a session.Tracer, and a case in
// Prepare.
package tracer
