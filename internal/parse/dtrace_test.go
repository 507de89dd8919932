package parse

import (
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// Every message here is quoted in tracing.md §3.2/§4/§7.6, from libdtrace's
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
	rd, wr, kerr := evs[0], evs[1], evs[2]
	if rd.Op != event.Read || rd.Flags&event.FlagSync == 0 || rd.Offset != 150777072*4096 || rd.Latency() != 250000 || rd.Dev != (event.Dev{Major: 1, Minor: 17}) {
		t.Errorf("sync read: %+v", rd)
	}
	if wr.Op != event.Write || wr.Flags&event.FlagAsync == 0 || wr.Comm != "Slack Helper" {
		t.Errorf("async write: %+v", wr)
	}
	if kerr.Flags&event.FlagKernel == 0 || kerr.Errno != 5 || kerr.Bytes != 0 {
		t.Errorf("kernel write with error: %+v", kerr)
	}
	pr, rv, we, ff, cl := evs[3], evs[4], evs[5], evs[6], evs[7]
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
