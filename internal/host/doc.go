// Package host answers questions about the machine ioshape runs on — its
// devices and their mounts, which devices are bio-based, a process's I/O
// cgroup, which processes exist or have a name, its kernel and monotonic
// clock — and drops its page cache, one file per operating system as
// node_exporter splits its collectors. The recording loop, the recorder and
// bench ask it; it knows nothing of tracing.
package host
