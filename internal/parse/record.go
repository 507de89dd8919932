package parse

import (
	"fmt"

	"github.com/ioshape/ioshape/internal/event"
)

// Kind says what a Record holds.
type Kind uint8

const (
	KindEvent   Kind = iota + 1 // Event is set; its times are the tracer's raw clock
	KindLost                    // N events were lost by the tracer
	KindCounter                 // Name = N, a counter the tracer printed at exit
	KindFork                    // a traced task Pid forked Child
	KindExit                    // traced process Pid exited
	KindReady                   // the tracer has started
	KindNotice                  // a line with no data (a banner); Text holds it
	KindError                   // Err holds a syntax error
	KindWarning                 // Text is something the user should be told
	KindMark                    // the flush mark from CPU N: all it printed before is read
	KindSummary                 // Summary is set: a second of I/O counted in the kernel (record --summary); its Start is the tracer's raw clock
)

// Counter names a KindCounter record can carry.
const (
	CounterUnmatched  = "unmatched"    // completions whose issue was not seen
	CounterMapFull    = "map_full"     // in-flight I/Os the tracer had no room to track
	CounterStale      = "stale"        // in-flight entries overwritten before completion
	CounterUnfinished = "unfinished"   // requests issued whose completion was not seen
	CounterUnreaped   = "aio_unreaped" // async calls submitted whose reaping was not seen
	CounterProbeError = "probe_error"  // probe actions that failed at run time; Text says how
	CounterCorrupt    = "corrupt"      // a record that cannot be right was dropped; Text says why
)

// Record is one parsed line.
type Record struct {
	Kind    Kind
	Event   event.Event
	Summary *event.Summary
	N       int64
	Name    string
	Pid     int
	Child   int
	Text    string
	Err     *SyntaxError
}

// SyntaxError is a line the parser could not read.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}
