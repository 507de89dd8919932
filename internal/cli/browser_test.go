//go:build e2e

package cli

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// These tests open the daemon's pages and a report file in a real headless
// Chromium (Debian's package) and check what a user would see: every chart
// painted, no console errors, no request off the machine. Screenshots are
// kept in $IOSHAPE_ARTIFACTS (default: artifacts/ at the repository root).

func requireChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium, and CI=true: browser tests must run (apt-get install chromium)")
	}
	t.Skip("no Chromium installed")
	return ""
}

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("IOSHAPE_ARTIFACTS")
	if dir == "" {
		dir = "../../artifacts"
	}
	dir = filepath.Join(dir, "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is a headless Chromium tab that records every request, console
// error and uncaught exception.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	errors   []string
}

func newBrowser(t *testing.T, chrome string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1300, 900),
		// This machine's network is closed: keep Chromium from calling home.
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, fmt.Sprintf("exception: %s at %s:%d", e.ExceptionDetails.Text, e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				b.errors = append(b.errors, "console.error: "+strings.Join(parts, " "))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				b.errors = append(b.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		call(ctx, network.Enable, network.EnableParams{}),
		call(ctx, runtime.Enable, cdp.Empty{}),
		call(ctx, log.Enable, cdp.Empty{}),
	} {
		if err != nil {
			t.Fatalf("DevTools: %v", err)
		}
	}
	return b
}

func call[P, R any](ctx context.Context, cmd cdp.Command[P, R], p P) error {
	_, err := chromedp.Call(ctx, cmd, p)
	return err
}

// chartState is what the page says about its charts.
type chartState struct {
	Sections int      `json:"sections"`
	Charts   int      `json:"charts"`
	Empty    []string `json:"empty"`
}

// chartsJS finds every ECharts instance and whether its canvas has a
// painted pixel.
const chartsJS = `(() => {
  const els = Array.from(document.querySelectorAll("div[_echarts_instance_]"));
  const out = {sections: document.querySelectorAll("[data-chart]").length, charts: els.length, empty: []};
  for (const el of els) {
    const c = el.querySelector("canvas");
    let painted = false;
    if (c && c.width > 0 && c.height > 0) {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < d.length; i += 4) { if (d[i] !== 0) { painted = true; break; } }
    }
    if (!painted) out.empty.push(el.id);
  }
  return out;
})()`

// open loads a page, waits until every chart has painted, and keeps a
// screenshot. It returns how long the page took to show its charts.
func (b *browser) open(t *testing.T, url, shot string, wantCharts int) time.Duration {
	t.Helper()
	start := time.Now()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	var st chartState
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		st, err = chromedp.Run(b.ctx, chromedp.Evaluate[chartState](chartsJS))
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if st.Charts == st.Sections && len(st.Empty) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	if st.Charts != st.Sections || st.Charts < wantCharts || len(st.Empty) > 0 {
		t.Errorf("%s: %d of %d chart sections initialised (want at least %d); empty canvases: %v", url, st.Charts, st.Sections, wantCharts, st.Empty)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(artifactsDir(t), shot+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d charts in %v; screenshot %s", url, st.Charts, took.Round(time.Millisecond), path)
	return took
}

// check fails on any console error, exception, or request that left base.
func (b *browser) check(t *testing.T, allowed ...string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		t.Errorf("browser error: %s", e)
	}
	if len(b.requests) == 0 {
		t.Error("no requests seen: the network listener is not working")
	}
	for _, u := range b.requests {
		ok := strings.HasPrefix(u, "data:")
		for _, a := range allowed {
			ok = ok || strings.HasPrefix(u, a)
		}
		if !ok {
			t.Errorf("request off the machine: %s", u)
		}
	}
	b.requests, b.errors = nil, nil
}

// startServe runs `ioshape serve` on a free port and returns its URL.
func startServe(t *testing.T, env []string, args ...string) (string, *exec.Cmd, *lockedBuffer) {
	t.Helper()
	c := ioshapeCmd(env, append(args, "serve", "--addr", "127.0.0.1:0")...)
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb lockedBuffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v; stderr: %s", err, errb.String())
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[1], "http://127.0.0.1:") || !strings.Contains(f[1], "/?token=") {
		t.Fatalf("serve printed %q, want a sign-in URL", line)
	}
	base, _, _ := strings.Cut(f[1], "/?token=")
	signInURLs.Store(base, f[1])
	// Go clients in these tests sign in once, as a browser does: the cookie
	// stays in the default client's jar.
	res, err := http.Get(f[1])
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("signing in with %s: %s", f[1], res.Status)
	}
	return base, c, &errb
}

