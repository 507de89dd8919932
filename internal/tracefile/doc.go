// Package tracefile reads and writes ioshape trace files (format described
// in FORMAT.md beside this file).
//
// A trace is a sequence of independently compressed chunks, so a reader
// streams it in constant memory and a file cut short by a crash still yields
// every chunk written before the cut. The writer flushes at least once a
// second and publishes a finished file by renaming it into place.
package tracefile
