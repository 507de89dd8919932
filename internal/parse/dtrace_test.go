package parse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// Every message here is quoted from libdtrace's
// source or from real reports.
func TestDTraceMessages(t *testing.T) {
	for _, c := range []struct {
		line string
		kind MessageKind
		n    int64
	}{
		{"dtrace: 1 drop on CPU 0", MsgDrop, 1},
		{"dtrace: 11 drops on CPU 0", MsgDrop, 11},
		{"dtrace: 3 aggregation drops on CPU 2", MsgAggDrop, 3},
		{"dtrace: 1347 dynamic variable drops with non-empty dirty list", MsgDynDrop, 1347},
		{"dtrace: 1 dynamic variable drop", MsgDynDrop, 1},
		{"dtrace: 12 dynamic variable drops with non-empty rinsing list", MsgDynDrop, 12},
		{"dtrace: 38 speculative drops", MsgSpecDrop, 38},
		{"dtrace: 1 failed speculation (no speculative buffer available)", MsgSpecDrop, 1},
		{"dtrace: [DTRACEDROP_PRINCIPAL] 5 drops on CPU 1", MsgDrop, 5},
		{"dtrace: error on enabled probe ID 2158 (ID 552: syscall::sysctl:return): invalid kernel access in action #10 at DIF offset 40", MsgRuntimeError, 1},
		{"dtrace: system integrity protection is on, some features will not be available", MsgSIP, 0},
		{"dtrace: invalid probe specifier io:::start: probe description io:::start does not match any probes. System Integrity Protection is on", MsgSIP, 0},
		{"dtrace: failed to execute ls: dtrace cannot control executables signed with restricted entitlements", MsgFatal, 0},
		{"dtrace: failed to compile script x.d: line 3: syntax error", MsgFatal, 0},
		{"dtrace: description 'io:::start' matched 1 probe", MsgNotice, 0},
		{"something else", MsgOther, 0},
	} {
		m := ParseDTraceMessage(c.line)
		if m.Kind != c.kind || m.N != c.n {
			t.Errorf("%q: kind %d n %d; want %d %d", c.line, m.Kind, m.N, c.kind, c.n)
		}
	}
}

func TestDTraceOutput(t *testing.T) {
	in := strings.Join([]string{
		"READY dtrace",
		"I 1000 251000 1 17 150777072 4096 4096 0 1 1111 42 firefox",
		"I 2000 902000 1 17 150777175 487424 487424 0 2 661 43 Slack Helper",
		"I 3000 103000 1 17 150777294 4096 0 5 0 0 7 kernel_task",
		"C pread 500 900 1111 42 7 65536 1048576 65536 0 firefox",
		"C readv 500 700 1111 42 7 -1 -1 12288 0 firefox",
		"C write 500 600 1111 42 9 4096 -1 -1 28 firefox",
		"C fcntl_fullfsync 100 9000 1111 42 9 0 -1 0 0 firefox",
		"C clonefileat 100 200 1111 42 -1 0 -1 0 0 Finder",
		"C splice 1 2 3 4 5 6 7 8 9 x",
		"@unmatched: 4",
	}, "\n")
	r := NewDTraceReader(strings.NewReader(in), "in", 4096)
	var evs []event.Event
	var errs []string
	var unmatched int64
	for r.Scan() {
		switch rec := r.Record(); rec.Kind {
		case KindEvent:
			evs = append(evs, rec.Event)
		case KindError:
			errs = append(errs, rec.Err.Error())
		case KindCounter:
			unmatched = rec.N
		}
	}
	if len(evs) != 8 || len(errs) != 1 || !strings.Contains(errs[0], "in:10: unknown call") || unmatched != 4 {
		t.Fatalf("%d events, errors %v, unmatched %d", len(evs), errs, unmatched)
	}
	// Events come in completion order.
	byEnd := func(end int64) event.Event {
		for _, e := range evs {
			if e.End == end {
				return e
			}
		}
		t.Fatalf("no event ends at %d", end)
		return event.Event{}
	}
	rd, wr, kerr := byEnd(251000), byEnd(902000), byEnd(103000)
	if rd.Op != event.Read || rd.Flags&event.FlagSync == 0 || rd.Offset != 150777072*4096 || rd.Latency() != 250000 || rd.Dev != (event.Dev{Major: 1, Minor: 17}) {
		t.Errorf("sync read: %+v", rd)
	}
	if wr.Op != event.Write || wr.Flags&event.FlagAsync == 0 || wr.Comm != "Slack Helper" {
		t.Errorf("async write: %+v", wr)
	}
	if kerr.Flags&event.FlagKernel == 0 || kerr.Errno != 5 || kerr.Bytes != 0 {
		t.Errorf("kernel write with error: %+v", kerr)
	}
	pr, rv, we, ff, cl := byEnd(900), byEnd(700), byEnd(600), byEnd(9000), byEnd(200)
	if pr.Call != event.CallPread64 || pr.Offset != 1048576 || pr.Bytes != 65536 {
		t.Errorf("pread: %+v", pr)
	}
	if rv.Size != 12288 || rv.Offset != -1 {
		t.Errorf("readv: %+v", rv)
	}
	if we.Errno != 28 || we.Bytes != 0 {
		t.Errorf("failed write: %+v", we)
	}
	if ff.Op != event.Flush || cl.Call != event.CallClone || cl.Op != event.Other {
		t.Errorf("fullfsync %+v, clone %+v", ff, cl)
	}
}

