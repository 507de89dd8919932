// Package classify says which synthetic benchmark pattern a trace resembles,
// how closely and why, splits a trace into a mixture and into phases, and
// estimates what a workload would see on a drive given its benchmark
// results.
//
// Patterns are data (catalog.json). Their expected profiles are not written
// by hand: each pattern's I/O stream is simulated and run through the same
// profiler as a real trace, so a trace and a pattern are compared on equal
// terms. The package imports no process, network or presentation code.
package classify
