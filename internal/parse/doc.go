// Package parse turns tracer output (text lines) into events, one line at a
// time and in constant memory.
//
// Readers follow the Scanner shape: Scan advances, Record returns what was
// read, Err reports a failure of the underlying reader. A malformed line is
// not an error that stops the stream: it comes back in-band as a Record
// holding a *SyntaxError, so a caller can count it and carry on.
//
// Parsers see only an io.Reader, never a process; they have no build tags
// and are tested on every OS.
package parse
