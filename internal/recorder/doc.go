// Package recorder runs one recording from start to finished trace file:
// it prepares the tracer session, creates the file, streams events into it
// and writes the footer with everything the session learned — losses
// included — whatever way the recording ends. The record command and the
// daemon both record through it.
package recorder
