package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

func publishedSample(t *testing.T, name string) string {
	return testutil.Repo(t, "testdata", "published", name)
}

// Published results become profiles in the store with their provenance,
// which 'drives' shows; ioshape's own profile is kept as it is.
func TestDrivesImport(t *testing.T) {
	store := t.TempDir()
	r := ioshape(t, nil, "--store", store, "drives", "import", publishedSample(t, "cdm8-usb-hdd.txt"), "--label", "wd-usb")
	if r.code != 0 || !strings.Contains(r.stdout, `drive "wd-usb": CrystalDiskMark 8.0.4 Shizuku Edition, Default profile, 1 GiB test, 2022/07/24 14:51:14`) ||
		!strings.Contains(r.stdout, "a disk: its 4 KiB random reads take") {
		t.Fatalf("import: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// No --label: the drive the results name (CrystalDiskMark's comment).
	r = ioshape(t, nil, "--store", store, "drives", "import", "--json", publishedSample(t, "cdm8-usb-sata-ssd.txt"))
	var p drive.Spec
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.Name != "Great-Wall-GW560-128GB" || p.Provenance == nil || len(p.Provenance.Tests) != 8 || !p.Coarse {
		t.Fatalf("import --json: %v %+v %s", err, p, r.stderr)
	}
	r = ioshape(t, nil, "--store", store, "drives", "import", "--blackmagic", "1010,940", "--label", "t7")
	if r.code != 0 || !strings.Contains(r.stdout, "Blackmagic Disk Speed Test") {
		t.Fatalf("--blackmagic: %s %s", r.stdout, r.stderr)
	}
	// ioshape's own profile is kept as it is, under the label given.
	bench := drive.Spec{Name: "measured", Tool: "fio-3.33", Points: []drive.Point{{Op: "read", Access: "rand", SizeBytes: 4096, Depth: 1, Jobs: 1, IOPS: 10000, MBs: 41, LatUs: 100}}}
	b, _ := json.Marshal(bench)
	r = ioshape(t, nil, "--store", store, "drives", "import", writeFile(t, t.TempDir(), "bench.json", string(b)), "--label", "mine")
	if r.code != 0 || !strings.Contains(r.stdout, `drive "mine": bench (fio-3.33)`) {
		t.Fatalf("import of a bench profile: %s %s", r.stdout, r.stderr)
	}
	r = ioshape(t, nil, "--store", store, "drives")
	for _, want := range []string{"wd-usb", "Great-Wall-GW560-128GB", "t7", "CrystalDiskMark 8.0.4 Shizuku Edition, Default profile, 1 GiB test", "Blackmagic Disk Speed Test", "mine", "bench (fio-3.33)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("drives lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A malformed file is one line naming the line, and the store is unchanged.
func TestDrivesImportMalformed(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.txt", "CrystalDiskMark 8.0.4\n[Read]\n  SEQ    1MiB (Q=  8, T= 1):   fast\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{bad}, "bad.txt: line 3: SEQ    1MiB (Q=  8, T= 1): expected a figure after the colon"},
		{[]string{writeFile(t, dir, "prose.txt", "hello\n")}, "not benchmark results this reads"},
		{[]string{"--blackmagic", "1010", "--label", "x"}, "--blackmagic takes two numbers"},
		{[]string{"--blackmagic", "1010,900"}, "name the drive: --label NAME"},
		{[]string{}, "give a results file, or --blackmagic"},
		{[]string{filepath.Join(dir, "missing.txt")}, "no such file"},
	}
	for _, c := range cases {
		r := ioshape(t, nil, append([]string{"--store", store, "drives", "import"}, c.args...)...)
		if line := singleLine(t, r.stderr); r.code == 0 || !strings.Contains(line, c.want) {
			t.Errorf("%v: code %d, %q; want %q", c.args, r.code, line, c.want)
		}
	}
	if des, _ := os.ReadDir(filepath.Join(store, "drives")); len(des) != 0 {
		t.Errorf("the store changed: %v", des)
	}
}

// predict on several drives: one ranked table, each with its range, the
// tracked number's figure and where its numbers came from; JSON likewise.
func TestPredictSeveralDrives(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "fio-rnd4k.iotrace")
	store := t.TempDir()
	for _, f := range []string{"cdm8-usb-hdd.txt", "cdm8-usb-sata-ssd.txt"} {
		if r := ioshape(t, nil, "--store", store, "drives", "import", publishedSample(t, f), "--label", strings.TrimSuffix(f, ".txt")); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	args := []string{"--store", store, "predict", trace, "--drive", "cdm8-usb-hdd", "--drive", "cdm8-usb-sata-ssd", "--drive", publishedSample(t, "cdm8-nvme-mix-quoted.md")}
	r := ioshape(t, nil, append(args, "--json")...)
	var rk predict.Ranking
	if err := json.Unmarshal([]byte(r.stdout), &rk); err != nil || len(rk.Drives) != 3 {
		t.Fatalf("%v: %s %s", err, r.stdout, r.stderr)
	}
	for i, d := range rk.Drives {
		if !(d.PredictedLowS <= d.PredictedS && d.PredictedS <= d.PredictedHighS && d.PredictedLowS < d.PredictedHighS) {
			t.Errorf("%s: %v not within [%v, %v]", d.Drive, d.PredictedS, d.PredictedLowS, d.PredictedHighS)
		}
		if i > 0 && d.PredictedS < rk.Drives[i-1].PredictedS {
			t.Errorf("not fastest first: %s after %s", d.Drive, rk.Drives[i-1].Drive)
		}
		if d.Tracks == "" || !(d.TracksMBs > 0) || !(d.HeadlineMBs > 0) || !strings.HasPrefix(d.Source, "CrystalDiskMark 8.0.4") {
			t.Errorf("%s: tracks %q %v, headline %v, source %q", d.Drive, d.Tracks, d.TracksMBs, d.HeadlineMBs, d.Source)
		}
	}
	// 4 KiB random reads one at a time: the NVMe drive first, the disk last.
	if rk.Drives[0].Drive != "cdm8-nvme-mix-quoted" || rk.Drives[2].Drive != "cdm8-usb-hdd" {
		t.Errorf("order %s, %s, %s", rk.Drives[0].Drive, rk.Drives[1].Drive, rk.Drives[2].Drive)
	}
	r = ioshape(t, nil, args...)
	for _, want := range []string{"on 3 drives, fastest first", "DRIVE", "RANGE", "TRACKS", "RND4K Q1T1 read, 0.6 MB/s", " – "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, r.stdout)
		}
	}
}

