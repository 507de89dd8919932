package cli

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
)

// Each real sample in ../shared/samples imports through the command with
// its hand-counted events (counted in internal/parse), shows what its
// format holds, and shows what it does not hold as null, not zero.
func TestImportSharedSamplesEveryFormat(t *testing.T) {
	cases := []struct {
		file, format   string
		events, reads  int64
		bytes          int64
		null, nonNull  []string // block-layer JSON fields
		processesShown bool
	}{
		{"bcc_biosnoop_example.txt", "biosnoop", 21, 0, 176128, []string{"device_queue_depth"}, []string{"latency_us", "queue_depth", "sequential_fraction"}, true},
		{"blkparse_leveldb_ram0_completions.txt", "blkparse", 840, 0, 431104, []string{"latency_us", "queue_depth"}, []string{"sequential_fraction", "size_bytes", "iops"}, false},
		{"dtt_iosnoop_example.txt", "iosnoop", 30, 25, 297472, []string{"latency_us", "iops", "queue_depth"}, []string{"sequential_fraction", "size_bytes"}, true},
		{"perftools_iosnoop_example.txt", "perftools-iosnoop", 95, 33, 1286144, []string{"iops", "queue_depth"}, []string{"latency_us", "size_bytes"}, true},
	}
	store := t.TempDir()
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			r := ioshape(t, nil, "--store", store, "import", "--label", c.file, testutil.Shared(t, "samples", c.file))
			if r.code != 0 || !strings.Contains(r.stderr, "("+c.format+")") {
				t.Fatalf("import (%d): %s", r.code, r.stderr)
			}
			s := showJSON(t, store, c.file)
			if s.Trace.Events != c.events || s.Block == nil || s.Block.IOs != c.events || s.Block.Reads != c.reads || s.Block.ReadBytes+s.Block.WriteBytes != c.bytes {
				t.Fatalf("events %d, block %+v; want %d events, %d reads, %d bytes", s.Trace.Events, s.Block, c.events, c.reads, c.bytes)
			}
			if (len(s.Processes) > 0) != c.processesShown {
				t.Errorf("processes shown: %v, want %v", len(s.Processes) > 0, c.processesShown)
			}
			raw := ioshape(t, nil, "--store", store, "show", "--json", c.file)
			var doc struct {
				Block map[string]json.RawMessage `json:"block"`
			}
			if err := json.Unmarshal([]byte(raw.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.null {
				if string(doc.Block[f]) != "null" {
					t.Errorf("block.%s = %s, want null (the format does not hold it)", f, doc.Block[f])
				}
			}
			for _, f := range c.nonNull {
				if v, ok := doc.Block[f]; !ok || string(v) == "null" {
					t.Errorf("block.%s missing or null", f)
				}
			}
			text := ioshape(t, nil, "--store", store, "show", c.file)
			if len(c.null) > 0 && (!strings.Contains(text.stdout, "n/a") || !strings.Contains(text.stdout, "n/a:  ")) {
				t.Errorf("show does not say what is unavailable:\n%s", text.stdout)
			}
			if cl := ioshape(t, nil, "--store", store, "classify", c.file); cl.code != 0 {
				t.Errorf("classify: %s", cl.stderr)
			}
			html := filepath.Join(t.TempDir(), "r.html")
			if rep := ioshape(t, nil, "--store", store, "report", c.file, "-o", html); rep.code != 0 {
				t.Fatalf("report: %s", rep.stderr)
			}
			page, _ := os.ReadFile(html)
			if len(c.null) > 0 && !strings.Contains(string(page), "Not in this capture") ||
				slices.Contains(c.null, "queue_depth") && !strings.Contains(string(page), ">n/a<") {
				t.Errorf("the HTML report does not say what is unavailable")
			}
			if slices.Contains(c.null, "latency_us") && strings.Contains(string(page), `data-chart="latency"`) {
				t.Errorf("the HTML report charts a latency the capture does not hold")
			}
		})
	}
}