// signInURLs maps a daemon's base URL to the sign-in URL it printed.
var signInURLs sync.Map

func signInURL(base string) string {
	u, _ := signInURLs.Load(base)
	return u.(string)
}

func init() {
	jar, _ := cookiejar.New(nil)
	http.DefaultClient.Jar = jar
}

// storeWithTraces makes a store holding copies of the real trace.
func storeWithTraces(t *testing.T, ids ...string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
	data, err := os.ReadFile("../../testdata/traces/cp-cat-dd.iotrace")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := os.WriteFile(filepath.Join(dir, "traces", id+store.Ext), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBrowserDaemonPages(t *testing.T) {
	chrome := requireChromium(t)
	st := storeWithTraces(t, "abc234", "xyz789")
	base, _, _ := startServe(t, nil, "--store", st)
	b := newBrowser(t, chrome)

	// Signing in through the printed URL leads to the list.
	b.open(t, signInURL(base), "daemon-list", 0)
	rows, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#traces tbody tr[data-id]").length`))
	if err != nil || rows != 2 {
		t.Fatalf("trace list has %d rows (%v), want 2", rows, err)
	}
	// Sort by a column, tick both traces and press Compare: the compare page opens.
	if err := chromedp.Do(b.ctx,
		chromedp.Click(`th[data-key="id"]`), chromedp.Click(`th[data-key="id"]`),
		chromedp.Click(`input.pick[value="abc234"]`), chromedp.Click(`input.pick[value="xyz789"]`), chromedp.Click(`#compare`),
	); err != nil {
		t.Fatal(err)
	}
	first, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("#traces tbody tr") ? "" : location.pathname + location.search`))
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && !strings.HasPrefix(first, "/compare") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		first, err = chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.pathname + location.search`))
	}
	if !strings.HasPrefix(first, "/compare?ids=") {
		t.Fatalf("pressing Compare led to %q (%v)", first, err)
	}

	b.open(t, base+"/traces/abc234", "daemon-report", 8)
	b.open(t, base+"/compare?ids=abc234,xyz789", "daemon-compare", 4)
	b.check(t, base+"/")
}

// A report written by 'ioshape report' opens from a file, offline, and a
// 10 M-event trace's report renders in a few seconds.
func TestBrowserReportFiles(t *testing.T) {
	chrome := requireChromium(t)
	dir := t.TempDir()
	small := filepath.Join(dir, "small.html")
	if r := ioshape(t, nil, "report", "-o", small, "../../testdata/traces/cp-cat-dd.iotrace"); r.code != 0 {
		t.Fatalf("report: %s", r.stderr)
	}
	n := testutil.LargeEvents()
	trace := filepath.Join(dir, "big.iotrace")
	writeSyntheticTrace(t, trace, n)
	big := filepath.Join(dir, "big.html")
	start := time.Now()
	if r := ioshape(t, nil, "report", "-o", big, trace); r.code != 0 {
		t.Fatalf("report: %s", r.stderr)
	}
	made := time.Since(start)
	fi, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 5e6 {
		t.Errorf("report of %d events is %.2f MB, over 5 MB", n, float64(fi.Size())/1e6)
	}
	summaryTrace := filepath.Join(dir, "summary.iotrace")
	writeSyntheticSummary(t, summaryTrace, 120)
	summary := filepath.Join(dir, "summary.html")
	if r := ioshape(t, nil, "report", "-o", summary, summaryTrace); r.code != 0 {
		t.Fatalf("report of a summary trace: %s", r.stderr)
	}
	b := newBrowser(t, chrome)
	b.open(t, "file://"+small, "report-file", 8)
	b.open(t, "file://"+summary, "report-summary", 4)
	took := b.open(t, "file://"+big, "report-10M", 8)
	t.Logf("%d events: report %.2f MB written in %v, rendered in %v", n, float64(fi.Size())/1e6, made.Round(time.Millisecond), took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("the %d-event report took %v to render", n, took)
	}
	b.check(t, "file://"+dir+"/")
}