// When the drive with the lower headline finishes first, a sentence says
// so; the ranking is by predicted time.
func TestRankSaysWhenTheHeadlineMisleads(t *testing.T) {
	rk, err := predict.Rank([]*predict.Result{
		{Drive: "big-number", PredictedS: 9, HeadlineMBs: 1000, Tracks: "RND4K Q1T1 read"},
		{Drive: "small-number", PredictedS: 4, HeadlineMBs: 500, Tracks: "RND4K Q1T1 read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rk.Drives[0].Drive != "small-number" || !rk.HeadlineOrderDiffers || !strings.Contains(rk.Note, "The drive with the lower headline finishes this work first: small-number (500 MB/s)") {
		t.Errorf("%+v", rk)
	}
	rk, _ = predict.Rank([]*predict.Result{{Drive: "a", PredictedS: 1, HeadlineMBs: 900}, {Drive: "b", PredictedS: 2, HeadlineMBs: 500}})
	if rk.HeadlineOrderDiffers || rk.Note != "" {
		t.Errorf("headline and work agree, yet %+v", rk)
	}
}

// --on a directory finds the device through the trace's own mounts: the
// longest mount point above it, as the recording machine had them.
func TestOnAMountOfTheTrace(t *testing.T) {
	devs := []event.Device{{Major: 254, Minor: 1, Name: "vda1", Mount: "/"}, {Major: 7, Minor: 1, Name: "loop1", Mount: "/var/tmp/ioshape-validation/hdd"}}
	for path, want := range map[string]event.Dev{
		"/var/tmp/ioshape-validation/hdd/chromium": {Major: 7, Minor: 1},
		"/var/tmp/ioshape-validation/hdd":          {Major: 7, Minor: 1},
		"/var/tmp/ioshape-validation/hddx":         {Major: 254, Minor: 1},
		"/home":                                    {Major: 254, Minor: 1},
	} {
		if got, ok := mountedAt(devs, path); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", path, got, ok, want)
		}
	}
	if _, ok := mountedAt(devs, "relative/dir"); ok {
		t.Error("a relative path matched a mount")
	}
	// A device mounted twice: its other mount points count too.
	devs = append(devs, event.Device{Major: 7, Minor: 2, Name: "loop2", Mount: "/var/tmp/disk", Mounts: []string{"/var/tmp/vda", "/var/tmp/slow"}})
	if got, ok := mountedAt(devs, "/var/tmp/slow/tree"); !ok || got != (event.Dev{Major: 7, Minor: 2}) {
		t.Errorf("under a second mount point: %v %v", got, ok)
	}
}

// --on a directory here, on a device the trace knows, is that device,
// whatever mount point the trace noted for it: a device mounted twice (a
// bind mount) shows the trace only one.
func TestOnADeviceMountedTwice(t *testing.T) {
	dir := t.TempDir()
	here, ok := statDevice(dir)
	if !ok {
		t.Fatal("no device for", dir)
	}
	other := event.Device{Major: here.Major + 1, Minor: here.Minor, Name: "vda", Mount: "/elsewhere/root"}
	meta := tracefile.Meta{Footer: &tracefile.Footer{Devices: []event.Device{other,
		{Major: here.Major, Minor: here.Minor, Name: "loop1", Mount: "/elsewhere/not-" + filepath.Base(dir)}}}}
	got, err := onDevice(meta, dir)
	if err != nil || len(got) == 0 || got[0] != here {
		t.Errorf("--on %s: %v %v, want %v", dir, got, err, here)
	}
	// Not a device of the trace: the trace's own mounts say where it was.
	meta.Footer.Devices = meta.Footer.Devices[:1]
	meta.Footer.Devices[0].Mount = "/"
	if got, err := onDevice(meta, dir); err != nil || len(got) == 0 || got[0] != (event.Dev{Major: other.Major, Minor: other.Minor}) {
		t.Errorf("--on %s on a trace without its device: %v %v, want the trace's / (%v)", dir, got, err, other)
	}
}

// --on a directory whose mount point here is one the trace had: the
// trace's device there, though another of its devices has the number the
// directory's device has now (loop devices set up again, in another
// order).
func TestOnARenumberedDevice(t *testing.T) {
	dir := t.TempDir()
	here, ok := statDevice(dir)
	mp, mok := liveMountPoint(dir)
	if !ok || !mok {
		t.Fatal("no device or mount point for", dir)
	}
	if !strings.HasPrefix(dir, strings.TrimSuffix(mp, "/")+"/") {
		t.Fatalf("mount point %s is not above %s", mp, dir)
	}
	recorded := event.Device{Major: here.Major + 1, Minor: here.Minor + 1, Name: "loop2", Mount: mp}
	meta := tracefile.Meta{Footer: &tracefile.Footer{Devices: []event.Device{recorded,
		{Major: here.Major, Minor: here.Minor, Name: "loop1", Mount: "/elsewhere/not-" + filepath.Base(dir)}}}}
	want := event.Dev{Major: recorded.Major, Minor: recorded.Minor}
	if got, err := onDevice(meta, dir); err != nil || len(got) == 0 || got[0] != want {
		t.Errorf("--on %s: %v %v, want the trace's device at %s (%v)", dir, got, err, mp, want)
	}
}

// --on a partition the trace names brings its disk along, as the trace
// noted it, though neither exists here any more (a loop device torn down,
// a drive unplugged): the file system's calls name the partition, the
// drive's requests the disk, and without the disk nothing moved.
func TestOnAPartitionGoneBringsItsDisk(t *testing.T) {
	part := event.Device{Major: 259, Minor: 4000, Name: "loop4000p1", Disk: "loop4000", Mount: "/gone/ioshape-test/vda"}
	disk := event.Device{Major: 7, Minor: 4000, Name: "loop4000"}
	meta := tracefile.Meta{Footer: &tracefile.Footer{Devices: []event.Device{disk, part}}}
	want := []event.Dev{{Major: 259, Minor: 4000}, {Major: 7, Minor: 4000}}
	for _, on := range []string{"/gone/ioshape-test/vda/tree", "loop4000p1", "259:4000"} {
		if got, err := onDevice(meta, on); err != nil || !slices.Equal(got, want) {
			t.Errorf("--on %s: %v %v, want %v", on, got, err, want)
		}
	}
	// The disk itself is just the disk.
	if got, err := onDevice(meta, "loop4000"); err != nil || !slices.Equal(got, want[1:]) {
		t.Errorf("--on loop4000: %v %v, want %v", got, err, want[1:])
	}
}

// report and compare with several --predict-on show the drives ranked:
// the HTML's table and chart, the JSON's drives, compare's text per trace.
func TestReportAndCompareRankDrives(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "fio-rnd4k.iotrace")
	store := t.TempDir()
	hdd, ssd := publishedSample(t, "cdm8-usb-hdd.txt"), publishedSample(t, "cdm8-usb-sata-ssd.txt")
	html := filepath.Join(t.TempDir(), "r.html")
	if r := ioshape(t, nil, "--store", store, "report", "-o", html, "--predict-on", hdd, "--predict-on", ssd, trace); r.code != 0 {
		t.Fatal(r.stderr)
	}
	page, _ := os.ReadFile(html)
	for _, want := range []string{"Which drive finishes it first", `class="drives"`, "Great Wall GW560 128GB", "headline's promise", `id="drives"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	r := ioshape(t, nil, "--store", store, "report", "--json", "--predict-on", hdd, "--predict-on", ssd, trace)
	var a struct {
		Prediction *predict.Result  `json:"prediction"`
		Drives     *predict.Ranking `json:"drives"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || a.Drives == nil || len(a.Drives.Drives) != 2 || a.Prediction.Drive != "cdm8-usb-hdd" {
		t.Fatalf("report --json: %v %+v", err, a)
	}
	r = ioshape(t, nil, "--store", store, "compare", "--predict-on", hdd, "--predict-on", ssd, trace, trace)
	if r.code != 0 || strings.Count(r.stdout, "on 2 drives, fastest first") != 2 || !strings.Contains(r.stdout, "NUMBERS FROM") {
		t.Errorf("compare: %s %s", r.stdout, r.stderr)
	}
}