// The corpora's CSVs, a fio iolog and gzip: through the command, devices
// kept apart.
func TestImportCSVAndIolog(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	msr := write("hm_0.csv", "128166372003061629,hm,1,Read,3452047360,4096,2254\n128166372016382155,hm,0,Write,3452047360,8192,13027\n128166372016382160,hm,0,Write,3452055552,8192,13027\n")
	gz := filepath.Join(dir, "ali.csv.gz")
	f, _ := os.Create(gz)
	zw := gzip.NewWriter(f)
	zw.Write([]byte("419,W,8792838144,4096,1577808000000010\n420,R,1024,16384,1577808000000510\n"))
	zw.Close()
	f.Close()
	tencent := write("tencent.csv", "Timestamp,Offset,Size,IOType,VolumeID\n1538323200,12073432,8,1,1283\n1538323201,0,256,0,1284\n1538323201,8,8,0,1284\n")
	for _, c := range []struct {
		file, format string
		events, devs int
	}{{msr, "msr", 3, 2}, {gz, "alibaba", 2, 2}, {tencent, "tencent", 3, 2}, {testutil.Shared(t, "samples", "fio_t0038_v3.iolog"), "fio-iolog", 20, 1}} {
		r := ioshape(t, nil, "--store", store, "import", "--label", c.format, c.file)
		if r.code != 0 || !strings.Contains(r.stderr, "("+c.format+")") {
			t.Fatalf("%s: %s", c.file, r.stderr)
		}
		s := showJSON(t, store, c.format)
		n := 0
		for _, d := range s.Devices {
			if d.Block != nil || d.Syscall != nil {
				n++
			}
		}
		if s.Trace.Events != int64(c.events) || n != c.devs {
			t.Errorf("%s: %d events on %d devices, want %d on %d", c.format, s.Trace.Events, n, c.events, c.devs)
		}
		if len(s.Trace.Unavailable) == 0 {
			t.Errorf("%s: nothing said to be unavailable", c.format)
		}
	}
}

// A .tgz (as Tencent publishes its traces) imports its first file and
// says so, and that there were more.
func TestImportTarGz(t *testing.T) {
	dir := t.TempDir()
	tgz := filepath.Join(dir, "tencent.tgz")
	f, _ := os.Create(tgz)
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, m := range []struct{ name, body string }{{"1283.csv", "1538323200,12073432,8,1,1283\n1538323201,0,256,0,1283\n"}, {"1284.csv", "1538323200,1,8,1,1284\n"}} {
		tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(m.body))
	}
	tw.Close()
	zw.Close()
	f.Close()
	r := ioshape(t, nil, "--store", dir, "import", "--label", "tgz", tgz)
	if r.code != 0 || !strings.Contains(r.stderr, "imported 2 events (tencent)") || !strings.Contains(r.stderr, "read 1283.csv from the tar archive") ||
		!strings.Contains(r.stderr, "only the first was imported") {
		t.Errorf("import: %d %s", r.code, r.stderr)
	}
}

// Input that is not what it claims: one line naming the line, non-zero.
func TestImportBadInputEveryFormat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	text := write("prose.txt", "just some words\nand more\n")
	cases := []struct {
		format, file, want string
	}{
		{"blkparse", write("bp.txt", "  8,0 1 1 0.000001000 100 Q R x + 8 [fio]\n"), "bp.txt:1: bad sector range"},
		{"blktrace", text, "not a blktrace file"},
		{"biosnoop", text, "no biosnoop table found"},
		{"disksnoop", text, "no disksnoop table found"},
		{"iosnoop", text, "no iosnoop table found"},
		{"perftools-iosnoop", text, "no perftools-iosnoop table found"},
		{"biosnoop.bt", text, "no biosnoop.bt table found"},
		{"fio-iolog", text, "prose.txt:1: not a fio iolog"},
		{"msr", text, "prose.txt:1: not a msr trace"},
		{"alibaba", text, "prose.txt:1: not a alibaba trace"},
		{"tencent", text, "prose.txt:1: not a tencent trace"},
		{"biosnoop", write("bad.txt", "TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)\n0.1 dd 12 sda W 88 many 0.5\n"), "bad.txt:2: bad BYTES value"},
		{"auto", write("cut.blktrace.0", "\x07\x74\x61\x65"+strings.Repeat("\x00", 20)), "cut short"},
	}
	for _, c := range cases {
		r := ioshape(t, nil, "--store", filepath.Join(dir, "store"), "import", "--format", c.format, c.file)
		if r.code == 0 || !strings.Contains(singleLine(t, r.stderr), c.want) {
			t.Errorf("--format %s %s: exit %d, %q; want non-zero and %q", c.format, filepath.Base(c.file), r.code, r.stderr, c.want)
		}
	}
}

