// Package replay runs a recorded trace again on another drive with fio: it
// writes the trace as a fio job file (its shape) or iolog (its I/O, per
// thread where threads ran side by side), lays out the files fio needs, and
// sets the replay's recorded shape beside the original's. Recording the
// replay is the caller's (cli's record machinery); everything else is here.
package replay
