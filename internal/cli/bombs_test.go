package cli

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// bombLimitMiB is what any command may take on any trace file, however its
// counts and lengths were made: each bomb below is tiny on disk (zstd packs
// its repeats) and used to take gigabytes.
const bombLimitMiB = 256

// repeatJSON is "[" + item + ("," + item)×(n-1) + "]".
func repeatJSON(item string, n int) []byte {
	var b bytes.Buffer
	b.Grow(n * (len(item) + 1))
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteByte(']')
	return b.Bytes()
}

const bombHeader = `{"format_version":3,"tool":"crafted","tool_version":"","host":"h","os":"linux","arch":"amd64","kernel":"","backend":"crafted","target":{"mode":"all"},"command_line":null,"start":"2026-01-01T00:00:00Z"}`

// columnsChunk is a version 3 event chunk of n events whose process table
// holds names; every column zero-width, so every event is the first name's.
func columnsChunk(names []string, n int) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, s := range names {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(n))
	b = append(b, make([]byte, 16+8)...) // 16 zero widths, the padding
	return b
}

func TestBombsBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	header := tracefile.RawChunk{Kind: tracefile.KindHeader, Raw: []byte(bombHeader)}
	footer := tracefile.RawChunk{Kind: tracefile.KindFooter, Raw: []byte(`{"duration_ns":1000,"events":1}`)}
	summaryHeader := tracefile.RawChunk{Kind: tracefile.KindHeader, Raw: []byte(strings.Replace(bombHeader, `"mode":"all"`, `"mode":"all","summary":true`, 1))}
	// 60 M empty process names declared by one chunk (60 MB raw, a few
	// KB compressed).
	manyNames := binary.AppendUvarint(nil, 60_000_000)
	manyNames = append(manyNames, make([]byte, 60_000_000)...)
	// One 32 MiB process name, in three chunks.
	huge := columnsChunk([]string{strings.Repeat("x", 32<<20)}, 1)
	// A footer naming 5 M devices, and one with 5 M pids in the header:
	// under the 16 MB a header or footer may take, over the 4,096 entries
	// a list keeps. (Larger ones are refused whole: "corrupt trace".)
	devices := append(append([]byte(`{"duration_ns":1000,"events":0,"devices":`), repeatJSON(`{}`, 5_000_000)...), '}')
	pids := []byte(strings.Replace(bombHeader, `"mode":"all"`, `"mode":"pid","pids":`+string(repeatJSON("1", 5_000_000)), 1))
	bigFooter := append(append([]byte(`{"duration_ns":1000,"events":0,"devices":`), repeatJSON(`{}`, 20_000_000)...), '}')
	cases := []struct {
		name    string
		version uint16
		chunks  []tracefile.RawChunk
		want    string // in the output or the one-line error
	}{
		{"60 M names in a chunk", 3, []tracefile.RawChunk{header, {Kind: tracefile.KindColumns, Raw: manyNames}, footer}, "malformed"},
		{"32 MiB process names", 3, []tracefile.RawChunk{header, {Kind: tracefile.KindColumns, Raw: huge}, {Kind: tracefile.KindColumns, Raw: huge}, {Kind: tracefile.KindColumns, Raw: huge}, footer}, ""},
		{"20 M summary rows in a chunk", 2, []tracefile.RawChunk{summaryHeader, {Kind: tracefile.KindSummary, Raw: repeatJSON(`{}`, 20_000_000)}, footer}, "malformed summary chunk"},
		{"20 M devices in a 60 MB footer", 3, []tracefile.RawChunk{header, {Kind: tracefile.KindColumns, Raw: columnsChunk([]string{"x"}, 1)}, {Kind: tracefile.KindFooter, Raw: bigFooter}}, "corrupt trace: a footer of"},
		{"5 M devices in the footer", 3, []tracefile.RawChunk{header, {Kind: tracefile.KindColumns, Raw: columnsChunk([]string{"x"}, 1)}, {Kind: tracefile.KindFooter, Raw: devices}}, "left out"},
		{"5 M pids in the header", 3, []tracefile.RawChunk{{Kind: tracefile.KindHeader, Raw: pids}, {Kind: tracefile.KindColumns, Raw: columnsChunk([]string{"x"}, 1)}, footer}, "left out"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("bomb%d.iotrace", i))
			if err := tracefile.WriteCrafted(path, c.version, c.chunks); err != nil {
				t.Fatal(err)
			}
			// In a store too, for the list (which reads each new trace's
			// header and footer once).
			st := t.TempDir()
			os.MkdirAll(filepath.Join(st, "traces"), 0o755)
			os.Link(path, filepath.Join(st, "traces", "b2mb2m.iotrace"))
			for _, args := range [][]string{{"show", path}, {"classify", path}, {"report", "-o", path + ".html", path}, {"ls"}} {
				r, mib, took := runBounded(t, append([]string{"--store", st}, args...)...)
				t.Logf("%s: %.0f MiB, %v, exit %d", args[0], mib, took, r.code)
				if mib > bombLimitMiB {
					t.Errorf("%s of %s: %.0f MiB, the limit is %d MiB", args[0], c.name, mib, bombLimitMiB)
				}
				if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
					t.Fatalf("%s: a stack trace: %.500s", args[0], r.stderr)
				}
				if r.code != 0 && strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") > 0 && !strings.Contains(r.stderr, "warning") {
					t.Errorf("%s: not one line: %q", args[0], r.stderr)
				}
				if c.want != "" && args[0] == "show" && !strings.Contains(r.stdout+r.stderr, c.want) {
					t.Errorf("%s of %s: %q not said:\n%.1500s\n%s", args[0], c.name, c.want, r.stdout, r.stderr)
				}
			}
		})
	}
}