// Imported traces keep the capture's own clock: absolute where the format
// has it, the time of day dated as the user says (or the file's date, said
// so), and no time at all where nothing says when; exports follow.
func TestImportKeepsTheCapturesClock(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	// FILETIME counts 100 ns ticks from 1601, 11,644,473,600 s before 1970.
	msrTicks := int64(128166372003061629)
	msrWhen := time.Unix(msrTicks/1e7-11644473600, msrTicks%1e7*100).UTC()
	fsu := testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log")
	wall := time.Date(2019, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, c := range []struct {
		label, file string
		args        []string
		when        time.Time // zero: no time
		source      string
		host        string
	}{
		{"msr", write("hm_0.csv", fmt.Sprintf("%d,hm,1,Read,3452047360,4096,2254\n%d,hm,0,Write,3452047360,8192,13027\n", msrTicks, msrTicks+10)), nil, msrWhen, "the capture's own clock", "hm"},
		{"alibaba", write("ali.csv", "419,W,8792838144,4096,1577808000000010\n420,R,1024,16384,1577808000000510\n"), nil, time.UnixMicro(1577808000000010).UTC(), "the capture's own clock", ""},
		{"tencent", write("tencent.csv", "1538323200,12073432,8,1,1283\n1538323201,0,256,0,1284\n"), nil, time.Unix(1538323200, 0).UTC(), "the capture's own clock", ""},
		{"dtrace-wall", write("wall.d.txt", fmt.Sprintf("READY dtrace 1000 linux %d\nI 2000 3000 254 0 8 4096 4096 0 5 77 77 fio\n", wall.UnixNano())), nil, wall, "the capture's own clock", ""},
		{"dtrace-nowall", write("nowall.d.txt", "READY dtrace 1000 linux\nI 2000 3000 254 0 8 4096 4096 0 5 77 77 fio\n"), nil, time.Time{}, "", ""},
		{"fs_usage", fsu, []string{"--date", "2019-03-04"}, time.Date(2019, 3, 4, 17, 24, 16, 0, time.Local), "the capture's time of day, dated by --date", ""},
	} {
		t.Run(c.label, func(t *testing.T) {
			r := ioshape(t, nil, append([]string{"--store", store, "import", "--label", c.label, c.file}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("import: %s", r.stderr)
			}
			s := showJSON(t, store, c.label)
			got := s.Trace.Start
			if c.when.IsZero() != (got == nil) || got != nil && (got.Sub(c.when) > time.Second || c.when.Sub(*got) > time.Second) || s.Trace.StartSource != c.source {
				t.Errorf("start %v (%q), want %v (%q)", got, s.Trace.StartSource, c.when, c.source)
			}
			if s.Trace.Imported == nil || s.Trace.Host != c.host {
				t.Errorf("imported %v, host %q (want %q)", s.Trace.Imported, s.Trace.Host, c.host)
			}
			text := ioshape(t, nil, "--store", store, "show", c.label).stdout
			if c.when.IsZero() && !strings.Contains(text, "at a time the capture does not say") || !strings.Contains(text, "imported ") {
				t.Errorf("show says: %s", strings.SplitN(text, "\n", 3)[1])
			}
			csv := filepath.Join(dir, c.label+".csv")
			if r := ioshape(t, nil, "--store", store, "export", c.label, "--csv", csv); r.code != 0 {
				t.Fatalf("export: %s", r.stderr)
			}
			b, _ := os.ReadFile(csv)
			lines := strings.Split(string(b), "\n")
			timeAt := slices.Index(strings.Split(lines[0], ","), "time")
			first := strings.Split(lines[1], ",")[timeAt]
			if c.when.IsZero() != (first == "") || first != "" && !strings.HasPrefix(first, c.when.UTC().Format("2006-01-02T15")) {
				t.Errorf("exported time %q, want %v", first, c.when)
			}
		})
	}
}

// fs_usage names processes, not their pids: they have none in the trace
// (null, "–"), never a made-up one. A flush is counted the same way in
// every table, and an APFS container's volumes are one device, named
// both ways.
func TestImportFsUsageIdentity(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	lines := []string{
		"10:00:00.000100  open              F=5        (RW____________)  /Users/me/notes.db                0.000010   Notes Helper.100",
		"10:00:00.000200  write             F=5    B=0x1000                                                0.000030   Notes Helper.100",
		"10:00:00.000300  WrData[S]         D=0x00001f50  B=0x1000   /dev/disk3s5  /Users/me/notes.db          0.000200 W Notes Helper.100",
		"10:00:00.000400  fsync             F=5                                                            0.000800 W Notes Helper.100",
		"10:00:00.000500  RdMeta[S]         D=0x0000cbfb  B=0x1000   /dev/disk3  /dev/disk3                    0.000300 W Notes Helper.100",
		"10:00:00.000600  read              F=5    B=0x1000                                                0.000020   Notes Helper.100",
	}
	capture := writeFile(t, dir, "fsync.txt", strings.Join(lines, "\n")+"\n")
	for _, file := range []string{capture, testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log")} {
		label := filepath.Base(file)
		if r := ioshape(t, nil, "--store", store, "import", "--label", label, file); r.code != 0 {
			t.Fatalf("import %s: %s", file, r.stderr)
		}
		raw := ioshape(t, nil, "--store", store, "show", "--json", label).stdout
		if strings.Contains(raw, `"pid": 1,`) || !strings.Contains(raw, `"pid": null`) {
			t.Errorf("%s: pids not null: %.400s", label, raw[strings.Index(raw, `"processes"`):])
		}
		s := showJSON(t, store, label)
		var sys, blk int64
		for _, p := range s.Processes {
			sys += p.SyscallIOs
			blk += p.BlockIOs
		}
		if s.Syscall != nil && sys != s.Syscall.IOs || s.Block != nil && blk != s.Block.IOs {
			t.Errorf("%s: processes count %d calls and %d block I/Os; the layers %d and %d", label, sys, blk, s.Syscall.IOs, s.Block.IOs)
		}
		var disk3 []string
		for _, d := range s.Devices {
			if strings.HasPrefix(d.Device, "disk3") {
				disk3 = append(disk3, d.Device)
			}
		}
		if len(disk3) != 1 || !strings.Contains(disk3[0], "APFS container") || !strings.Contains(disk3[0], "disk3s5") {
			t.Errorf("%s: disk3's devices %q", label, disk3)
		}
		text := ioshape(t, nil, "--store", store, "show", label).stdout
		if !regexp.MustCompile(`(?m)^  –\s+Notes Helper|^  –\s+\S`).MatchString(text) {
			t.Errorf("%s: no process shown without a pid:\n%s", label, text[strings.Index(text, "Processes"):])
		}
	}
	s := showJSON(t, store, "fsync.txt")
	if s.Syscall.Flushes != 1 || s.Syscall.IOs != 2 {
		t.Errorf("calls: %d I/Os, %d flushes; want 2 and 1", s.Syscall.IOs, s.Syscall.Flushes)
	}
}
