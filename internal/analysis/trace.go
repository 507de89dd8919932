package analysis

import (
	"context"
	"errors"
	"fmt"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Trace is one trace file, opened once: its header and footer, and its
// events (or a summary's rows) for each pass a command makes over them.
// Every step here reads from a Trace, never from a path, so a command
// opens its trace once; the steps that need the events run in one pass.
type Trace struct {
	path string
	r    *tracefile.Reader
	read bool // the reader is spent: the next pass starts again
}

// Open opens the trace at path and reads its header and footer.
func Open(path string) (*Trace, error) {
	r, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	return &Trace{path: path, r: r}, nil
}

// Path is the trace's file.
func (t *Trace) Path() string { return t.path }

// Meta is the trace's header and, if the recording finished, its footer.
func (t *Trace) Meta() tracefile.Meta { return t.r.Meta() }

// IsSummary reports whether the trace was recorded with --summary.
func (t *Trace) IsSummary() bool { return t.r.Summary() }

// Close closes the file.
func (t *Trace) Close() error { return t.r.Close() }

// reader is the trace's reader at the start of its events: the open one
// for the first pass, the same file read again for each one after.
func (t *Trace) reader() (*tracefile.Reader, error) {
	if t.read {
		r, err := t.r.Again()
		t.r = r
		if err != nil {
			return nil, err
		}
	}
	t.read = true
	return t.r, nil
}

// Events calls fn for every event of the trace, in file order, until fn
// fails or ctx is cancelled (the error is then ctx's). The file is decoded
// on another goroutine, a batch ahead of fn (see decodeAhead).
func (t *Trace) Events(ctx context.Context, what string, watch Watch, fn func(*event.Event) error) (Tail, error) {
	if t.IsSummary() {
		return Tail{}, fmt.Errorf("%s: %w", t.path, ErrSummary)
	}
	r, err := t.reader()
	if err != nil {
		return Tail{}, err
	}
	if watch != nil {
		defer watch(Step{What: what, File: r.Name(), Progress: r.Progress})()
	}
	if err := decodeAhead(ctx, r, fn); err != nil {
		return Tail{}, err
	}
	return Tail{Incomplete: r.Incomplete(), Cut: r.CutNote()}, r.Err()
}

// Summaries calls fn for every row of a summary trace (record --summary),
// in file order; for a trace of events it calls nothing.
func (t *Trace) Summaries(ctx context.Context, what string, watch Watch, fn func(*event.Summary)) (Tail, error) {
	r, err := t.reader()
	if err != nil {
		return Tail{}, err
	}
	if watch != nil {
		defer watch(Step{What: what, File: r.Name(), Progress: r.Progress})()
	}
	r.OnSummary(fn)
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return Tail{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Tail{}, err
	}
	return Tail{Incomplete: r.Incomplete(), Cut: r.CutNote()}, r.Err()
}

// ErrSummary is returned for a summary trace by what needs each I/O.
var ErrSummary = errors.New("recorded with --summary, the trace holds histograms per second, not the I/Os this needs: record again without --summary")
