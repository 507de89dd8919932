package parse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/testutil"
)

// scanner is what every tracer-output reader offers.
type scanner interface {
	Scan() bool
	Record() *Record
	Err() error
}

// dump renders every record of a tracer output as one line of text.
func dump(t *testing.T, input []byte) string {
	t.Helper()
	return dumpWith(t, NewBpftraceReader(bytes.NewReader(input), "in", "amd64"))
}

func dumpWith(t *testing.T, r scanner) string {
	t.Helper()
	var out bytes.Buffer
	for r.Scan() {
		rec := r.Record()
		switch rec.Kind {
		case KindEvent:
			e := &rec.Event
			fmt.Fprintf(&out, "event %s %s %s start=%d dispatch=%d end=%d dev=%s ino=%d off=%d size=%d bytes=%d errno=%d pid=%d tid=%d comm=%q flags=%s\n",
				e.Layer, e.Op, e.Call, e.Start, e.Dispatch, e.End, e.Dev, e.Inode, e.Offset, e.Size, e.Bytes, e.Errno, e.Pid, e.Tid, e.Comm, e.Flags)
		case KindLost:
			fmt.Fprintf(&out, "lost %d\n", rec.N)
		case KindCounter:
			fmt.Fprintf(&out, "counter %s=%d\n", rec.Name, rec.N)
		case KindFork:
			fmt.Fprintf(&out, "fork %d -> %d\n", rec.Pid, rec.Child)
		case KindExit:
			fmt.Fprintf(&out, "exit %d\n", rec.Pid)
		case KindReady:
			fmt.Fprintf(&out, "ready\n")
		case KindNotice:
			fmt.Fprintf(&out, "notice %q\n", rec.Text)
		case KindError:
			fmt.Fprintf(&out, "error %v\n", rec.Err)
		case KindSkip:
			fmt.Fprintf(&out, "skip\n")
		case KindMark:
			fmt.Fprintf(&out, "mark cpu %d\n", rec.N)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The inputs are real output of dscripts/ioshape.bt (bpftrace 0.17, Linux
// 6.18), captured with `ioshape record --raw-output`, plus one file of
// malformed lines.
func TestBpftraceGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/bpftrace-*.txt")
	if len(files) < 3 {
		t.Fatalf("testdata missing: %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := dump(t, in)
			testutil.Golden(t, strings.TrimSuffix(f, ".txt")+".golden", []byte(got))
		})
	}
}

// The fakes' replay files (testdata/fake, in the formats of ioshape.d and
// of fs_usage -w) parsed, as golden files.
func TestReplayGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		r    func([]byte) scanner
	}{
		{"dtrace-replay.txt", func(b []byte) scanner { return NewDTraceReader(bytes.NewReader(b), "in", 4096) }},
		{"fs_usage-replay.txt", func(b []byte) scanner { return NewFsUsageReader(bytes.NewReader(b), "in", 4096) }},
	} {
		t.Run(c.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fake", c.file))
			if err != nil {
				t.Fatal(err)
			}
			got := dumpWith(t, c.r(in))
			testutil.Golden(t, filepath.Join("testdata", strings.TrimSuffix(c.file, ".txt")+".golden"), []byte(got))
		})
	}
}