// Ten million I/Os sharing one timestamp — as a capture without times
// imports — are profiled in bounded memory: the re-sorting by arrival
// holds a bounded count, not the whole trace.
func TestOneTimestampBoundedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "same.iotrace")
	w, err := tracefile.Create(path, tracefile.Header{Tool: "ioshape-test", Backend: "crafted"})
	if err != nil {
		t.Fatal(err)
	}
	e := event.Event{Layer: event.Block, Op: event.Read, Start: 1000, End: 1000, Size: 4096, Bytes: 4096, Pid: 1, Tid: 1, Comm: "x", Dev: event.Dev{Major: 8}}
	for i := range 3_000_000 {
		e.Offset = int64(i%1000) * 4096
		if err := w.Write(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(tracefile.Footer{DurationNs: 1}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", path}, {"classify", path}} {
		r, mib, took := runBounded(t, append([]string{"--store", t.TempDir()}, args...)...)
		t.Logf("%s: %.0f MiB, %v", args[0], mib, took)
		if r.code != 0 {
			t.Errorf("%s: %s", args[0], r.stderr)
		}
		if mib > bombLimitMiB {
			t.Errorf("%s of 3 M I/Os at one instant: %.0f MiB, the limit is %d MiB", args[0], mib, bombLimitMiB)
		}
	}
}

// Imports keep names and devices bounded: 80 I/Os by a 900 KB process name
// import (the name cut to what a trace keeps), and a corpus naming
// 100,000 disks keeps 4,095 and folds the rest into "other".
func TestImportNamesAndDevicesBounded(t *testing.T) {
	dir := t.TempDir()
	snoop := filepath.Join(dir, "biosnoop.txt")
	var b bytes.Buffer
	b.WriteString("TIME(s)     COMM           PID    DISK    T SECTOR     BYTES   LAT(ms)\n")
	name := strings.Repeat("n", 900<<10) // lines are read up to 1 MiB
	for i := range 80 {
		fmt.Fprintf(&b, "%d.000100 %s 4242 sda W %d 4096 0.10\n", i, name, 1000+8*i)
	}
	if err := os.WriteFile(snoop, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	msr := filepath.Join(dir, "msr.csv")
	b.Reset()
	for i := range 100_000 {
		fmt.Fprintf(&b, "%d,host%d,0,Read,%d,4096,100\n", 128166372000000000+int64(i)*10000, i, i*4096)
	}
	if err := os.WriteFile(msr, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, format string
		want         string
	}{
		{snoop, "biosnoop", `"comm": "` + strings.Repeat("n", 256) + `"`},
		{msr, "msr", "devices past the first 4095"},
	} {
		store := t.TempDir()
		r, mib, _ := runBounded(t, "--store", store, "import", "--format", c.format, c.file)
		t.Logf("import %s: %.0f MiB", c.format, mib)
		if r.code != 0 {
			t.Fatalf("import %s: %s", c.format, r.stderr)
		}
		if mib > bombLimitMiB {
			t.Errorf("import %s: %.0f MiB, the limit is %d MiB", c.format, mib, bombLimitMiB)
		}
		id := strings.Fields(r.stdout)[0]
		s := ioshape(t, nil, "--store", store, "show", "--json", id)
		if s.code != 0 || !strings.Contains(s.stdout, c.want) {
			t.Errorf("show of the %s import: exit %d, %q not in it: %.300s", c.format, s.code, c.want, s.stderr)
		}
	}
}
