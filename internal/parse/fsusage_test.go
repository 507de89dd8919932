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

// Lines in the layout fs_usage.c prints, covering each
// field's variants.
func TestFsUsageLines(t *testing.T) {
	in := strings.Join([]string{
		"23:59:59.999000    RdData[AT2]     D=0x00a886d2  B=0x1000   /dev/disk3s5  /Users/me/My Documents/file name.txt                  0.000875 W Final Cut Pro.17658480",
		"23:59:59.999500    WrMeta[SNP]     D=0x00000010  B=0x8000   /dev/disk3s5                                                        0.000001 W kernel_task.101",
		"00:00:00.000200    PgIn[A]         D=0x00000020  B=0x10000  /dev/disk4  /Applications/App.app/Contents/MacOS/App             0.000100 W Code Helper (Ren.11405",
		"00:00:00.000300    RdData[S]       D=0x00000030  [  5]                                                                            0.000010 W mdworker.9",
		"00:00:00.000350    RdData[S]       D=0x00000001  [ 16] /dev/sophos1                                                               0.000010 W SophosScanD.77",
		"00:00:00.000400    WrData[S]       D=0x000168f7  B=0x32     /dev/NOTFOUND  /dev/null                                              0.000001 W searchpartyusera.",
		"00:00:00.000500  ioctl             F=38  <CMD=0x4004667a>                                                                       0.000009   Code Helper.11507",
		"fs_usage: buffer overrun, events generated too quickly",
		"00:00:00.000600    RdData[A]       D=0xZZ  B=0x1000   /dev/disk3s5  /x    0.000001 W a.1",
	}, "\n")
	evs, skipped, lost, errs := readFsUsage(t, in)
	if len(evs) != 5 || skipped != 2 || lost != 1 || len(errs) != 1 || !strings.Contains(errs[0], "in:9:") {
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
	// A failed I/O, not a malformed line, even with a path after the errno.
	if s := evs[4]; s.Errno != 16 || s.Comm != "SophosScanD" || s.Op != event.Read {
		t.Errorf("error form with a path: %+v", s)
	}
}

// The real capture in ../shared/samples (fs_usage -w on an APFS Mac, 1192
// lines), counted by hand (grep and a calculator): 36 disk I/O lines, 12 of
// them to /dev/NOTFOUND (/dev/null), so 24 block-layer events (18 RdData,
// 6 RdMeta); 359 read/write-family calls — read 128 (one failed with
// errno 35) + pread 12 = 140 reads of 230,249 + 61,310 bytes; write 199 +
// guarded_pwrite_np 16 + writev 4 = 219 writes of 211,241 + 65,920 + 358
// bytes; 14 PAGE_IN_FILE page-ins.
func TestFsUsageRealCapture(t *testing.T) {
	data, err := os.ReadFile(testutil.Shared(t, "samples", "macos_fs_usage_apfs_desktop.log"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewFsUsageReader(bytes.NewReader(data), "in", 4096)
	var block, calls, skipped, reads, writes, failed int
	var meta, blockRead, readBytes, writeBytes int64
	procs := map[string]int{}
	var preads []event.Event
	for r.Scan() {
		rec := r.Record()
		switch rec.Kind {
		case KindSkip:
			skipped++
			continue
		case KindEvent:
		default:
			t.Fatalf("line %d: %+v", r.line, rec)
		}
		e := rec.Event
		if e.Layer == event.Block {
			block++
			if e.Op != event.Read || e.Size < 4096 {
				t.Errorf("unexpected %+v", e)
			}
			if e.Flags&event.FlagMeta != 0 {
				meta++
			}
			blockRead += e.Bytes
			continue
		}
		calls++
		procs[e.Comm]++
		if e.Errno != 0 {
			failed++
		}
		switch e.Op {
		case event.Read:
			reads++
			readBytes += e.Bytes
		case event.Write:
			writes++
			writeBytes += e.Bytes
		}
		if e.Call == event.CallPread64 {
			preads = append(preads, e)
		}
	}
	if block != 24 || meta != 6 || calls != 359 || reads != 140 || writes != 219 || failed != 1 {
		t.Errorf("block %d (meta %d), calls %d: %d reads, %d writes, %d failed", block, meta, calls, reads, writes, failed)
	}
	if readBytes != 230249+61310 || writeBytes != 211241+65920+358 {
		t.Errorf("read %d bytes, wrote %d", readBytes, writeBytes)
	}
	if lines := bytes.Count(data, []byte("\n")); skipped+block+calls != lines {
		t.Errorf("%d skipped + %d events != %d lines", skipped, block+calls, lines)
	}
	if r.PageIns != 14 {
		t.Errorf("%d page-ins, want 14", r.PageIns)
	}
	want := map[string]int{"Code Helper": 232, "ps": 28, "searchpartyd": 26, "Code Helper (Plugin)": 22, "Discord Helper (Renderer)": 8,
		"launchd": 6, "imagent": 6, "searchpartyuseragent": 6, "Electron": 4, "systemstats": 4, "WhatsApp": 3, "mdworker_shared": 3,
		"sudo": 3, "which": 2, "bash": 2, "airportd": 2, "mds_stores": 2}
	for name, n := range want {
		if procs[name] != n {
			t.Errorf("%s: %d calls, want %d", name, procs[name], n)
		}
	}
	if len(procs) != len(want) {
		t.Errorf("processes %v", procs)
	}
	// pread's O= decoded: B=0x4f7a O=0x4f7a00000000 is 0x4f7a bytes at 0;
	// B=0x1000 O=0x1000002f9730 is 4 KiB at 0x2f9730.
	found := 0
	for _, e := range preads {
		switch {
		case e.Bytes == 0x4f7a && e.Size == 0x4f7a:
			found++
			if e.Offset != 0 {
				t.Errorf("pread of 0x4f7a bytes at %#x, want 0", e.Offset)
			}
		case e.Bytes == 0x1000 && e.Offset == 0x2f9730: // read twice, by two threads
			found++
		}
	}
	if found != 3 {
		t.Errorf("decoded preads: %+v", preads)
	}
}

// O= decoding, descriptor positions and F_NOCACHE, on lines in fs_usage's
// layouts.
func TestFsUsageCalls(t *testing.T) {
	in := strings.Join([]string{
		"10:00:00.000100  open              F=5        (R_____________)  /Users/me/big.mov                 0.000010   cp.100",
		"10:00:00.000200  read              F=5    B=0x100000                                              0.000300 W cp.100",
		"10:00:00.000300  read              F=5    B=0x100000                                              0.000300 W cp.100",
		"10:00:00.000400  lseek             F=5    O=0x00001000         <SEEK_SET>                          0.000001   cp.100",
		"10:00:00.000500  read              F=5    B=0x800                                                 0.000100   cp.100",
		"10:00:00.000600  fcntl             F=5  <CACHING OFF>                                             0.000001   cp.100",
		"10:00:00.000700  pread             F=5    B=0x1000     O=0x1000fffff000                           0.000050   cp.100",
		"10:00:00.000800  pread             F=5    B=0x1000     O=0x100000000000                           0.000050   cp.100",
		"10:00:00.000900  pread             F=5  [  5]  O=0x1000000001000                                  0.000050   cp.100",
		"10:00:00.001000  guarded_pwrite_np F=4    B=0x1018     O=0x6e2ecc0000001018                       0.000113   searchpartyd.7",
		"10:00:00.001100  fcntl             F=4  <FULLFSYNC>                                               0.002000 W searchpartyd.7",
		"10:00:00.001200  write             F=9    B=0x200                                                 0.000010   cp.100",
		"10:00:00.001300  clonefileat            /Users/me/a.mov                                           0.000400   cp.101",
		"10:00:00.001400  close             F=5                                                            0.000001   cp.100",
		"10:00:00.001500  read              F=5    B=0x10                                                  0.000001   cp.100",
		"10:00:00.001600  PAGE_IN_FILE      A=0x0102c24000                                                 0.000087   bash.9",
		"10:00:00.001700  read              F=5    B=0x10",
	}, "\n")
	r := NewFsUsageReader(strings.NewReader(in), "in", 4096)
	var evs []event.Event
	var errs []string
	for r.Scan() {
		switch rec := r.Record(); rec.Kind {
		case KindEvent:
			evs = append(evs, rec.Event)
		case KindError:
			errs = append(errs, rec.Err.Error())
		}
	}
	if len(evs) != 12 || len(errs) != 1 || !strings.Contains(errs[0], "in:17:") {
		t.Fatalf("%d events, errors %v", len(evs), errs)
	}
	type want struct {
		call   event.Call
		op     event.Op
		offset int64
		size   int64
		errno  int32
		direct bool
	}
	for i, w := range []want{
		{event.CallRead, event.Read, 0, 1 << 20, 0, false},
		{event.CallRead, event.Read, 1 << 20, 1 << 20, 0, false},
		{event.CallRead, event.Read, 0x1000, 0x800, 0, false},
		{event.CallNoCache, event.Other, -1, 0, 0, false},
		{event.CallPread64, event.Read, 0xfffff000, 0x1000, 0, true},
		{event.CallPread64, event.Read, 1 << 32, 0x1000, 0, true}, // past 4 GiB: the high bits follow the last offset
		{event.CallPread64, event.Read, -1, 0, 5, true},
		{event.CallPwrite64, event.Write, -1, 0x1018, 0, false},
		{event.CallFullFsync, event.Flush, -1, 0, 0, false},
		{event.CallWrite, event.Write, -1, 0x200, 0, false}, // a descriptor opened before the trace
		{event.CallClone, event.Other, -1, 0, 0, false},
		{event.CallRead, event.Read, -1, 0x10, 0, false}, // closed, so the position is unknown again
	} {
		e := evs[i]
		if e.Call != w.call || e.Op != w.op || e.Offset != w.offset || e.Size != w.size || e.Errno != w.errno || (e.Flags&event.FlagDirect != 0) != w.direct {
			t.Errorf("event %d: %+v, want %+v", i, e, w)
		}
	}
	if e := evs[0]; e.Layer != event.Syscall || e.Start != -300_000 || e.End != 0 || e.Comm != "cp" || e.Tid != 100 || e.Inode != 6 {
		t.Errorf("first read: %+v", e)
	}
	if r.PageIns != 1 {
		t.Errorf("page-ins %d", r.PageIns)
	}
}

func FuzzFsUsage(f *testing.F) {
	f.Add("17:24:17.532370    RdData[ST2]     D=0x009761a9  B=0x4000   /dev/disk3s5  /private/var/log/wifi.log   0.000745 W airportd.2578587")
	f.Add("00:00:00.000300    RdData[S]       D=0x00000030  [  5]     0.000010 W mdworker.9")
	f.Add("17:24:16.586007  ioctl             F=38  <CMD=0x4004667a>     0.000009   Code Helper.11507")
	f.Add("17:24:17.521046  pread             F=4    B=0x4f7a     O=0x4f7a00000000      0.000024   mdworker_shared.2595553")
	f.Add("17:24:20.114578  read              F=3  [ 35]          0.000002   Code Helper.11507")
	f.Add("17:24:17.248247  lseek             F=9    O=0x0009b3f2         <SEEK_CUR>     0.000001   bash.7")
	f.Add("17:24:17.281062  open              F=3        (R___________f_)   /bin/bash   0.000010   bash.7")
	f.Add("10:00:00.000600  fcntl             F=5  <CACHING OFF>        0.000001   cp.100")
	f.Add("10:00:00.001300  clonefileat       [  2]     /Users/me/a.mov     0.000400   cp.101")
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