// writeSyntheticSummary writes a summary trace (record --summary) of the
// given seconds: a reader's random 4 KiB reads at depth 4, then a
// copier's sequential 1 MiB writes, on both layers.
func writeSyntheticSummary(t *testing.T, path string, seconds int64) {
	t.Helper()
	w, err := tracefile.Create(path, tracefile.Header{Tool: "ioshape", Backend: "native", Start: time.Unix(1700000000, 0).UTC(),
		Target: tracefile.Target{Mode: "all", Summary: true}})
	if err != nil {
		t.Fatal(err)
	}
	var ios int64
	for s := int64(0); s < seconds; s++ {
		comm, pid, size, depth, lat, op, seq := "reader", uint32(10), int64(4096), int64(4), int64(150_000), event.Read, int64(0)
		if s >= seconds/2 {
			comm, pid, size, depth, lat, op = "copier", 20, 1<<20, 1, 3_000_000, event.Write
		}
		n := int64(1e9) / lat * depth / 2
		if op == event.Write {
			seq = n
		}
		for _, layer := range []event.Layer{event.Syscall, event.Block} {
			row := event.Summary{Start: s * 1e9, Layer: layer, Op: op, Dev: event.Dev{Major: 254}, Pid: pid, Comm: comm,
				First: s*1e9 + 3, Last: (s+1)*1e9 - 3, Count: n, Bytes: n * size, SizeSum: n * size, LatencyNs: n * lat,
				BusyNs: 5e8, Located: n, Sequential: seq, IdleNs: 5e8,
				Size: []event.HistCount{{int64(event.HistBucket(size)), n}}, Lat: []event.HistCount{{int64(event.HistBucket(lat)), n}},
				Gap: []event.HistCount{{int64(event.HistBucket(1e6)), 500}}, Depth: []event.HistCount{{int64(event.HistBucket(depth)), n}}}
			if err := w.WriteSummary(&row); err != nil {
				t.Fatal(err)
			}
			ios += n
		}
		w.Flush()
	}
	if err := w.Close(tracefile.Footer{DurationNs: seconds * 1e9, EndReason: "duration", SummarizedIOs: ios,
		Unavailable: []event.Unavailable{{Metric: event.MetricDetail, Why: "recorded with --summary"}}}); err != nil {
		t.Fatal(err)
	}
}

// writeSyntheticTrace writes n events of random 4 KiB reads on four disks
// over n×50 µs: every time bin and offset cell of the report in use.
func writeSyntheticTrace(t *testing.T, path string, n int) {
	t.Helper()
	w, err := tracefile.Create(path, tracefile.Header{Tool: "ioshape-test", Backend: "synthetic", Label: fmt.Sprintf("synthetic %d events", n)})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var e event.Event
	for i := range n {
		start := int64(i) * 50e3
		e = event.Event{Layer: event.Block, Op: event.Read, Start: start, End: start + 180e3, Dispatch: start, Size: 4096, Bytes: 4096,
			Offset: rng.Int64N(1<<28) * 4096, Dev: event.Dev{Major: 259, Minor: uint32(i % 4)}, Pid: uint32(100 + i%7), Tid: uint32(100 + i%7),
			Comm: "fio", Flags: event.FlagDispatched}
		if i%3 == 0 {
			e.Layer, e.Flags = event.Syscall, 0
		}
		if err := w.Write(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(tracefile.Footer{DurationNs: int64(n) * 50e3, EndReason: "synthetic"}); err != nil {
		t.Fatal(err)
	}
}
