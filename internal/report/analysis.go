package report

import (
	"errors"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Analysis is everything the reports show of one trace: its profile (with
// the time series) and its classification.
type Analysis struct {
	Show *Show `json:"show"`
	// Class is nil when the trace holds no read or write.
	Class *classify.Result `json:"classification,omitempty"`
}

// Watch is told when a pass over a trace file starts, and returns a
// function called when it ends (for progress output); it may be nil.
type Watch func(r *tracefile.Reader, what string) (done func())

// Analyze profiles and classifies the trace at path: four passes, one for
// the profile and three for the classification.
func Analyze(path string, popts profile.Options, copts classify.Options, watch Watch) (*Analysis, error) {
	if watch == nil {
		watch = func(*tracefile.Reader, string) func() { return func() {} }
	}
	popts.Series = true
	r, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	done := watch(r, "profiling")
	meta, p, err := profile.FromReader(r, popts)
	done()
	r.Close()
	if err != nil {
		return nil, err
	}
	a := &Analysis{Show: NewShow(path, meta, p)}
	copts.ExcludeWriteback = popts.ExcludeWriteback
	pass := 0
	src := func(emit func(*event.Event)) error {
		r, err := tracefile.Open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		pass++
		defer watch(r, []string{"classifying (1 of 3)", "classifying (2 of 3)", "classifying (3 of 3)"}[min(pass, 3)-1])()
		for r.Next() {
			emit(r.Event())
		}
		return r.Err()
	}
	a.Class, err = classify.Classify(src, copts)
	if errors.Is(err, classify.ErrNoIO) {
		return a, nil
	}
	return a, err
}

// Name is how views title a trace: its label, else its ID, else its path.
func (t TraceInfo) Name() string {
	switch {
	case t.Label != "":
		return t.Label
	case t.ID != "":
		return t.ID
	}
	return t.Path
}
