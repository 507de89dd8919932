package parse

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/testutil"
)

func readFsUsage(t *testing.T, in string) (evs []event.Event, skipped, lost int, errs []string) {
	t.Helper()
	r := NewFsUsageReader(strings.NewReader(in), "in", 4096)
	for r.Scan() {
		switch rec := r.Record(); rec.Kind {
		case KindEvent:
			evs = append(evs, rec.Event)
		case KindSkip:
			skipped++
		case KindLost:
			lost++
		case KindError:
			errs = append(errs, rec.Err.Error())
		}
	}
	return
}

// Lines in the layout fs_usage.c prints (tracing.md §5.1), covering each
// field's variants.
func TestFsUsageLines(t *testing.T) {
	in := strings.Join([]string{
		"23:59:59.999000    RdData[AT2]     D=0x00a886d2  B=0x1000   /dev/disk3s5  /Users/me/My Documents/file name.txt                  0.000875 W Final Cut Pro.17658480",
		"23:59:59.999500    WrMeta[SNP]     D=0x00000010  B=0x8000   /dev/disk3s5                                                        0.000001 W kernel_task.101",
		"00:00:00.000200    PgIn[A]         D=0x00000020  B=0x10000  /dev/disk4  /Applications/App.app/Contents/MacOS/App             0.000100 W Code Helper (Ren.11405",
		"00:00:00.000300    RdData[S]       D=0x00000030  [  5]                                                                            0.000010 W mdworker.9",
		"00:00:00.000400    WrData[S]       D=0x000168f7  B=0x32     /dev/NOTFOUND  /dev/null                                              0.000001 W searchpartyusera.",
		"00:00:00.000500  ioctl             F=38  <CMD=0x4004667a>                                                                       0.000009   Code Helper.11507",
		"fs_usage: buffer overrun, events generated too quickly",
		"00:00:00.000600    RdData[A]       D=0xZZ  B=0x1000   /dev/disk3s5  /x    0.000001 W a.1",
	}, "\n")
	evs, skipped, lost, errs := readFsUsage(t, in)
	if len(evs) != 4 || skipped != 2 || lost != 1 || len(errs) != 1 || !strings.Contains(errs[0], "in:8:") {
		t.Fatalf("events %d, skipped %d, lost %d, errors %v", len(evs), skipped, lost, errs)
	}
	a, m, p, e := evs[0], evs[1], evs[2], evs[3]
	if a.Op != event.Read || a.Size != 4096 || a.Offset != 0xa886d2*4096 || a.Comm != "Final Cut Pro" || a.Tid != 17658480 ||
		a.Flags&event.FlagAsync == 0 || a.End != 0 || a.Start != -875000 {
		t.Errorf("RdData: %+v", a)
	}
	if m.Op != event.Write || m.Flags&(event.FlagMeta|event.FlagSync|event.FlagDirect) != event.FlagMeta|event.FlagSync|event.FlagDirect || m.Size != 0x8000 {
		t.Errorf("WrMeta with empty path: %+v", m)
	}
	// Past midnight the clock keeps counting.
	if p.End != 1_200_000 || p.Comm != "Code Helper (Ren" || p.Tid != 11405 || p.Dev == a.Dev {
		t.Errorf("PgIn after midnight: %+v", p)
	}
	if e.Errno != 5 || e.Bytes != 0 {
		t.Errorf("error form: %+v", e)
	}
}

// The real capture in ../shared/samples (fs_usage -w on an APFS Mac, 1192
// lines) holds 36 disk I/O lines, 12 of them to /dev/NOTFOUND (/dev/null):
// 24 real disk I/Os.
func TestFsUsageRealCapture(t *testing.T) {
	data, err := os.ReadFile(testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log"))
	if err != nil {
		t.Fatal(err)
	}
	evs, skipped, lost, errs := readFsUsage(t, string(data))
	if len(evs) != 24 || len(errs) != 0 || lost != 0 {
		t.Fatalf("%d events (want 24), errors %v", len(evs), errs)
	}
	if lines := bytes.Count(data, []byte("\n")); skipped+len(evs) != lines {
		t.Errorf("%d skipped + %d events != %d lines", skipped, len(evs), lines)
	}
	var meta, bytesRead int64
	for _, e := range evs {
		if e.Op != event.Read || e.Size < 4096 {
			t.Errorf("unexpected %+v", e)
		}
		if e.Flags&event.FlagMeta != 0 {
			meta++
		}
		bytesRead += e.Bytes
	}
	if meta != 6 {
		t.Errorf("%d metadata reads, want 6", meta)
	}
}

func FuzzFsUsage(f *testing.F) {
	f.Add("17:24:17.532370    RdData[ST2]     D=0x009761a9  B=0x4000   /dev/disk3s5  /private/var/log/wifi.log   0.000745 W airportd.2578587")
	f.Add("00:00:00.000300    RdData[S]       D=0x00000030  [  5]     0.000010 W mdworker.9")
	f.Add("17:24:16.586007  ioctl             F=38  <CMD=0x4004667a>     0.000009   Code Helper.11507")
	f.Fuzz(func(t *testing.T, line string) {
		r := NewFsUsageReader(strings.NewReader(line), "", 4096)
		for r.Scan() {
			if rec := r.Record(); rec.Kind == KindError && rec.Err == nil {
				t.Fatal("error without error")
			}
		}
	})
}

// Times of day have hours 00–23: "25:00:00" is not a time fs_usage prints.
func TestTimeOfDayLimits(t *testing.T) {
	for _, ok := range []string{"00:00:00", "23:59:59.999999", "12:30:01.5"} {
		if _, err := timeOfDay(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"24:00:00", "25:00:00", "59:59:59", "12:60:00", "12:00:60", "1:00:00"} {
		if _, err := timeOfDay(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}
