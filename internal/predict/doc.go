// Package predict says how long a traced workload would take on another
// drive, from the trace and the drive's profile: the time the workload
// waited for the drive changes, everything else (computation, think time,
// cache hits, the order of its requests) stays. It does no I/O.
package predict
