// Package native records with ioshape's own eBPF programs
// (dscripts/ebpf/ioshape.bpf.c, compiled by bpf2go and committed): it loads
// them with cilium/ebpf, attaches them to BTF tracepoints, and reads binary
// records from a ring buffer for the session loop. It owns the programs'
// kernel resources and releases them when a recording ends.
package native
