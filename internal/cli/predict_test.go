package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// predict on a real trace with AmorphousDiskMark's numbers: JSON with the
// documented fields, a headline beside the prediction.
func TestPredictJSON(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	r := ioshape(t, nil, "--store", t.TempDir(), "predict", "--json", "--adm-read", "3000,1500,800,50", "--adm-write", "2500,1400,700,120", trace)
	if r.code != 0 {
		t.Fatalf("predict: %s", r.stderr)
	}
	var res predict.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if !(res.PredictedS > 0) || !(res.RecordedS > 3) || !(res.HeadlineS > 0) || res.Tracks == "" || len(res.Phases) == 0 || len(res.Processes) == 0 {
		t.Errorf("prediction %+v", res)
	}
	for _, key := range []string{`"predicted_s"`, `"recorded_s"`, `"headline_s"`, `"from_s"`, `"to_s"`, `"pattern"`} {
		if !strings.Contains(r.stdout, key) {
			t.Errorf("the JSON lacks %s", key)
		}
	}
}

// Predicting for the drive a trace was recorded on gives back its
// duration: --from names that drive's profile, here the same as --drive;
// for another drive, the prediction says which profile it took out.
func TestPredictFromTheRecordingDrive(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	dir := t.TempDir()
	write := func(name string, read, wr []float64) string {
		p, err := drive.Coarse(name, read, wr)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		b, _ := json.Marshal(p)
		os.WriteFile(path, b, 0o644)
		return path
	}
	here := write("here", []float64{900, 400, 300, 30}, []float64{800, 350, 250, 60})
	there := write("there", []float64{7000, 5000, 3000, 500}, []float64{6000, 4000, 2500, 400})
	run := func(from, to string) predict.Result {
		r := ioshape(t, nil, "--store", t.TempDir(), "predict", "--json", "--from", from, "--drive", to, trace)
		if r.code != 0 {
			t.Fatalf("predict: %s", r.stderr)
		}
		var res predict.Result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(here, here); math.Abs(res.PredictedS-res.RecordedS) > 0.002 || res.From != "here" {
		t.Errorf("on the recording drive: predicted %v s, recorded %v s (from %q)", res.PredictedS, res.RecordedS, res.From)
	}
	if res := run(here, there); res.From != "here" || !(res.PredictedS < res.RecordedS) {
		t.Errorf("on a faster drive: predicted %v s, recorded %v s (from %q)", res.PredictedS, res.RecordedS, res.From)
	}
}

// A drive behind a cgroup v1 throttle is predicted with its device's
// unthrottled profile beside it (the throttle holds back the I/O its
// processes issue, not the writeback): --from naming the recording drive
// does not hide the store's other profiles. It did, and fsync'd files and
// tar -x + sync predicted onto the throttled VM disk came out twice as long.
func TestPredictFromKeepsTheUnthrottledTwin(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	loop := testutil.Repo(t, "testdata", "drives", "loop.json")
	throttled := testutil.Repo(t, "testdata", "drives", "loop-throttled.json")
	predicted := func(profiles ...string) float64 {
		st := t.TempDir()
		os.Mkdir(filepath.Join(st, "drives"), 0o755)
		for _, p := range profiles {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(st, "drives", filepath.Base(p)), b, 0o644)
		}
		r := ioshape(t, nil, "--store", st, "predict", "--json", "--from", loop, "--drive", throttled, trace)
		if r.code != 0 {
			t.Fatalf("predict: %s", r.stderr)
		}
		var res predict.Result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatal(err)
		}
		return res.PredictedS
	}
	with, without := predicted(loop, throttled), predicted(throttled)
	if !(with < without) {
		t.Errorf("onto the throttled drive: %v s with its unthrottled profile in the store, %v s without", with, without)
	}
}

