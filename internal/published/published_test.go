package published

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
)

func readSample(t *testing.T, name string) *drive.Provenance {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "published", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(name, b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// figures lists a result's tests by name with their rates.
func figures(p *drive.Provenance) map[string]float64 {
	out := map[string]float64{}
	for _, t := range p.Tests {
		out[t.Name()] = t.MBs
	}
	return out
}

// Every published sample reads as its tool, version and settings, with
// each figure where the text has it.
func TestPublishedSamples(t *testing.T) {
	cases := []struct {
		file, tool, version, profile, testSize, date string
		testBytes                                    int64
		n                                            int
		want                                         map[string]float64
	}{
		{"cdm8-usb-hdd.txt", "CrystalDiskMark", "8.0.4 Shizuku Edition", "Default", "1 GiB", "2022/07/24 14:51:14", 1 << 30, 8,
			map[string]float64{"SEQ1M Q8T1 read": 194.805, "SEQ1M Q1T1 write": 184.839, "RND4K Q32T1 read": 0.640, "RND4K Q1T1 write": 2.452}},
		{"cdm8-usb-sata-ssd.txt", "CrystalDiskMark", "8.0.4 Shizuku Edition", "Default", "1 GiB", "2024/05/25 19:26:52", 1 << 30, 8,
			map[string]float64{"RND4K Q1T1 read": 20.802}},
		{"cdm8-nvme-mix-quoted.md", "CrystalDiskMark", "8.0.4", "Default", "1 GiB", "2024/01/06 5:41:48", 1 << 30, 8,
			map[string]float64{"SEQ128K Q32T1 read": 7429.732, "RND4K Q32T16 write": 2020.814, "RND4K Q1T1 read": 84.503}},
		{"cdm8-nvme-table-only.txt", "CrystalDiskMark", "", "", "", "", 0, 8,
			map[string]float64{"SEQ1M Q8T1 read": 6616.280, "RND4K Q1T1 write": 151.118}},
		{"cdm8-sata-uwp.txt", "CrystalDiskMark", "8.0.0", "Default", "1 GiB", "2020/12/13 22:27:52", 1 << 30, 8,
			map[string]float64{"RND4K Q32T1 write": 137.234}},
		{"cdm7-hdd.txt", "CrystalDiskMark", "7.0.0", "Default", "1 GiB", "2020/01/03 11:44:51", 1 << 30, 8,
			map[string]float64{"SEQ1M Q8T1 read": 101.514, "RND4K Q32T16 read": 0.851, "RND4K Q1T1 read": 0.408}},
		{"cdm6-sata-ssd-commented.txt", "CrystalDiskMark", "6.0.2", "", "1024 MiB", "2018/12/15 0:48:36", 1 << 30, 8,
			map[string]float64{"SEQ128K Q32T1 read": 471.231, "RND4K Q8T8 write": 321.975, "RND4K Q1T1 read": 33.779}},
		{"cdm5-usb-commented.txt", "CrystalDiskMark", "5.2.0", "", "1024 MiB", "2016/11/15 21:52:26", 1 << 30, 8,
			map[string]float64{"SEQ128K Q32T1 read": 140.647, "SEQ1M Q1T1 read": 156.034, "SEQ1M Q1T1 write": 96.884}},
		{"cdm3-sata-ssd.txt", "CrystalDiskMark", "3.0.1", "", "1000 MB", "2012/02/15 20:39:27", 1000 << 20, 8,
			map[string]float64{"SEQ1M Q1T1 read": 505.825, "RND512K Q1T1 write": 190.461, "RND4K Q32T1 read": 271.859}},
		{"kdiskmark-1.6.0.txt", "KDiskMark", "1.6.0", "Default", "32 MiB", "2020/09/05 18:31:47", 32 << 20, 8,
			map[string]float64{"SEQ1M Q8T1 read": 542.516, "RND4K Q32T16 read": 271.553, "RND4K Q1T1 write": 103.696}},
		{"adm-4.0.1-layout.txt", "AmorphousDiskMark", "4.0.1", "", "1 GiB", "2019-10-15T04:09:09Z", 1 << 30, 8,
			map[string]float64{"SEQ1M Q32T1 write": 324.32, "SEQ1M Q1T1 read": 471.25, "RND4K Q32T1 read": 471.23}},
		{"fio-3.33-vda.json", "fio", "3.33", "", "64M", "Thu Nov 26 15:06:25 2026", 64 << 20, 3, nil},
		{"atto-layout-vda.csv", "ATTO Disk Benchmark", "", "queue depth 4", "256 MB", "", 256 << 20, 12,
			map[string]float64{"SEQ512B Q4T1 write": 16.0, "SEQ64M Q4T1 read": 1693.78, "SEQ4K Q4T1 read": 164.63}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p := readSample(t, c.file)
			if p.Tool != c.tool || p.Version != c.version || p.Profile != c.profile || p.TestSize != c.testSize || p.Date != c.date || p.TestBytes != c.testBytes || p.Source != c.file {
				t.Errorf("provenance %q %q profile %q test %q (%d) date %q source %q", p.Tool, p.Version, p.Profile, p.TestSize, p.TestBytes, p.Date, p.Source)
			}
			if len(p.Tests) != c.n {
				t.Errorf("%d figures, want %d: %v", len(p.Tests), c.n, figures(p))
			}
			got := figures(p)
			for name, v := range c.want {
				if got[name] != v {
					t.Errorf("%s = %v, want %v (have %v)", name, got[name], v, got)
				}
			}
			for _, f := range p.Tests {
				if f.Line <= 0 {
					t.Errorf("%s has no line", f.Name())
				}
			}
			d, err := drive.Build(c.file, *p)
			if err != nil {
				t.Fatalf("no profile: %v", err)
			}
			// The profile answers each figure it was built from.
			for _, f := range p.Tests {
				if got := d.MBs(f.Op, f.Access, f.SizeBytes, float64(f.InFlight())); math.Abs(got/f.MBs-1) > 0.01 {
					t.Errorf("%s: the profile says %.3f MB/s, the figure %.3f", f.Name(), got, f.MBs)
				}
			}
		})
	}
}

// fio's jobs become figures with their shape: numjobs copies reported
// apart are summed, once with group_reporting, a mix left out.
func TestFioJobs(t *testing.T) {
	p := readSample(t, "fio-3.33-vda.json")
	byName := map[string]drive.Test{}
	for _, f := range p.Tests {
		byName[f.Name()] = f
	}
	seq, rnd, wr := byName["SEQ1M Q8T1 read"], byName["RND4K Q1T2 read"], byName["RND4K Q4T2 write"]
	if seq.MBs < 1000 || rnd.MBs < 120 || rnd.MBs > 130 || wr.MBs < 200 {
		t.Errorf("fio figures %+v", byName)
	}
	if rnd.LatUs <= 0 || seq.Line >= rnd.Line {
		t.Errorf("latency %v, lines %d %d", rnd.LatUs, seq.Line, rnd.Line)
	}
}

// Malformed input is one error naming the line and what was expected.
func TestMalformed(t *testing.T) {
	cases := []struct{ text, want string }{
		{"[Read]\n  SEQ    1MiB (Q=  8, T= 1):   lots\n", "line 2: SEQ    1MiB (Q=  8, T= 1): expected a figure after the colon"},
		{"  RND    4KiB (Q=  1, T= 1):   12 MB/s\n", "line 1: \"RND    4KiB (Q=  1, T= 1)\" names neither reads nor writes"},
		{"CrystalDiskMark 8.0.4\n[Read]\n  RND    4KiB (Q=  0, T= 1):   12 MB/s\n", "line 3: \"RND    4KiB (Q=  0, T= 1)\": expected a queue depth and threads of at least 1"},
		{"ATTO Disk Benchmark\nTransfer Size  Write  Read\n4 KB  12.5 MB/s\n", "line 3: expected a transfer size, then its write and read rates"},
		{"{\"fio version\": \"fio-3.33\", \"jobs\": [ {\"jobname\": \"a\",\n \"job options\": {\"rw\": \"read\", \"bs\": \"huge\"}, \"read\": {\"bw_bytes\": 5}}]}", "line 1: fio job \"a\": bs \"huge\" is not a size"},
		{"{\"fio version\": \"fio-3.33\",\n \"jobs\": [ oops ]}", "line 2: fio JSON"},
		{"hello\nworld\n", ErrUnknown.Error()},
		{"CrystalDiskMark 8.0.4\n* MB/s = 1,000,000 bytes/s\n", "CrystalDiskMark results with no figures in them"},
	}
	for _, c := range cases {
		_, err := Parse("x", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
		var se *SyntaxError
		if strings.HasPrefix(c.want, "line ") && !errors.As(err, &se) {
			t.Errorf("%q: %T is not a SyntaxError", c.text, err)
		}
	}
}

// Figures in other units — GB/s, IOPS only, µs only — become rates.
func TestUnits(t *testing.T) {
	p, err := Parse("x", []byte("[Read]\nSEQ1M Q8T1: 7.43 GB/s\nRND4K Q1T1: [ 20630.6 IOPS]\n[Write]\nRND4K Q1T1: < 40.96 us>\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := figures(p)
	if got["SEQ1M Q8T1 read"] != 7430 || got["RND4K Q1T1 read"] != 20630.6*4096/1e6 || got["RND4K Q1T1 write"] != 100 {
		t.Errorf("%v", got)
	}
}