func TestBpftraceFields(t *testing.T) {
	in := "B 100 110 200 266338304 2048 4096 0 FWFS 42 43 0 my prog\n" +
		"B 100 0 250 266338304 0 0 0 FF 0 0 1 kworker/0:1H\n" +
		"S 11 100 200 42 42 3 266338304 7 0 9223372036854775807 131072 32768 1 cp\n" +
		"S 11 100 200 42 42 4 266338304 8 0 9223372036854775807 131072 49152 2 cp\n" +
		"S 16 100 900 42 42 6 266338304 9 8192 4096 4096 16384 0 fio\n" +
		"S 27 90 91 42 42 3 266338304 7 -1 2 0 32768 0 cp\n" +
		"S 27 90 91 42 42 3 266338304 7 -1 1 0 32768 0 cp\n" +
		"S 27 90 91 42 42 3 266338304 7 -1 4 0 32768 0 cp\n"
	r := NewBpftraceReader(strings.NewReader(in), "", "amd64")
	var evs []event.Event
	for r.Scan() {
		if r.Record().Kind != KindEvent {
			t.Fatalf("unexpected record %+v", r.Record())
		}
		evs = append(evs, r.Record().Event)
	}
	b := evs[0]
	if b.Layer != event.Block || b.Op != event.Write || b.Flags&(event.FlagPreflush|event.FlagFUA|event.FlagSync) != event.FlagPreflush|event.FlagFUA|event.FlagSync ||
		b.Offset != 2048*512 || b.Dev != (event.Dev{Major: 254}) || b.Comm != "my prog" || b.Start != 100 || b.Dispatch != 110 {
		t.Errorf("block write: %+v", b)
	}
	if f := evs[1]; f.Op != event.Flush || f.Flags&event.FlagKernel == 0 || f.Flags&event.FlagDispatched != 0 || f.Offset != -1 {
		t.Errorf("flush: %+v", f)
	}
	src, dst := evs[2], evs[3]
	if src.Op != event.Read || src.Flags&event.FlagCopySource == 0 || src.Size != 131072 || dst.Op != event.Write || dst.Flags&event.FlagCopySource != 0 {
		t.Errorf("copy_file_range halves: %+v / %+v", src, dst)
	}
	if a := evs[4]; a.Call != event.CallAioRead || a.Flags&(event.FlagAsync|event.FlagDirect) != event.FlagAsync|event.FlagDirect || a.Latency() != 800 {
		t.Errorf("aio read: %+v", a)
	}
	// posix_fadvise: the advice where the size goes, made a flag; not an I/O.
	for i, want := range []event.Flags{event.FlagAdviceSequential, event.FlagAdviceRandom, 0} {
		a := evs[5+i]
		if a.Call != event.CallFadvise || a.Flags&(event.FlagAdviceSequential|event.FlagAdviceRandom) != want || a.Size != 0 || a.IsIO() {
			t.Errorf("fadvise: %+v, want flags %v", a, want)
		}
	}
}

func FuzzBpftrace(f *testing.F) {
	files, _ := filepath.Glob("testdata/bpftrace-*.txt")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		lines := bytes.Split(b, []byte("\n"))
		for _, line := range lines[:min(len(lines), 20)] {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r := NewBpftraceReader(bytes.NewReader(line), "", "amd64")
		for r.Scan() {
			rec := r.Record()
			if rec.Kind == KindError && rec.Err == nil {
				t.Fatal("error record without error")
			}
			if rec.Kind == 0 {
				t.Fatalf("record without kind for %q", line)
			}
		}
	})
}

// Raw output says which architecture recorded it ("READY arm64"), and its
// O_DIRECT bit is that machine's, whatever machine imports it.
func TestBpftraceReadyNamesTheArchitecture(t *testing.T) {
	// fflags 0x10000 is O_DIRECT on arm64 (and O_LARGEFILE-ish noise on amd64).
	line := "S 3 100 200 42 42 6 266338304 9 0 4096 4096 65536 0 fio\n"
	for _, c := range []struct {
		in, hostArch string
		direct       bool
	}{
		{"READY arm64\n" + line, "amd64", true},
		{"READY amd64\n" + line, "arm64", false},
		{"READY\n" + line, "arm64", true}, // no word: the importer's --arch (here arm64)
	} {
		r := NewBpftraceReader(strings.NewReader(c.in), "", c.hostArch)
		var ev *event.Event
		for r.Scan() {
			if r.Record().Kind == KindEvent {
				e := r.Record().Event
				ev = &e
			}
		}
		if ev == nil {
			t.Fatalf("%q: no event", c.in)
		}
		if got := ev.Flags&event.FlagDirect != 0; got != c.direct {
			t.Errorf("%q read on %s: direct %v, want %v", c.in, c.hostArch, got, c.direct)
		}
	}
	r := NewBpftraceReader(strings.NewReader("READY sparc\n"), "", "amd64")
	if !r.Scan() || r.Record().Kind != KindError {
		t.Errorf("an unknown architecture is not a syntax error: %+v", r.Record())
	}
}
