// Package fsusage records with macOS's fs_usage (kdebug, which System
// Integrity Protection does not restrict): it starts fs_usage for a
// target, and turns its disk lines into records on the monotonic clock for
// the session loop, alone or beside DTrace.
package fsusage