func FuzzDTrace(f *testing.F) {
	f.Add("I 1000 251000 1 17 150777072 4096 4096 0 1 1111 42 firefox")
	f.Add("C pread 500 900 1111 42 7 65536 1048576 65536 0 firefox")
	f.Add("READY dtrace 1000 linux")
	f.Add("C aio_read 100 110 60 60 5 4096 8192 3 0 fio\nC io_getevents 200 300 60 60 -1 -1 -1 2 0 fio")
	f.Add("I 1000 2000 254 0 8 4096 4096 0 96 77 77 fio\nI 1 2 3 4 5 6 7 8 1 9 9 x")
	f.Fuzz(func(t *testing.T, line string) {
		r := NewDTraceReader(strings.NewReader(line), "", 512)
		for r.Scan() {
			if rec := r.Record(); rec.Kind == KindError && rec.Err == nil {
				t.Fatal("error without error")
			}
		}
		ParseDTraceMessage(line)
	})
}

func readDTrace(t *testing.T, in string, platform string) (evs []event.Event, counters map[string]int64, r *DTraceReader) {
	t.Helper()
	r = NewDTraceReader(strings.NewReader(in), "in", 0)
	r.Platform = platform
	counters = map[string]int64{}
	for r.Scan() {
		switch rec := r.Record(); rec.Kind {
		case KindEvent:
			evs = append(evs, rec.Event)
		case KindCounter:
			counters[rec.Name] += rec.N
		case KindError:
			t.Errorf("%v", rec.Err)
		}
	}
	return evs, counters, r
}

