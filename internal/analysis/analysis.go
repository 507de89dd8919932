package analysis

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Pass is one read of a trace file, for progress output.
type Pass struct {
	What     string // "reading", "classifying (2 of 3)"
	File     string
	Progress func() (done, total int64) // bytes read so far, of the file's size
}

// Watch is told when a pass starts, and returns a function called when it
// ends. It may be nil.
type Watch func(Pass) (done func())

// checkEvery is how many events go by between looks at the context: often
// enough to stop within a second, rarely enough to cost nothing.
const checkEvery = 1 << 14

// Tail says how a trace ended: whether the recording finished, and what
// was cut from an unfinished one.
type Tail struct {
	Incomplete bool
	Cut        string // what the reader left out, for the user
}

// Warnings are what the user is told of a trace's end.
func (t Tail) Warnings() []string {
	var w []string
	if t.Incomplete {
		w = append(w, unfinished)
	}
	if t.Cut != "" {
		w = append(w, t.Cut)
	}
	return w
}

// Events calls fn for every event of the trace at path, in file order,
// until fn fails or ctx is cancelled (the error is then ctx's). meta is the
// trace's header and, if it finished, footer. The file is decoded on
// another goroutine, a batch ahead of fn (see decodeAhead).
func Events(ctx context.Context, path, what string, watch Watch, fn func(*event.Event) error) (meta tracefile.Meta, tail Tail, err error) {
	r, err := tracefile.Open(path)
	if err != nil {
		return tracefile.Meta{}, Tail{}, err
	}
	defer r.Close()
	if r.Summary() {
		return r.Meta(), Tail{}, fmt.Errorf("%s: %w", path, ErrSummary)
	}
	if watch != nil {
		defer watch(Pass{What: what, File: r.Name(), Progress: r.Progress})()
	}
	if err := decodeAhead(ctx, r, fn); err != nil {
		return r.Meta(), Tail{}, err
	}
	return r.Meta(), Tail{Incomplete: r.Incomplete(), Cut: r.CutNote()}, r.Err()
}

// ErrSummary is returned for a summary trace by what needs each I/O.
var ErrSummary = errors.New("recorded with --summary, the trace holds histograms per second, not the I/Os this needs: record again without --summary")

// Summaries calls fn for every row of a summary trace (record --summary),
// in file order; for a trace of events it calls nothing.
func Summaries(ctx context.Context, path, what string, watch Watch, fn func(*event.Summary)) (meta tracefile.Meta, tail Tail, err error) {
	r, err := tracefile.Open(path)
	if err != nil {
		return tracefile.Meta{}, Tail{}, err
	}
	defer r.Close()
	if watch != nil {
		defer watch(Pass{What: what, File: r.Name(), Progress: r.Progress})()
	}
	r.OnSummary(fn)
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return r.Meta(), Tail{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return r.Meta(), Tail{}, err
	}
	return r.Meta(), Tail{Incomplete: r.Incomplete(), Cut: r.CutNote()}, r.Err()
}

// IsSummary reports whether the trace at path was recorded with --summary.
func IsSummary(meta tracefile.Meta) bool { return meta.Header.Target.Summary }

// Meta reads a trace's header and footer without reading its events.
func Meta(path string) (tracefile.Meta, error) { return tracefile.ReadMeta(path) }

// unfinished is the warning for a trace whose recording did not finish.
const unfinished = "the recording did not finish (the recorder was killed or crashed): this is everything it wrote before it stopped"

// Profile reads a whole trace into a profile. A trace cut short by a crash
// is profiled as far as it goes, and says so.
func Profile(ctx context.Context, path string, opts profile.Options, watch Watch) (tracefile.Meta, *profile.Profile, error) {
	return profileWith(ctx, path, opts, watch, nil)
}

