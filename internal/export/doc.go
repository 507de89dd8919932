// Package export writes a trace as input for other tools: fio's version 3
// iolog, which replays the recorded I/O. It does no I/O of its own beyond
// the writer it is given.
package export
