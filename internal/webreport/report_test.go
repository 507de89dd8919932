package webreport

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
	"github.com/ioshape/ioshape/web"
)

const (
	realTrace  = "../../testdata/traces/cp-cat-dd.iotrace"
	otherTrace = "../../testdata/traces/fio-rnd4k.iotrace"
)

func analyze(t testing.TB, path string) *report.Analysis {
	t.Helper()
	tr, err := analysis.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	a, err := analysis.Analyze(context.Background(), tr, profile.Options{}, classify.Options{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// golden compares got with a file under testdata/golden, or rewrites it
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, testutil.Repo(t, "testdata", "golden", name), got)
}

func indent(t *testing.T, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// The report's data — every chart's options — pinned for a real trace.
func TestGoldenReportOptions(t *testing.T) {
	p := Report(analyze(t, realTrace), Options{})
	opts := p.ChartOptions()
	for _, id := range []string{"sizes_asked", "sizes_drive", "depth_time", "depth_dist", "latency", "throughput", "offsets_0", "ranking", "layer_bytes"} {
		if _, ok := opts[id]; !ok {
			t.Errorf("no chart %q (have %d charts)", id, len(opts))
		}
	}
	golden(t, "report-options-cp-cat-dd.json", indent(t, opts))
}

// Two different real traces side by side: a cp/cat/dd session against 4
// KiB random reads (a trace against itself would hide a series swapped
// between them).
func TestGoldenCompareOptions(t *testing.T) {
	as := []*report.Analysis{analyze(t, realTrace), analyze(t, otherTrace)}
	p := Compare(as, report.Compare(as), Options{})
	golden(t, "compare-options-cp-cat-dd-fio-rnd4k.json", indent(t, p.ChartOptions()))
}

// A report is one file that loads nothing and renders the same bytes for
// the same trace.
func TestReportSelfContainedAndDeterministic(t *testing.T) {
	a := analyze(t, realTrace)
	var one, two bytes.Buffer
	if err := Report(a, Options{}).Write(&one); err != nil {
		t.Fatal(err)
	}
	if err := Report(analyze(t, realTrace), Options{}).Write(&two); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Fatal("two renderings of the same trace differ")
	}
	page := one.String()
	if !strings.Contains(page, web.ECharts) {
		t.Fatal("ECharts is not inlined")
	}
	rest := strings.Replace(page, web.ECharts, "", 1)
	for _, bad := range []string{"://", "<script src", "stylesheet", "@import"} {
		if strings.Contains(rest, bad) {
			i := strings.Index(rest, bad)
			t.Errorf("the report refers outside itself (%q): …%s…", bad, rest[max(0, i-80):min(len(rest), i+80)])
		}
	}
	for id := range Report(a, Options{}).ChartOptions() {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("chart %s has no element", id)
		}
	}
}

func TestBannersForLossAndFidelity(t *testing.T) {
	a := analyze(t, realTrace)
	a.Show.Trace.LostEvents, a.Show.Trace.ProbeMisses = 1234, 1234
	a.Show.Trace.Complete = false
	var b bytes.Buffer
	if err := Report(a, Options{}).Write(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"1,234 events were lost", "1,234 probe firings skipped", "did not finish", "Reduced fidelity"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report has no %q banner", want)
		}
	}
}

// syntheticSource is a long random-read workload on four disks: the worst
// case for a report's size (every time bin and offset cell in use).
func syntheticSource(n int) classify.Source {
	return func(emit func(*event.Event)) error {
		rng := rand.New(rand.NewPCG(1, 2))
		var e event.Event
		for i := range n {
			start := int64(i) * 50e3 // 50 µs apart: 500 s for 10 M
			e = event.Event{Layer: event.Block, Op: event.Read, Start: start, End: start + 180e3, Size: 4096, Bytes: 4096,
				Offset: rng.Int64N(1<<28) * 4096, Dev: event.Dev{Major: 259, Minor: uint32(i % 4)}, Pid: uint32(100 + i%7), Comm: "fio",
				Flags: event.FlagDispatched}
			e.Dispatch = e.Start
			if i%3 == 0 {
				e.Layer, e.Flags = event.Syscall, 0
			}
			emit(&e)
		}
		return nil
	}
}

// A 10 M-event trace makes a report of at most 5 MB: the profile's series
// and offset maps are bounded, whatever the trace's length.
func TestTenMillionEventReportSize(t *testing.T) {
	n := testutil.LargeEvents()
	src := syntheticSource(n)
	b := profile.NewBuilder(profile.Options{Series: true})
	src(b.Add)
	p := b.Finish()
	res, err := classify.Classify(src, classify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := &report.Analysis{Show: report.NewShow("synthetic", tracefile.Meta{}, p), Class: res}
	var out bytes.Buffer
	if err := Report(a, Options{}).Write(&out); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events: report %.2f MB (ECharts %.2f MB of it), %d offset maps", n, float64(out.Len())/1e6, float64(len(web.ECharts))/1e6, len(p.Series.Offsets))
	if keepBigReport != "" {
		os.WriteFile(keepBigReport, out.Bytes(), 0o644)
	}
	if out.Len() > 5e6 {
		t.Fatalf("report is %.2f MB, over 5 MB", float64(out.Len())/1e6)
	}
	if !strings.Contains(out.String(), "Cells were widened") || !strings.Contains(out.String(), "widened to keep the chart small") {
		t.Error("the report does not say that it aggregated")
	}
}

func init() {
	// IOSHAPE_BIG_REPORT=FILE keeps the 10 M-event report, to time its
	// rendering in a browser.
	if path := os.Getenv("IOSHAPE_BIG_REPORT"); path != "" {
		keepBigReport = path
	}
}

var keepBigReport string