// profileWith is Profile, with also called on every event of the pass.
func profileWith(ctx context.Context, path string, opts profile.Options, watch Watch, also func(*event.Event)) (tracefile.Meta, *profile.Profile, error) {
	meta, err := tracefile.ReadMeta(path)
	if err != nil {
		return meta, nil, err
	}
	if meta.Footer != nil && opts.Devices == nil {
		opts.Devices = meta.Footer.Devices
	}
	if meta.Footer != nil && meta.Footer.SyscallUntilNs > 0 {
		opts.SyscallPartial = true
	}
	if IsSummary(meta) {
		b := profile.NewBuilder(opts)
		meta, tail, err := Summaries(ctx, path, "reading", watch, b.AddSummary)
		p := b.Finish()
		if err != nil {
			return meta, nil, err
		}
		p.Warnings = append(p.Warnings, tail.Warnings()...)
		return meta, p, nil
	}
	// Each layer aggregated on a core of its own (the profile is the same).
	opts.Parallel = runtime.GOMAXPROCS(0) > 1
	b := profile.NewBuilder(opts)
	meta, tail, err := Events(ctx, path, "reading", watch, func(e *event.Event) error {
		if also != nil {
			also(e)
		}
		b.Add(e)
		return nil
	})
	if err != nil {
		b.Finish() // ends its goroutines
		return meta, nil, err
	}
	p := b.Finish()
	p.Warnings = append(p.Warnings, tail.Warnings()...)
	return meta, p, nil
}

// Show profiles a trace for `show`.
func Show(ctx context.Context, path string, opts profile.Options, watch Watch) (*report.Show, error) {
	meta, p, err := Profile(ctx, path, opts, watch)
	if err != nil {
		return nil, err
	}
	return report.NewShow(path, meta, p), nil
}

// Classify ranks the catalog's patterns against a trace, in one read.
func Classify(ctx context.Context, path string, opts classify.Options, watch Watch) (tracefile.Meta, *classify.Result, error) {
	meta, err := tracefile.ReadMeta(path)
	if err != nil {
		return meta, nil, err
	}
	if IsSummary(meta) {
		res, err := classify.ClassifySummary(summarySource(ctx, path, watch), classifyOptions(path, opts))
		return meta, res, err
	}
	res, err := classify.Classify(func(emit func(*event.Event)) error {
		_, _, err := Events(ctx, path, "classifying", watch, func(e *event.Event) error {
			emit(e)
			return nil
		})
		return err
	}, classifyOptions(path, opts))
	return meta, res, err
}

// summarySource replays a summary trace's rows, as ClassifySummary reads
// them (three times).
func summarySource(ctx context.Context, path string, watch Watch) classify.SummarySource {
	pass := 0
	return func(emit func(*event.Summary)) error {
		pass++
		_, _, err := Summaries(ctx, path, fmt.Sprintf("classifying (%d of 3)", min(pass, 3)), watch, emit)
		return err
	}
}

// classifyOptions completes opts with what the trace's footer says: a
// tracer degraded to the block layer left a syscall layer that covers the
// trace's start only, so the shape is the block layer's.
func classifyOptions(path string, opts classify.Options) classify.Options {
	if m, err := Meta(path); err == nil && m.Footer != nil && m.Footer.SyscallUntilNs > 0 {
		opts.SyscallPartial = true
	}
	return opts
}

// Analyze profiles (with the time series) and classifies the trace at
// path: everything the reports show of it.
func Analyze(ctx context.Context, path string, popts profile.Options, copts classify.Options, watch Watch) (*report.Analysis, error) {
	popts.Series = true
	copts.ExcludeWriteback = popts.ExcludeWriteback
	copts = classifyOptions(path, copts)
	if m, err := Meta(path); err == nil && IsSummary(m) {
		meta, p, err := profileWith(ctx, path, popts, watch, nil)
		if err != nil {
			return nil, err
		}
		a := &report.Analysis{Show: report.NewShow(path, meta, p)}
		a.Class, err = classify.ClassifySummary(summarySource(ctx, path, watch), copts)
		if errors.Is(err, classify.ErrNoIO) {
			return a, nil
		}
		return a, err
	}
	// One read: the profile and the classification side by side.
	pass := classify.NewPass(copts)
	meta, p, err := profileWith(ctx, path, pass.Attach(popts), watch, pass.Add)
	if err != nil {
		return nil, err
	}
	a := &report.Analysis{Show: report.NewShow(path, meta, p)}
	a.Class, err = pass.Finish(p)
	if errors.Is(err, classify.ErrNoIO) {
		return a, nil
	}
	return a, err
}
