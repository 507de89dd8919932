package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// passTraces are a real recording and a generated one with four actors.
func passTraces(t *testing.T) []string {
	t.Helper()
	synth := filepath.Join(t.TempDir(), "synth.iotrace")
	writeSynthetic(t, synth, 50_000)
	return []string{testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace"), synth}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Events decodes a batch ahead on another goroutine: the events, their
// order and the trace's tail are those of reading the file directly.
func TestEventsDecodeAhead(t *testing.T) {
	for _, path := range passTraces(t) {
		want := fileEvents(t, path)
		i := 0
		tail, err := openT(t, path).Events(context.Background(), "reading", nil, func(e *event.Event) error {
			if i >= len(want) || *e != want[i] {
				t.Fatalf("%s: event %d differs: %+v", path, i, *e)
			}
			i++
			return nil
		})
		if err != nil || i != len(want) || tail.Incomplete {
			t.Errorf("%s: %d of %d events, err %v, tail %+v", path, i, len(want), err, tail)
		}
		// Stopping early returns the function's error, and leaves no
		// decoder running on a closed reader.
		stop := errors.New("enough")
		n := 0
		if _, err := openT(t, path).Events(context.Background(), "reading", nil, func(*event.Event) error {
			if n++; n == 5000 {
				return stop
			}
			return nil
		}); !errors.Is(err, stop) && len(want) >= 5000 {
			t.Errorf("%s: early stop gave %v", path, err)
		}
	}
}

// A report's analysis reads the trace once, and so does classify: the
// report's classification is the one classify makes alone, and its
// profile is show's.
func TestAnalyzeAndClassifyReadOnce(t *testing.T) {
	ctx := context.Background()
	var reads int
	watch := func(Step) func() {
		reads++
		return func() {}
	}
	for _, path := range passTraces(t) {
		for _, wb := range []bool{false, true} {
			reads = 0
			a, err := Analyze(ctx, openT(t, path), profile.Options{ExcludeWriteback: wb}, classify.Options{}, nil, watch)
			if err != nil {
				t.Fatal(err)
			}
			if reads != 1 {
				t.Errorf("%s: a report read the trace %d times", path, reads)
			}
			reads = 0
			alone, err := Classify(ctx, openT(t, path), classify.Options{ExcludeWriteback: wb}, watch)
			if err != nil {
				t.Fatal(err)
			}
			if reads != 1 {
				t.Errorf("%s: classify read the trace %d times", path, reads)
			}
			if got, want := asJSON(t, a.Class), asJSON(t, alone); got != want {
				t.Errorf("%s (exclude writeback %v): report's classification differs from classify's:\n%s\n%s", path, wb, got, want)
			}
			show, err := Show(ctx, openT(t, path), profile.Options{ExcludeWriteback: wb}, nil)
			if err != nil {
				t.Fatal(err)
			}
			a.Show.Profile.Series = nil
			if got, want := asJSON(t, a.Show), asJSON(t, show); got != want {
				t.Errorf("%s: report's profile differs from show's", path)
			}
		}
	}
}

// show aggregates each layer on its own goroutine: its profile is the one
// a single goroutine builds.
func TestShowParallelSameAsSerial(t *testing.T) {
	ctx := context.Background()
	for _, path := range passTraces(t) {
		for _, wb := range []bool{false, true} {
			show, err := Show(ctx, openT(t, path), profile.Options{ExcludeWriteback: wb}, nil)
			if err != nil {
				t.Fatal(err)
			}
			meta, err := tracefile.ReadMeta(path)
			if err != nil {
				t.Fatal(err)
			}
			opts := profile.Options{ExcludeWriteback: wb}
			if meta.Footer != nil {
				opts.Devices = meta.Footer.Devices
			}
			serial := profile.NewBuilder(opts)
			tail, err := openT(t, path).Events(ctx, "reading", nil, func(e *event.Event) error {
				serial.Add(e)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			p := serial.Finish()
			p.Warnings = append(p.Warnings, tail.Warnings()...)
			if got, want := asJSON(t, show.Profile), asJSON(t, p); got != want {
				t.Errorf("%s (exclude writeback %v): parallel show differs from one goroutine's:\n%s\n%s", path, wb, got, want)
			}
		}
	}
}

// On one core (GOMAXPROCS=1) everything runs on one goroutine: the same
// show, classification and report as on two.
func TestOneCoreSameAsTwo(t *testing.T) {
	ctx := context.Background()
	run := func(path string) (show, class, analysis string) {
		s, err := Show(ctx, openT(t, path), profile.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Classify(ctx, openT(t, path), classify.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Analyze(ctx, openT(t, path), profile.Options{ExcludeWriteback: true}, classify.Options{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return asJSON(t, s), asJSON(t, c), asJSON(t, a)
	}
	for _, path := range passTraces(t) {
		prev := runtime.GOMAXPROCS(1)
		s1, c1, a1 := run(path)
		runtime.GOMAXPROCS(max(2, prev))
		s2, c2, a2 := run(path)
		runtime.GOMAXPROCS(prev)
		if s1 != s2 || c1 != c2 || a1 != a2 {
			t.Errorf("%s: one core and two differ: show %v, classify %v, report %v", path, s1 == s2, c1 == c2, a1 == a2)
		}
	}
}

// predict reads the trace once too: the model, and the classification
// that names its phases, side by side.
func TestPredictReadsOnce(t *testing.T) {
	d, err := drive.Coarse("test", []float64{3000, 1500, 800, 50}, []float64{2500, 1400, 700, 120})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range passTraces(t) {
		var reads int
		rk, err := Predict(context.Background(), openT(t, path), nil, []*drive.Spec{d}, nil, nil, func(Step) func() {
			reads++
			return func() {}
		})
		if err != nil {
			t.Fatal(err)
		}
		res := rk.Drives[0]
		if reads != 1 || len(res.Phases) == 0 {
			t.Errorf("%s: predict read the trace %d times, named %d phases", path, reads, len(res.Phases))
		}
	}
}

// openT opens the trace at path for the test, closed when it ends.
func openT(tb testing.TB, path string) *Trace {
	tb.Helper()
	tr, err := Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tr.Close() })
	return tr
}
