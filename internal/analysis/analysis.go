package analysis

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
)

// Step is one read of a trace file, for progress output.
type Step struct {
	What     string // "reading", "classifying (2 of 3)"
	File     string
	Progress func() (done, total int64) // bytes read so far, of the file's size
}

// Watch is told when a pass starts, and returns a function called when it
// ends. It may be nil.
type Watch func(Step) (done func())

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

// unfinished is the warning for a trace whose recording did not finish.
const unfinished = "the recording did not finish (the recorder was killed or crashed): this is everything it wrote before it stopped"

// Profile reads a whole trace into a profile. A trace cut short by a crash
// is profiled as far as it goes, and says so.
func Profile(ctx context.Context, t *Trace, opts profile.Options, watch Watch) (*profile.Profile, error) {
	return profileWith(ctx, t, opts, watch, nil)
}

// profileWith is Profile, with also called on every event of the pass.
func profileWith(ctx context.Context, t *Trace, opts profile.Options, watch Watch, also func(*event.Event)) (*profile.Profile, error) {
	meta := t.Meta()
	if meta.Footer != nil && opts.Devices == nil {
		opts.Devices = meta.Footer.Devices
	}
	if meta.Footer != nil && meta.Footer.SyscallUntilNs > 0 {
		opts.SyscallPartial = true
	}
	if t.IsSummary() {
		b := profile.NewBuilder(opts)
		tail, err := t.Summaries(ctx, "reading", watch, b.AddSummary)
		p := b.Finish()
		if err != nil {
			return nil, err
		}
		p.Warnings = append(p.Warnings, tail.Warnings()...)
		return p, nil
	}
	// Each layer aggregated on a core of its own (the profile is the same).
	opts.Parallel = runtime.GOMAXPROCS(0) > 1
	b := profile.NewBuilder(opts)
	tail, err := t.Events(ctx, "reading", watch, func(e *event.Event) error {
		if also != nil {
			also(e)
		}
		b.Add(e)
		return nil
	})
	if err != nil {
		b.Finish() // ends its goroutines
		return nil, err
	}
	p := b.Finish()
	p.Warnings = append(p.Warnings, tail.Warnings()...)
	return p, nil
}

// Show profiles a trace for `show`.
func Show(ctx context.Context, t *Trace, opts profile.Options, watch Watch) (*report.Show, error) {
	p, err := Profile(ctx, t, opts, watch)
	if err != nil {
		return nil, err
	}
	return report.NewShow(t.Path(), t.Meta(), p), nil
}

// Classify ranks the catalog's patterns against a trace, in one read (a
// summary trace's rows are read three times).
func Classify(ctx context.Context, t *Trace, opts classify.Options, watch Watch) (*classify.Result, error) {
	if t.IsSummary() {
		return classify.ClassifySummary(summarySource(ctx, t, watch), classifyOptions(t, opts))
	}
	return classify.Classify(func(emit func(*event.Event)) error {
		_, err := t.Events(ctx, "classifying", watch, func(e *event.Event) error {
			emit(e)
			return nil
		})
		return err
	}, classifyOptions(t, opts))
}

// summarySource replays a summary trace's rows, as ClassifySummary reads
// them (three times, from the one open file).
func summarySource(ctx context.Context, t *Trace, watch Watch) classify.SummarySource {
	pass := 0
	return func(emit func(*event.Summary)) error {
		pass++
		_, err := t.Summaries(ctx, fmt.Sprintf("classifying (%d of 3)", min(pass, 3)), watch, emit)
		return err
	}
}

// classifyOptions completes opts with what the trace's footer says: a
// tracer degraded to the block layer left a syscall layer that covers the
// trace's start only, so the shape is the block layer's.
func classifyOptions(t *Trace, opts classify.Options) classify.Options {
	if m := t.Meta(); m.Footer != nil && m.Footer.SyscallUntilNs > 0 {
		opts.SyscallPartial = true
	}
	return opts
}

// Analyze profiles (with the time series) and classifies the trace —
// everything the reports show of it — and, given on, predicts it on that
// drive: all in one read of the trace.
func Analyze(ctx context.Context, t *Trace, popts profile.Options, copts classify.Options, on *PredictOn, watch Watch) (*report.Analysis, error) {
	popts.Series = true
	copts.ExcludeWriteback = popts.ExcludeWriteback
	copts = classifyOptions(t, copts)
	if t.IsSummary() {
		if on != nil {
			return nil, fmt.Errorf("%s: %w", t.Path(), ErrSummary)
		}
		p, err := profileWith(ctx, t, popts, watch, nil)
		if err != nil {
			return nil, err
		}
		a := &report.Analysis{Show: report.NewShow(t.Path(), t.Meta(), p)}
		a.Class, err = classify.ClassifySummary(summarySource(ctx, t, watch), copts)
		if errors.Is(err, classify.ErrNoIO) {
			return a, nil
		}
		return a, err
	}
	// One read: the profile, the classification and the prediction side
	// by side.
	pass := classify.NewPass(copts)
	also := pass.Add
	var model *predictRun
	if on != nil {
		model = newPredictRun(t.Meta(), nil, on.To, on.Known, on.On)
		also = func(e *event.Event) {
			pass.Add(e)
			model.add(e)
		}
	}
	p, err := profileWith(ctx, t, pass.Attach(popts), watch, also)
	if err != nil {
		return nil, err
	}
	a := &report.Analysis{Show: report.NewShow(t.Path(), t.Meta(), p)}
	a.Class, err = pass.Finish(p)
	if errors.Is(err, classify.ErrNoIO) {
		return a, nil
	}
	if err != nil {
		return nil, err
	}
	if model != nil {
		var r *predict.Ranking
		if a.Prediction, r, err = model.finish(ctx, t, a.Class, watch); err == nil {
			if len(r.Drives) > 1 {
				a.Drives = r
			}
		}
	}
	return a, err
}
