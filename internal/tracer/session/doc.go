// Package session is what every recording backend shares: a recording's
// configuration, target and result, the helper that runs the target
// command, and the one loop that drives a backend's tracer from start to
// finish (stream records, stop with grace, drain, count losses).
//
// A backend only starts its tracer and turns its output into records; it
// never runs a loop of its own.
package session