// Each way predict can fail says so in one line, with a non-zero exit.
func TestPredictErrors(t *testing.T) {
	store := t.TempDir()
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	noIO := filepath.Join(t.TempDir(), "noio.iotrace")
	w, _ := tracefile.Create(noIO, tracefile.Header{Tool: "test"})
	w.Write(&event.Event{Layer: event.Syscall, Op: event.Flush, Start: 0, End: 1000, Pid: 1})
	w.Close(tracefile.Footer{DurationNs: 1000})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--drive", "nosuch", trace}, `no drive profile "nosuch"`},
		{[]string{"predict", "--adm-read", "3000,1500,800,50", "--from", "nosuch", trace}, `no drive profile "nosuch"`},
		{[]string{"predict", trace}, "name the drive"},
		{[]string{"predict", "--adm-read", "1,2,3", trace}, "four AmorphousDiskMark numbers"},
		{[]string{"predict", "--adm-read", "3000,1500,800,50", noIO}, "no reads or writes to predict"},
	} {
		r := ioshape(t, nil, append([]string{"--store", store}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// bench without fio says how to install it; without a place, what to give.
func TestBenchErrors(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"PATH=/nonexistent"}, []string{"bench", "--dir", dir}, "fio is not installed: install it with"},
		{nil, []string{"bench"}, "give --dir DIR"},
		{nil, []string{"bench", "--dir", filepath.Join(dir, "nosuch")}, "is not a directory"},
		{nil, []string{"bench", "--dir", dir, "--size", "lots"}, "give a size such as 512M"},
	} {
		r := ioshape(t, c.env, append([]string{"--store", store}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// export and replay say what they need, and refuse a trace with nothing
// to replay and a directory fio cannot use.
func TestExportErrors(t *testing.T) {
	store := t.TempDir()
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	noIO := filepath.Join(t.TempDir(), "noio.iotrace")
	w, _ := tracefile.Create(noIO, tracefile.Header{Tool: "test"})
	w.Write(&event.Event{Layer: event.Block, Op: event.Discard, Start: 0, End: 1000, Pid: 1})
	w.Close(tracefile.Footer{DurationNs: 1000})
	out := filepath.Join(t.TempDir(), "x.iolog")
	os.WriteFile(out, nil, 0o644)
	spaced := filepath.Join(t.TempDir(), "a b")
	os.Mkdir(spaced, 0o755)
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"export", trace}, "--fio-iolog FILE", 2},
		{[]string{"export", "--fio-iolog", out, "--fio-job", out, trace}, "say what to export, once", 2},
		{[]string{"export", "--fio-job", out, "--by", "thread", trace}, "say phase or program", 2},
		{[]string{"export", "--fio-job", "-", "--json", trace}, "--json goes with --fio-job FILE", 2},
		{[]string{"export", "--fio-iolog", out, noIO}, "no reads or writes to export", 1},
		{[]string{"export", "--fio-job", out, noIO}, "no reads or writes to export", 1},
		{[]string{"replay", trace}, "--dir DIR", 2},
		{[]string{"replay", trace, "--dir", t.TempDir(), "--mode", "exact"}, "say job or iolog", 2},
		{[]string{"replay", trace, "--dir", out}, "is not a directory", 1},
		{[]string{"replay", trace, "--dir", filepath.Join(t.TempDir(), "no such")}, "no such file or directory", 1},
		{[]string{"replay", trace, "--dir", spaced}, "fio cannot take a path with spaces", 1},
	} {
		r := ioshape(t, nil, append([]string{"--store", store}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// With --predict-on, the HTML report leads with the prediction beside the
// headline's, and compare adds both as rows.
func TestReportAndCompareShowThePrediction(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	results := filepath.Join(t.TempDir(), "ssd.json")
	os.WriteFile(results, []byte(`{"name": "test SSD", "results": {
		"cdm-seq1m-q8t1-read": 3000, "cdm-seq1m-q1t1-read": 1500, "cdm-rnd4k-q32t1-read": 800, "cdm-rnd4k-q1t1-read": 50,
		"cdm-seq1m-q8t1-write": 2500, "cdm-seq1m-q1t1-write": 1400, "cdm-rnd4k-q32t1-write": 700, "cdm-rnd4k-q1t1-write": 120}}`), 0o644)
	store := t.TempDir()
	r := ioshape(t, nil, "--store", store, "report", "-o", "-", "--predict-on", results, trace)
	if r.code != 0 {
		t.Fatalf("report: %s", r.stderr)
	}
	for _, want := range []string{`id="prediction"`, "On drive <b>test SSD</b>", "the headline number, SEQ1M Q8T1, would say"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	r = ioshape(t, nil, "--store", store, "compare", "--json", "--predict-on", results, trace, trace)
	if r.code != 0 {
		t.Fatalf("compare: %s", r.stderr)
	}
	var c struct {
		Rows []struct {
			Key    string     `json:"key"`
			Values []*float64 `json:"values"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, row := range c.Rows {
		if len(row.Values) == 2 && row.Values[0] != nil && *row.Values[0] > 0 {
			found[row.Key] = true
		}
	}
	if !found["predicted"] || !found["headline_predicted"] {
		t.Errorf("compare rows %v lack the predictions", found)
	}
	r = ioshape(t, nil, "--store", store, "report", "-o", "-", "--predict-on", "no-such-drive", trace)
	if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Errorf("unknown drive: exit %d, %q", r.code, r.stderr)
	}
}

// Two threads reading side by side: --per-thread writes a log each and
// the fio command that replays them as a job each; with standard output it
// is a usage error.
func TestExportIologPerThread(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "threads.iotrace")
	w, err := tracefile.Create(trace, tracefile.Header{Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 50; i++ {
		for tid := uint32(1); tid <= 2; tid++ {
			at := i*1_000_000 + int64(tid)*100_000
			w.Write(&event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallPread64, Start: at, End: at + 600_000,
				Dev: event.Dev{Major: 8, Minor: 1}, Inode: 12, Offset: i * 4096, Size: 4096, Bytes: 4096, Pid: 1, Tid: tid, Comm: "app"})
		}
	}
	w.Close(tracefile.Footer{DurationNs: 50_000_000})
	log := filepath.Join(dir, "out.iolog")
	r := ioshape(t, nil, "--store", t.TempDir(), "export", "--per-thread", "--fio-iolog", log, trace)
	if r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	for _, name := range []string{log + ".t1", log + ".t2"} {
		b, err := os.ReadFile(name)
		if err != nil || strings.Count(string(b), " read ") != 50 {
			t.Errorf("%s: %v, %d reads", name, err, strings.Count(string(b), " read "))
		}
	}
	for _, want := range []string{"--name=t1 --read_iolog=" + log + ".t1", "--name=t2 --read_iolog=" + log + ".t2"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = ioshape(t, nil, "--store", t.TempDir(), "export", "--per-thread", "--fio-iolog", "-", trace)
	if r.code != 2 || !strings.Contains(r.stderr, "--per-thread goes with --fio-iolog FILE") {
		t.Errorf("--per-thread to standard output: exit %d, %q", r.code, r.stderr)
	}
}