// Today's script names its platform and decodes flags with the system's
// own B_* constants: 1 read, 2 async, 4 physical, 8 paging, 16 meta.
// Linux's block numbers are 512-byte sectors, and its kernel threads have
// pids of their own.
func TestDTracePlatformOutput(t *testing.T) {
	in := strings.Join([]string{
		"READY dtrace 100 linux",
		"I 1000 12000 254 0 8 4096 4096 0 5 77 77 fio",
		"I 1000 13000 254 0 16 8192 8192 0 2 312 312 kworker/u4:2",
		"I 1000 14000 254 0 24 4096 4096 0 0 310 310 jbd2/vda1-8",
		"C copy_file_range_src 100 900 50 50 3 65536 -1 65536 0 cp",
		"C copy_file_range 100 901 50 50 4 65536 -1 65536 0 cp",
		"C aio_read 100 110 60 60 5 4096 8192 3 0 fio",
		"C io_getevents 200 300 60 60 -1 -1 -1 2 0 fio",
		"C io_getevents 400 500 60 60 -1 -1 -1 1 0 fio",
		"C aio_write 600 610 60 60 5 4096 0 -1 11 fio",
		"@unmatched: 2",
		"@unfinished: 3",
	}, "\n")
	evs, counters, _ := readDTrace(t, in, "")
	if len(evs) != 8 || counters[CounterUnmatched] != 2 || counters[CounterUnfinished] != 3 {
		t.Fatalf("%d events, counters %v", len(evs), counters)
	}
	// In completion order: the aio reads, the copy, then the block layer.
	rd, wb, jb := evs[5], evs[6], evs[7]
	if rd.Op != event.Read || rd.Offset != 8*512 || rd.Flags&event.FlagDirect == 0 || rd.Flags&event.FlagKernel != 0 {
		t.Errorf("direct read: %+v", rd)
	}
	if wb.Op != event.Write || wb.Flags&(event.FlagAsync|event.FlagKernel) != event.FlagAsync|event.FlagKernel || jb.Flags&event.FlagKernel == 0 {
		t.Errorf("writeback %+v, journal %+v", wb, jb)
	}
	src, dst := evs[3], evs[4]
	if src.End > dst.End {
		src, dst = dst, src
	}
	if src.Op != event.Read || src.Flags&event.FlagCopySource == 0 || src.Inode != 4 || dst.Op != event.Write || dst.Size != 65536 || dst.Inode != 5 {
		t.Errorf("copy halves %+v %+v", src, dst)
	}
	// Three submitted, reaped two then one, in submission order; a failed
	// submission adds nothing.
	a, b, c := evs[0], evs[1], evs[2]
	if a.Call != event.CallAioRead || a.Start != 100 || a.End != 300 || a.Offset != 8192 || a.Bytes != 4096 || a.Flags&event.FlagAsync == 0 ||
		b.End != 300 || b.Offset != -1 || c.End != 500 {
		t.Errorf("aio %+v %+v %+v", a, b, c)
	}
}

// Output of scripts before the platform word carries raw b_flags: Linux's
// are recognised (B_PHYS and one of B_READ 0x40 / B_WRITE 0x100), held
// back until sure, and decoded; an xnu line decides at once.
func TestDTraceRawFlagsRecognised(t *testing.T) {
	lines := []string{"READY dtrace 1000"}
	for i := 0; i < 70; i++ {
		lines = append(lines, fmt.Sprintf("I %d %d 254 0 8 4096 4096 0 96 77 77 fio", 1000+i*1000, 2000+i*1000)) // 0x60: B_PHYS|B_READ
	}
	lines = append(lines, "I 71000 72000 254 0 8 4096 4096 0 288 77 77 fio") // 0x120: B_PHYS|B_WRITE
	evs, _, r := readDTrace(t, strings.Join(lines, "\n"), "")
	if len(evs) != 71 || r.Platform != PlatformLinux || evs[0].Op != event.Read || evs[0].Offset != 4096 || evs[70].Op != event.Write {
		t.Fatalf("%d events on %q: first %+v, last %+v", len(evs), r.Platform, evs[0], evs[len(evs)-1])
	}
	// A short capture decides at its end.
	evs, _, r = readDTrace(t, "READY dtrace 1\nI 1000 2000 254 0 8 4096 4096 0 1120 77 77 fio\n", "")
	if len(evs) != 1 || r.Platform != PlatformLinux || evs[0].Op != event.Read || evs[0].Flags&event.FlagAsync == 0 {
		t.Errorf("short capture: %+v on %q", evs, r.Platform)
	}
	// xnu: B_READ is 0x1.
	evs, _, r = readDTrace(t, "READY dtrace 1\nI 1000 2000 1 4 8 4096 4096 0 3 77 77 mds\n", "")
	if len(evs) != 1 || r.Platform != PlatformDarwin || evs[0].Op != event.Read || evs[0].Offset != 8*4096 {
		t.Errorf("xnu: %+v on %q", evs, r.Platform)
	}
	// Told, it does not guess: 0x60 on macOS is B_PHYS|B_CLUSTER, a write.
	evs, _, _ = readDTrace(t, "READY dtrace 1\nI 1000 2000 1 4 8 4096 4096 0 96 77 77 x\n", PlatformDarwin)
	if len(evs) != 1 || evs[0].Op != event.Write || evs[0].Flags&event.FlagDirect == 0 {
		t.Errorf("told darwin: %+v", evs)
	}
}
