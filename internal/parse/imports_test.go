package parse

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/testutil"
)

// tally sums what a reader produced.
type tally struct {
	events, reads, writes, discards, flushes, lost, errors, bytes int64
	devs                                                          map[event.Dev]int64
	first                                                         event.Event
}

// readEvents reads r's events and the events it says were lost; a syntax
// error fails the test.
func readEvents(t *testing.T, r scanner) (evs []event.Event, lost int64) {
	t.Helper()
	for r.Scan() {
		switch rec := r.Record(); rec.Kind {
		case KindEvent:
			evs = append(evs, rec.Event)
		case KindLost:
			lost += max(rec.N, 1) // 0: a loss of unknown size
		case KindError:
			t.Errorf("syntax error: %v", rec.Err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return evs, lost
}

func count(t *testing.T, r scanner) tally {
	t.Helper()
	c := tally{devs: map[event.Dev]int64{}}
	for r.Scan() {
		rec := r.Record()
		switch rec.Kind {
		case KindEvent:
			e := rec.Event
			if c.events == 0 {
				c.first = e
			}
			c.events++
			c.bytes += e.Bytes
			c.devs[e.Dev]++
			switch e.Op {
			case event.Read:
				c.reads++
			case event.Write:
				c.writes++
			case event.Discard:
				c.discards++
			case event.Flush:
				c.flushes++
			}
		case KindLost:
			c.lost += rec.N
		case KindError:
			c.errors++
			t.Logf("syntax error: %v", rec.Err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

func openShared(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(testutil.Shared(t, "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The real samples in ../shared/samples, against counts made by hand with
// grep and awk on the files themselves:
//
//	bcc biosnoop: grep -E '^[0-9]+\.[0-9]+ ' | awk: 21 rows (15, then 6 with -Q), all W, 176,128 bytes
//	blkparse:     awk '$6=="C"': 840 completions, 816 WS + 24 W, 842 sectors = 431,104 bytes
//	DTT iosnoop:  rows '^ +UID +PID [RW] ': 30, 25 R, 297,472 bytes
//	perf-tools:   rows ending 'TYPE DEV BLOCK BYTES LATms': 95, 33 R*, 1,286,144 bytes;
//	              devices 202,1: 47, 202,16: 34, 202,32: 14
//	fio iolog:    10 trim + 10 write of 4,096 bytes
func TestSharedSamplesHandCounted(t *testing.T) {
	cases := []struct {
		file                                   string
		open                                   func(*os.File) scanner
		events, reads, writes, discards, bytes int64
		devs                                   map[event.Dev]int64
	}{
		{"bcc_biosnoop_example.txt", func(f *os.File) scanner { return NewSnoopReader(f, f.Name(), "", 0) }, 21, 0, 21, 0, 176128, nil},
		{"blkparse_leveldb_ram0_completions.txt", func(f *os.File) scanner { return NewBlkparseReader(f, f.Name()) }, 840, 0, 840, 0, 431104,
			map[event.Dev]int64{{Major: 1, Minor: 0}: 840}},
		{"dtt_iosnoop_example.txt", func(f *os.File) scanner { return NewSnoopReader(f, f.Name(), FormatIosnoop, 0) }, 30, 25, 5, 0, 297472, nil},
		{"perftools_iosnoop_example.txt", func(f *os.File) scanner { return NewSnoopReader(f, f.Name(), "", 0) }, 95, 33, 62, 0, 1286144,
			map[event.Dev]int64{{Major: 202, Minor: 1}: 47, {Major: 202, Minor: 16}: 34, {Major: 202, Minor: 32}: 14}},
		{"fio_t0038_v3.iolog", func(f *os.File) scanner { return NewFioIologReader(f, f.Name()) }, 20, 0, 10, 10, 10*4096 + 10*2147483648, nil},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got := count(t, c.open(openShared(t, c.file)))
			if got.events != c.events || got.reads != c.reads || got.writes != c.writes || got.discards != c.discards || got.bytes != c.bytes || got.errors != 0 {
				t.Errorf("got %d events (%d reads, %d writes, %d discards, %d bytes, %d errors), want %d (%d, %d, %d, %d, 0)",
					got.events, got.reads, got.writes, got.discards, got.bytes, got.errors, c.events, c.reads, c.writes, c.discards, c.bytes)
			}
			for d, n := range c.devs {
				if got.devs[d] != n {
					t.Errorf("device %s: %d events, want %d", d, got.devs[d], n)
				}
			}
		})
	}
}

// Every sample's events, field by field, as golden files.
func TestSharedSamplesGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		open func(*os.File) scanner
	}{
		{"bcc_biosnoop_example.txt", func(f *os.File) scanner { return NewSnoopReader(f, "in", "", 0) }},
		{"blkparse_leveldb_ram0_completions.txt", func(f *os.File) scanner { return NewBlkparseReader(f, "in") }},
		{"dtt_iosnoop_example.txt", func(f *os.File) scanner { return NewSnoopReader(f, "in", "", 0) }},
		{"perftools_iosnoop_example.txt", func(f *os.File) scanner { return NewSnoopReader(f, "in", "", 0) }},
		{"fio_t0038_v3.iolog", func(f *os.File) scanner { return NewFioIologReader(f, "in") }},
	} {
		t.Run(c.file, func(t *testing.T) {
			testutil.Golden(t, filepath.Join("testdata", "imports", c.file+".golden"), []byte(dumpWith(t, c.open(openShared(t, c.file)))))
		})
	}
}

// bcc biosnoop: TIME is the completion, LAT the device time, QUE (with
// -Q) the time queued before it.
func TestBiosnoopTimes(t *testing.T) {
	in := "TIME(s)     COMM           PID    DISK    T SECTOR     BYTES  QUE(ms) LAT(ms)\n" +
		"5.332998    xfsaild/nvme1n 1061   nvme1n1 W 545728     16384     0.01    0.61\n" +
		"6.000000    Web Content    77     sda     R 100        4096      0.00    1.50\n"
	r := NewSnoopReader(strings.NewReader(in), "in", "", 0)
	var evs []event.Event
	for r.Scan() {
		if rec := r.Record(); rec.Kind == KindEvent {
			evs = append(evs, rec.Event)
		}
	}
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	e := evs[0]
	if e.End != 5332998000 || e.Dispatch != 5332998000-610000 || e.Start != 5332998000-620000 || e.Flags&event.FlagDispatched == 0 || e.Flags&event.FlagKernel == 0 {
		t.Errorf("first: %+v", e)
	}
	if e.Offset != 545728*512 || e.Size != 16384 || e.Op != event.Write || e.Comm != "xfsaild/nvme1n" {
		t.Errorf("first: %+v", e)
	}
	if evs[1].Comm != "Web Content" || evs[1].Pid != 77 || evs[1].Op != event.Read {
		t.Errorf("a command with a space: %+v", evs[1])
	}
	if evs[0].Dev == evs[1].Dev {
		t.Error("two disks share a device number")
	}
	if m := r.Missing(); len(m) != 0 {
		t.Errorf("biosnoop -Q lacks nothing, got %v", m)
	}
}

// Each snoop tool and column variant, and what it cannot show.
func TestSnoopVariants(t *testing.T) {
	cases := []struct {
		name, in string
		format   Format
		start    int64 // of the first event
		end      int64
		missing  string
	}{
		{"biosnoop -P -Q", "TIME(s)     COMM           PID    DISK      T SECTOR     BYTES  P QUE(ms) LAT(ms)\n0.000000    fio            1234   vda       R 2048       4096   R    0.01    0.20\n",
			FormatBiosnoop, -210000, 0, ""},
		{"disksnoop", "TIME(s)            T  BYTES    LAT(ms)\n16458043.436012    W  4096        3.13\n",
			FormatDisksnoop, 16458043436012000 - 3130000, 16458043436012000, "queue_time,offset,process"},
		{"biosnoop.bt", "Attaching 4 probes...\nTIME(ms)     COMM             PID    LAT(ms)\n611          bash             4179        10\n",
			FormatBiosnoopBT, 601e6, 611e6, "queue_time,size,direction,offset"},
		{"biosnoop.bt with disk", "TIME(ms)     DISK    COMM             PID    LAT(ms)\n611          sda     cksum            4179        0\n",
			FormatBiosnoopBT, 611e6, 611e6, "queue_time,size,direction,offset"},
		{"biosnoop.bt with disk id", "Attached 4 probes\nTIME(ms)     DISK ID        COMM             PID    LAT(ms)\n             MAJOR MINOR\n627          259   0        cksum            4179        15\n",
			FormatBiosnoopBT, 612e6, 627e6, "queue_time,size,direction,offset"},
		{"DTraceToolkit iosnoop", "  UID   PID D    BLOCK   SIZE       COMM PATHNAME\n  100 15795 R     3808   8192        tar /usr/bin/eject\n",
			FormatIosnoop, 0, 0, "timing,latency,queue_time"},
		{"DTraceToolkit iosnoop -D", "DELTA        UID   PID D    BLOCK   SIZE       COMM PATHNAME\n2301           0     3 W     1067    512    fsflush <none>\n",
			FormatIosnoop, 0, 2301000, "timing,queue_time"},
		{"DTraceToolkit iosnoop -st", "STIME          TIME           UID   PID D    BLOCK   SIZE       COMM PATHNAME\n1300000        1302500            100 443 R 892288 4096 Xsun /usr/openwin/bin/Xsun\n",
			FormatIosnoop, 1300000e3, 1302500e3, "queue_time"},
		{"DTraceToolkit iosnoop -ve", "STRTIME              DEVICE  UID   PID D    BLOCK   SIZE       COMM PATHNAME\n2005 Jul 25 12:34:56  cmdk0     0     0 W     1067    512      sched <none>\n",
			FormatIosnoop, 0, 0, "timing,latency,queue_time"},
		{"DTraceToolkit iosnoop -oDe -N", "DEVICE  MAJ MIN DELTA      DTIME        UID   PID D    BLOCK   SIZE       COMM PATHNAME\ncmdk0   102 0   4221       4001           0     0 W   1067    512      sched /a path with spaces\n",
			FormatIosnoop, 0, 4221e3, "timing,queue_time"},
		{"DTraceToolkit iosnoop -A", "TIME STIME DELTA DEVICE INS MAJ MIN UID PID PPID D BLOCK SIZE MOUNT FILE PATH COMM ARGS\n1302500 1300000 2500 cmdk0 0 102 0 100 443 1 R 892288 4096 /usr Xsun /usr/openwin/bin/Xsun Xsun /usr/openwin/bin/Xsun :0 -nobanner\n",
			FormatIosnoop, 1300000e3, 1302500e3, "queue_time"},
		{"perf-tools iosnoop -ts", "Tracing block I/O. Ctrl-C to end.\nSTARTs         ENDs           COMM             PID    TYPE DEV      BLOCK        BYTES     LATms\n5982800.302061 5982800.302679 supervise        1809   W    202,1    17039600     4096       0.62\n",
			FormatPerfIosnoop, 5982800302061000, 5982800302679000, "queue_time"},
		{"perf-tools iosnoop", "COMM             PID    TYPE DEV      BLOCK        BYTES     LATms\ntar              14794  RM   202,1    8457608      4096       7.53\n",
			FormatPerfIosnoop, 0, 7530000, "timing,queue_time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Detect(strings.Split(c.in, "\n")); got != c.format {
				t.Errorf("detected %q, want %q", got, c.format)
			}
			r := NewSnoopReader(strings.NewReader(c.in), "in", c.format, 0)
			got := count(t, r)
			if got.events != 1 || got.errors != 0 {
				t.Fatalf("%d events, %d errors, want 1 and 0", got.events, got.errors)
			}
			if got.first.Start != c.start || got.first.End != c.end {
				t.Errorf("start %d end %d, want %d %d", got.first.Start, got.first.End, c.start, c.end)
			}
			var m []string
			for _, u := range r.Missing() {
				m = append(m, u.Metric)
			}
			if strings.Join(m, ",") != c.missing {
				t.Errorf("missing %v, want %s", m, c.missing)
			}
		})
	}
}

// A row that starts like one but does not read is a syntax error; prose
// between and after tables is skipped; lost-sample notices are counted.
func TestSnoopBadRowsAndLoss(t *testing.T) {
	in := "TIME(s)     COMM           PID    DISK    T SECTOR     BYTES   LAT(ms)\n" +
		"0.000004    supervise      1950   xvda1   W 13092560   4096       0.74\n" +
		"0.000178    supervise      1950   xvda1   W 13092432   lots       0.61\n" +
		"Possibly lost 12 samples\n" +
		"This example output is from what should be an idle system, however, the\n"
	got := count(t, NewSnoopReader(strings.NewReader(in), "in", "", 0))
	if got.events != 1 || got.errors != 1 || got.lost != 12 {
		t.Errorf("events %d errors %d lost %d, want 1 1 12", got.events, got.errors, got.lost)
	}
}

// blkparse text: requests rebuilt from queue, merge, split, dispatch and
// completion events; what counts is what the device was dispatched.
func TestBlkparseRequests(t *testing.T) {
	in := strings.Join([]string{
		// a plain read: Q, G, I, D, C
		"  8,0    1        1     0.000001000   100  Q   R 1000 + 8 [fio]",
		"  8,0    1        2     0.000002000   100  G   R 1000 + 8 [fio]",
		"  8,0    1        3     0.000003000   100  I   R 1000 + 8 [fio]",
		"  8,0    1        4     0.000004000   100  D   R 1000 + 8 [fio]",
		"  8,0    1        5     0.000104000     0  C   R 1000 + 8 [0]",
		// a back merge: two bios, one request of 16 sectors
		"  8,0    1        6     0.001000000   200  Q   W 2000 + 8 [dd]",
		"  8,0    1        7     0.001001000   200  Q   W 2008 + 8 [dd]",
		"  8,0    1        8     0.001001500   200  M   W 2008 + 8 [dd]",
		"  8,0    1        9     0.001002000   200  D   W 2000 + 16 [dd]",
		"  8,0    1       10     0.001202000     0  C   W 2000 + 16 [0]",
		// a front merge: the request starts at the later bio, queued at the earlier time
		"  8,0    1       11     0.002000000   300  Q   R 3008 + 8 [cat]",
		"  8,0    1       12     0.002001000   300  Q   R 3000 + 8 [cat]",
		"  8,0    1       13     0.002001500   300  F   R 3000 + 8 [cat]",
		"  8,0    1       14     0.002002000   300  D   R 3000 + 16 [cat]",
		"  8,0    1       15     0.002302000     0  C   R 3000 + 16 [0]",
		// a split: one bio, two requests
		"  8,0    1       16     0.003000000   400  Q  WS 4000 + 512 [tar]",
		"  8,0    1       17     0.003000100   400  X  WS 4000 / 4256 [tar]",
		"  8,0    1       18     0.003001000   400  D  WS 4000 + 256 [tar]",
		"  8,0    1       19     0.003001500   400  D  WS 4256 + 256 [tar]",
		"  8,0    1       20     0.003500000     0  C  WS 4000 + 256 [0]",
		"  8,0    1       21     0.003600000     0  C  WS 4256 + 256 [0]",
		// two requests completed by one merged completion range
		"  8,0    1       22     0.004000000   500  D   R 5000 + 8 [grep]",
		"  8,0    1       23     0.004000100   500  D   R 5008 + 8 [grep]",
		"  8,0    1       24     0.004200000     0  C   R 5000 + 16 [0]",
		// a partial completion, a requeue, a flush and a failed write
		"  8,0    1       25     0.005000000   600  D   R 6000 + 16 [cp]",
		"  8,0    1       26     0.005100000     0  C   R 6000 + 8 [0]",
		"  8,0    1       27     0.005200000     0  C   R 6008 + 8 [0]",
		"  8,0    1       28     0.006000000   700  D   W 7000 + 8 [sync]",
		"  8,0    1       29     0.006000500   700  R   W 7000 + 8 [sync]",
		"  8,0    1       30     0.006001000   700  D   W 7000 + 8 [sync]",
		"  8,0    1       31     0.006101000     0  C   W 7000 + 8 [-5]",
		"  8,0    1       32     0.007000000   800  D FWS [kworker/1:1H]",
		"  8,0    1       33     0.007050000     0  C FWS 0 [0]",
		// a completion of nothing dispatched, a request never completed
		"  8,0    1       34     0.008000000     0  C   R 9999 + 8 [0]",
		"  8,0    1       35     0.009000000   900  D   R 8000 + 8 [less]",
		"CPU1 (8,0):",
		" Reads Queued:           3,       12KiB\t Writes Queued:           3,       2MiB",
		"Events (8,0): 35 entries",
		"Skips: 3 forward (3 -   7.9%)",
	}, "\n")
	r := NewBlkparseReader(strings.NewReader(in), "in")
	evs, lost := readEvents(t, r)
	type want struct {
		op                   event.Op
		off, size            int64
		start, dispatch, end int64
		pid                  uint32
		errno                int32
	}
	wants := []want{
		{event.Read, 1000 * 512, 4096, 1000, 4000, 104000, 100, 0},
		{event.Write, 2000 * 512, 8192, 1000000, 1002000, 1202000, 200, 0},
		{event.Read, 3000 * 512, 8192, 2000000, 2002000, 2302000, 300, 0},
		{event.Write, 4000 * 512, 131072, 3000000, 3001000, 3500000, 400, 0},
		{event.Write, 4256 * 512, 131072, 3000000, 3001500, 3600000, 400, 0},
		{event.Read, 5000 * 512, 4096, 4000000, 4000000, 4200000, 500, 0},
		{event.Read, 5008 * 512, 4096, 4000100, 4000100, 4200000, 500, 0},
		{event.Read, 6000 * 512, 8192, 5000000, 5000000, 5200000, 600, 0},
		{event.Write, 7000 * 512, 4096, 6000000, 6001000, 6101000, 700, -5},
		{event.Flush, -1, 0, 7000000, 7000000, 7050000, 800, 0},
	}
	if len(evs) != len(wants) {
		t.Fatalf("%d events, want %d:\n%+v", len(evs), len(wants), evs)
	}
	for i, w := range wants {
		e := evs[i]
		g := want{e.Op, e.Offset, e.Size, e.Start, e.Dispatch, e.End, e.Pid, e.Errno}
		if g != w {
			t.Errorf("event %d: got %+v, want %+v", i, g, w)
		}
	}
	if evs[9].Flags&event.FlagKernel == 0 || evs[9].Flags&event.FlagPreflush == 0 {
		t.Errorf("flush from a kworker: flags %s", evs[9].Flags)
	}
	c := r.Counts()
	if c.Unmatched != 1 || c.Unfinished != 1 || c.CompletionOnly != 0 || lost != 3 {
		t.Errorf("counts %+v, lost %d; want 1 unmatched, 1 unfinished, 3 lost", c, lost)
	}
}

// blkRec is one blk_io_trace record, for writing test files.
type blkRec struct {
	seq                uint32
	time, sector       uint64
	bytes, action, pid uint32
	dev                uint32
	cpu                uint32
	errno              uint16
	pdu                []byte
}

func (r blkRec) encode(o binary.ByteOrder) []byte {
	b := make([]byte, blkTraceSize, blkTraceSize+len(r.pdu))
	o.PutUint32(b[0:], blkTraceMagic|7)
	o.PutUint32(b[4:], r.seq)
	o.PutUint64(b[8:], r.time)
	o.PutUint64(b[16:], r.sector)
	o.PutUint32(b[24:], r.bytes)
	o.PutUint32(b[28:], r.action)
	o.PutUint32(b[32:], r.pid)
	o.PutUint32(b[36:], r.dev)
	o.PutUint32(b[40:], r.cpu)
	o.PutUint16(b[44:], r.errno)
	o.PutUint16(b[46:], uint16(len(r.pdu)))
	return append(b, r.pdu...)
}

const (
	taQueue, taBackmerge, taGetrq, taIssue, taComplete, taInsert, taSplit = 1, 2, 4, 7, 8, 12, 13
	tcRead, tcWrite, tcSync, tcQueue, tcIssue, tcComplete, tcNotify       = 1 << 16, 1 << 17, 1 << 19, 1 << 20, 1 << 22, 1 << 23, 1 << 26
)

// blktraceRun writes a two-CPU run: CPU 0 queues and dispatches, CPU 1
// completes; a back merge, a split, a process name, a sequence gap.
func blktraceRun(t *testing.T, dir string, o binary.ByteOrder) string {
	dev := uint32(8 << 20) // 8:0
	comm := append([]byte("fio"), make([]byte, 13)...)
	split := binary.BigEndian.AppendUint64(nil, 3008)
	cpu0 := []blkRec{
		{seq: 1, time: 500, pid: 42, dev: dev, action: tcNotify, pdu: comm},
		{seq: 2, time: 1000, sector: 1000, bytes: 4096, action: taQueue | tcRead | tcQueue, pid: 42, dev: dev},
		{seq: 3, time: 1500, sector: 1000, bytes: 4096, action: taGetrq | tcRead, pid: 42, dev: dev},
		{seq: 4, time: 1600, sector: 1000, bytes: 4096, action: taInsert | tcRead, pid: 42, dev: dev},
		{seq: 5, time: 2000, sector: 1000, bytes: 4096, action: taIssue | tcRead | tcIssue, pid: 42, dev: dev},
		{seq: 6, time: 10000, sector: 2000, bytes: 4096, action: taQueue | tcWrite | tcSync | tcQueue, pid: 42, dev: dev},
		{seq: 7, time: 10100, sector: 2008, bytes: 4096, action: taQueue | tcWrite | tcSync | tcQueue, pid: 42, dev: dev},
		{seq: 8, time: 10200, sector: 2008, bytes: 4096, action: taBackmerge | tcWrite | tcSync | tcQueue, pid: 42, dev: dev},
		{seq: 9, time: 11000, sector: 2000, bytes: 8192, action: taIssue | tcWrite | tcSync | tcIssue, pid: 42, dev: dev},
		{seq: 10, time: 20000, sector: 3000, bytes: 8192, action: taQueue | tcRead | tcQueue, pid: 42, dev: dev},
		{seq: 11, time: 20100, sector: 3000, bytes: 8192, action: taSplit | tcRead, pid: 42, dev: dev, pdu: split},
		{seq: 12, time: 21000, sector: 3000, bytes: 4096, action: taIssue | tcRead | tcIssue, pid: 42, dev: dev},
		// seq 13 and 14 lost
		{seq: 15, time: 21500, sector: 3008, bytes: 4096, action: taIssue | tcRead | tcIssue, pid: 42, dev: dev},
	}
	cpu1 := []blkRec{
		{seq: 1, time: 9000, sector: 1000, bytes: 4096, action: taComplete | tcRead | tcComplete, dev: dev, cpu: 1},
		{seq: 2, time: 15000, sector: 2000, bytes: 8192, action: taComplete | tcWrite | tcSync | tcComplete, dev: dev, cpu: 1},
		{seq: 3, time: 30000, sector: 3000, bytes: 4096, action: taComplete | tcRead | tcComplete, dev: dev, cpu: 1},
		{seq: 4, time: 31000, sector: 3008, bytes: 4096, action: taComplete | tcRead | tcComplete, dev: dev, cpu: 1, errno: 5},
	}
	base := filepath.Join(dir, "sda")
	for i, recs := range [][]blkRec{cpu0, cpu1} {
		var b []byte
		for _, r := range recs {
			b = append(b, r.encode(o)...)
		}
		if err := os.WriteFile(fmt.Sprintf("%s.blktrace.%d", base, i), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func readBlktrace(t *testing.T, base string) ([]event.Event, int64, BlkCounts) {
	t.Helper()
	files, _ := filepath.Glob(base + ".blktrace.*")
	var rs []*os.File
	var readers []io_Reader
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, fh)
		readers = append(readers, fh)
	}
	defer func() {
		for _, f := range rs {
			f.Close()
		}
	}()
	r := NewBlktraceReader(toReaders(readers), files)
	var evs []event.Event
	var lost int64
	for r.Scan() {
		switch rec := r.Record(); rec.Kind {
		case KindEvent:
			evs = append(evs, rec.Event)
		case KindLost:
			lost += rec.N
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return evs, lost, r.Counts()
}

func TestBlktraceBinary(t *testing.T) {
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(fmt.Sprint(o), func(t *testing.T) {
			base := blktraceRun(t, t.TempDir(), o)
			evs, lost, c := readBlktrace(t, base)
			type want struct {
				op                   event.Op
				off, size            int64
				start, dispatch, end int64
				errno                int32
				comm                 string
			}
			wants := []want{
				{event.Read, 1000 * 512, 4096, 1000, 2000, 9000, 0, "fio"},
				{event.Write, 2000 * 512, 8192, 10000, 11000, 15000, 0, "fio"},
				{event.Read, 3000 * 512, 4096, 20000, 21000, 30000, 0, "fio"},
				{event.Read, 3008 * 512, 4096, 20000, 21500, 31000, 5, "fio"},
			}
			if len(evs) != len(wants) {
				t.Fatalf("%d events, want %d: %+v", len(evs), len(wants), evs)
			}
			for i, w := range wants {
				e := evs[i]
				if g := (want{e.Op, e.Offset, e.Size, e.Start, e.Dispatch, e.End, e.Errno, e.Comm}); g != w {
					t.Errorf("event %d: got %+v, want %+v", i, g, w)
				}
			}
			if lost != 2 || c.Unmatched != 0 || c.Unfinished != 0 {
				t.Errorf("lost %d, counts %+v; want 2 lost", lost, c)
			}
		})
	}
}

// The same binary run through the real blkparse: its text imports to the
// same requests as the binary files do.
func TestBlktraceAgreesWithBlkparse(t *testing.T) {
	bp, err := exec.LookPath("blkparse")
	if err != nil {
		testutil.Unavailable(t, "blkparse is not installed (apt-get install blktrace)")
	}
	dir := t.TempDir()
	base := blktraceRun(t, dir, binary.LittleEndian)
	out, err := exec.Command(bp, "-i", base).CombinedOutput()
	if err != nil {
		t.Fatalf("blkparse: %v\n%s", err, out)
	}
	bin, binLost, _ := readBlktrace(t, base)
	r := NewBlkparseReader(bytes.NewReader(out), "blkparse")
	var txt []event.Event
	var txtLost int64
	for r.Scan() {
		switch rec := r.Record(); rec.Kind {
		case KindEvent:
			txt = append(txt, rec.Event)
		case KindLost:
			txtLost += rec.N
		}
	}
	if len(bin) != len(txt) {
		t.Fatalf("binary %d events, blkparse text %d:\n%s", len(bin), len(txt), out)
	}
	// blkparse counts time from the run's first event; the binary reader
	// keeps the kernel's clock (the importer re-bases both).
	shift := bin[0].Start - txt[0].Start
	for i := range bin {
		b, x := bin[i], txt[i]
		x.Start, x.Dispatch, x.End = x.Start+shift, x.Dispatch+shift, x.End+shift
		if b.Op != x.Op || b.Offset != x.Offset || b.Size != x.Size || b.Start != x.Start || b.Dispatch != x.Dispatch || b.End != x.End || b.Errno != x.Errno || b.Comm != x.Comm {
			t.Errorf("event %d: binary %+v, blkparse %+v", i, b, x)
		}
	}
	// blkparse 1.2 does not count this gap in its Skips line; the binary
	// reader does, from the CPU's sequence numbers.
	if binLost != 2 || txtLost > binLost {
		t.Errorf("lost: binary %d, blkparse's skips %d, want 2 and at most 2", binLost, txtLost)
	}
}

// The corpora's CSVs: units, devices kept apart, headers, bad lines.
func TestBlockCSV(t *testing.T) {
	cases := []struct {
		format Format
		in     string
		start  []int64
		end    []int64
		off    []int64
		size   []int64
		ops    string
		devs   int
	}{
		{FormatMSR, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n" +
			"128166372003061629,hm,1,Read,3452047360,4096,2254\n" +
			"128166372016382155,hm,0,Write,3452047360,8192,13027\n",
			[]int64{0, 1332052600}, []int64{225400, 1332052600 + 1302700}, []int64{3452047360, 3452047360}, []int64{4096, 8192}, "RW", 2},
		{FormatAlibaba, "419,W,8792838144,4096,1577808000000010\n420,R,1024,16384,1577808000000510\n419,W,8792842240,4096,1577808000001010\n",
			[]int64{0, 500000, 1000000}, []int64{0, 500000, 1000000}, []int64{8792838144, 1024, 8792842240}, []int64{4096, 16384, 4096}, "WRW", 2},
		{FormatTencent, "1538323200,12073432,8,1,1283\n1538323201,0,256,0,1284\n",
			[]int64{0, 1e9}, []int64{0, 1e9}, []int64{12073432 * 512, 0}, []int64{4096, 131072}, "WR", 2},
	}
	for _, c := range cases {
		t.Run(string(c.format), func(t *testing.T) {
			first := strings.SplitN(c.in, "\n", 2)[0]
			if got := DetectCSV(first); got != c.format {
				t.Errorf("detected %q, want %q", got, c.format)
			}
			r := NewBlockCSVReader(strings.NewReader(c.in), "in", c.format)
			var ops strings.Builder
			i := 0
			devs := map[event.Dev]bool{}
			for r.Scan() {
				rec := r.Record()
				if rec.Kind == KindError {
					t.Fatalf("error: %v", rec.Err)
				}
				if rec.Kind != KindEvent {
					continue
				}
				e := rec.Event
				if e.Start != c.start[i] || e.End != c.end[i] || e.Offset != c.off[i] || e.Size != c.size[i] || e.Bytes != e.Size {
					t.Errorf("event %d: %+v", i, e)
				}
				ops.WriteByte(strings.ToUpper(e.Op.String())[0])
				devs[e.Dev] = true
				i++
			}
			if ops.String() != c.ops || len(devs) != c.devs || len(r.Devices()) != c.devs {
				t.Errorf("ops %s, %d devices; want %s, %d", ops.String(), len(devs), c.ops, c.devs)
			}
		})
	}
	// A file that is not what --format claims fails on its first line.
	r := NewBlockCSVReader(strings.NewReader("419,W,8792838144,4096,1577808000000010\n"), "x.csv", FormatMSR)
	r.Scan()
	if rec := r.Record(); rec.Kind != KindError || !strings.Contains(rec.Err.Error(), "x.csv:1: not a msr trace") {
		t.Errorf("got %+v", rec)
	}
}

func TestFioIologV2(t *testing.T) {
	in := "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n/dev/sdb wait 0 0\n/dev/sdc write 8192 4096\n/dev/sdb sync 0 0\n/dev/sdb close\n"
	r := NewFioIologReader(strings.NewReader(in), "in")
	got := count(t, r)
	if got.events != 3 || got.reads != 1 || got.writes != 1 || got.flushes != 1 || len(got.devs) != 2 {
		t.Errorf("got %+v", got)
	}
	var m []string
	for _, u := range r.Missing() {
		m = append(m, u.Metric)
	}
	if strings.Join(m, ",") != "latency,process,timing" {
		t.Errorf("missing %v", m)
	}
	bad := count(t, NewFioIologReader(strings.NewReader("fio version 3 iolog\n12 f read zero 4096\n"), "in"))
	if bad.errors != 1 || bad.events != 0 {
		t.Errorf("a bad offset: %+v", bad)
	}
}

// Fuzzing: no input makes a reader panic or return a kindless record.
func fuzzReader(t *testing.T, r scanner) {
	for r.Scan() {
		rec := r.Record()
		if rec.Kind == KindError && rec.Err == nil {
			t.Fatal("error record without error")
		}
		if rec.Kind == 0 {
			t.Fatal("record without kind")
		}
	}
}

func FuzzSnoop(f *testing.F) {
	f.Add("TIME(s)     COMM           PID    DISK    T SECTOR     BYTES  QUE(ms) LAT(ms)\n0.000000    kworker/u72:1  13379  nvme1n1 W 1142400    4096      0.01    0.55\n")
	f.Add("STRTIME              DEVICE  UID   PID D    BLOCK   SIZE       COMM PATHNAME\n2005 Jul 25 12:34:56  cmdk0     0     0 W     1067    512      sched <none>\n")
	f.Add("TIME(ms)     DISK ID        COMM             PID    LAT(ms)\n             MAJOR MINOR\n611          259   0        bash             4179        10\n")
	f.Add("STARTs         ENDs           COMM             PID    TYPE DEV      BLOCK        BYTES     LATms\n5982800.302061 5982800.302679 super vise        1809   FWFS    202,1    17039600     4096       0.62\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzReader(t, NewSnoopReader(strings.NewReader(in), "", "", 0)) })
}

func FuzzBlkparse(f *testing.F) {
	f.Add("  8,0    1        1     0.000001000   100  Q   R 1000 + 8 [fio]\n  8,0    1        4     0.000004000   100  D   R 1000 + 8 [fio]\n  8,0    1        5     0.000104000     0  C   R 1000 + 8 [0]\n")
	f.Add("  8,0    1       17     0.003000100   400  X  WS 4000 / 4256 [tar]\nSkips: 3 forward (3 -   7.9%)\n")
	f.Add("  8,0    1       32     0.007000000   800  D FWS [kworker/1:1H]\n  8,0    1       33     0.007050000     0  C FWS 0 [0]\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzReader(t, NewBlkparseReader(strings.NewReader(in), "")) })
}

func FuzzBlktrace(f *testing.F) {
	rec := blkRec{seq: 1, time: 1000, sector: 8, bytes: 4096, action: taQueue | tcRead | tcQueue, pid: 1, dev: 8 << 20}
	f.Add(rec.encode(binary.LittleEndian))
	rec.action = taIssue | tcWrite | tcIssue
	f.Add(append(rec.encode(binary.BigEndian), rec.encode(binary.BigEndian)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewBlktraceReader(toReaders([]io_Reader{bytes.NewReader(in)}), []string{"in"})
		fuzzReader(t, r)
	})
}

func FuzzBlockCSV(f *testing.F) {
	f.Add("128166372003061629,hm,1,Read,3452047360,4096,2254\n", 0)
	f.Add("419,W,8792838144,4096,1577808000000010\n", 1)
	f.Add("1538323200,12073432,8,1,1283\n", 2)
	f.Fuzz(func(t *testing.T, in string, which int) {
		formats := []Format{FormatMSR, FormatAlibaba, FormatTencent}
		fuzzReader(t, NewBlockCSVReader(strings.NewReader(in), "", formats[(which%3+3)%3]))
		DetectCSV(in)
	})
}

func FuzzFioIolog(f *testing.F) {
	f.Add("fio version 3 iolog\n30 /dev/null add\n10736 /dev/null trim 0 2147483648\n10752 /dev/null write 0 4096\n")
	f.Add("fio version 2 iolog\n/dev/sdb wait 0 100\n/dev/sdb read 0 4096\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzReader(t, NewFioIologReader(strings.NewReader(in), "")) })
}

type io_Reader = interface{ Read([]byte) (int, error) }

func toReaders(rs []io_Reader) []io.Reader {
	out := make([]io.Reader, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// DTraceToolkit iosnoop prints b_blkno: 512-byte sectors on Solaris, the
// device's blocks (4096 bytes on APFS) on macOS. Runs of contiguous I/O
// tell which; --block-size overrides; a COMM with spaces is kept whole.
func TestIosnoopBlockUnitAndComm(t *testing.T) {
	mac := []string{"  UID   PID D    BLOCK   SIZE       COMM PATHNAME"}
	blk := int64(5000000)
	for i := 0; i < 40; i++ { // a browser's reads: runs of 4 contiguous 16 KiB reads, at 4 KiB units
		if i%4 == 0 {
			blk += 100000
		}
		mac = append(mac, fmt.Sprintf("  501   812 R %8d  16384 Foo Bar Baz ??/Library/Caches/x%d", blk, i))
		blk += 16384 / 4096
	}
	read := func(in string, size int64) ([]event.Event, *SnoopReader) {
		r := NewSnoopReader(strings.NewReader(in), "in", FormatIosnoop, size)
		var evs []event.Event
		for r.Scan() {
			if rec := r.Record(); rec.Kind == KindEvent {
				evs = append(evs, rec.Event)
			} else if rec.Kind == KindError {
				t.Fatal(rec.Err)
			}
		}
		return evs, r
	}
	evs, r := read(strings.Join(mac, "\n"), 0)
	if len(evs) != 40 || !strings.Contains(r.BlockUnit(), "4096-byte") || evs[1].Offset-evs[0].Offset != 16384 || evs[0].Comm != "Foo Bar Baz" {
		t.Fatalf("%d rows, unit %q, first %+v, second %+v", len(evs), r.BlockUnit(), evs[0], evs[1])
	}
	// The same rows at 512-byte units are Solaris's: no run at 4 KiB.
	sol := []string{"  UID   PID D    BLOCK   SIZE       COMM PATHNAME"}
	for i, l := range mac[1:] {
		f := strings.Fields(l)
		b, _ := strconv.ParseInt(f[3], 10, 64)
		sol = append(sol, fmt.Sprintf("  %s %s %s %8d %s tar /usr/bin/x%d", f[0], f[1], f[2], (b-5000000)*8+5000000, f[4], i))
	}
	evs, r = read(strings.Join(sol, "\n"), 0)
	if !strings.Contains(r.BlockUnit(), "512-byte") || evs[1].Offset-evs[0].Offset != 16384 || evs[0].Comm != "tar" {
		t.Errorf("solaris: unit %q, %+v %+v", r.BlockUnit(), evs[0], evs[1])
	}
	// Told, it does not guess.
	evs, r = read(strings.Join(sol, "\n"), 4096)
	if !strings.Contains(r.BlockUnit(), "--block-size") || evs[1].Offset-evs[0].Offset != 16384*8 {
		t.Errorf("--block-size 4096: unit %q, %+v %+v", r.BlockUnit(), evs[0], evs[1])
	}
}

// A capture of two runs one after another, through the real blkparse:
// each run's requests are its own (same sectors, times from zero again),
// the closing "Skips: 0" is no loss, and requests are followed through a
// partition remap (A), a merge, a split and a requeue, each counted.
func TestBlkparseRunsAndRemaps(t *testing.T) {
	bp, err := exec.LookPath("blkparse")
	if err != nil {
		testutil.Unavailable(t, "blkparse is not installed (apt-get install blktrace)")
	}
	disk, part := uint32(8<<20), uint32(8<<20|1) // 8:0 and its partition 8:1
	remap := func(fromSector uint64) []byte {
		b := binary.BigEndian.AppendUint32(nil, part)
		b = binary.BigEndian.AppendUint32(b, disk)
		return binary.BigEndian.AppendUint64(b, fromSector)
	}
	split := binary.BigEndian.AppendUint64(nil, 3008)
	const tcRequeue, taRequeue, taRemap = 1 << 21, 6, 15
	run := []blkRec{
		// a bio on the partition, remapped onto the disk, queued there too
		{seq: 1, time: 1000, sector: 0, bytes: 4096, action: taQueue | tcRead | tcQueue, pid: 42, dev: part},
		{seq: 2, time: 1100, sector: 2048, bytes: 4096, action: taRemap | tcRead | tcQueue, pid: 42, dev: disk, pdu: remap(0)},
		{seq: 3, time: 1200, sector: 2048, bytes: 4096, action: taQueue | tcRead | tcQueue, pid: 42, dev: disk},
		{seq: 4, time: 1300, sector: 2048, bytes: 4096, action: taGetrq | tcRead, pid: 42, dev: disk},
		{seq: 5, time: 2000, sector: 2048, bytes: 4096, action: taIssue | tcRead | tcIssue, pid: 42, dev: disk},
		{seq: 6, time: 9000, sector: 2048, bytes: 4096, action: taComplete | tcRead | tcComplete, dev: disk},
		// a back merge of two 4 KiB writes
		{seq: 7, time: 10000, sector: 2000, bytes: 4096, action: taQueue | tcWrite | tcQueue, pid: 42, dev: disk},
		{seq: 8, time: 10100, sector: 2008, bytes: 4096, action: taQueue | tcWrite | tcQueue, pid: 42, dev: disk},
		{seq: 9, time: 10200, sector: 2008, bytes: 4096, action: taBackmerge | tcWrite | tcQueue, pid: 42, dev: disk},
		{seq: 10, time: 11000, sector: 2000, bytes: 8192, action: taIssue | tcWrite | tcIssue, pid: 42, dev: disk},
		{seq: 11, time: 15000, sector: 2000, bytes: 8192, action: taComplete | tcWrite | tcComplete, dev: disk},
		// a split into two requests, the second requeued once
		{seq: 12, time: 20000, sector: 3000, bytes: 8192, action: taQueue | tcRead | tcQueue, pid: 42, dev: disk},
		{seq: 13, time: 20100, sector: 3000, bytes: 8192, action: taSplit | tcRead, pid: 42, dev: disk, pdu: split},
		{seq: 14, time: 21000, sector: 3000, bytes: 4096, action: taIssue | tcRead | tcIssue, pid: 42, dev: disk},
		{seq: 15, time: 21500, sector: 3008, bytes: 4096, action: taIssue | tcRead | tcIssue, pid: 42, dev: disk},
		{seq: 16, time: 21600, sector: 3008, bytes: 4096, action: taRequeue | tcRead | tcRequeue, pid: 42, dev: disk},
		{seq: 17, time: 22000, sector: 3008, bytes: 4096, action: taIssue | tcRead | tcIssue, pid: 42, dev: disk},
		{seq: 18, time: 30000, sector: 3000, bytes: 4096, action: taComplete | tcRead | tcComplete, dev: disk},
		{seq: 19, time: 31000, sector: 3008, bytes: 4096, action: taComplete | tcRead | tcComplete, dev: disk},
	}
	var text []byte
	for i := 0; i < 2; i++ {
		base := filepath.Join(t.TempDir(), "sda")
		var b []byte
		for _, r := range run {
			b = append(b, r.encode(binary.LittleEndian)...)
		}
		if err := os.WriteFile(base+".blktrace.0", b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bp, "-i", base).CombinedOutput()
		if err != nil {
			t.Fatalf("blkparse: %v\n%s", err, out)
		}
		text = append(text, out...)
	}
	if !bytes.Contains(text, []byte(" A ")) || !bytes.Contains(text, []byte("Skips: 0")) {
		t.Fatalf("blkparse printed no remap or no trailer:\n%s", text)
	}
	r := NewBlkparseReader(bytes.NewReader(text), "runs")
	evs, lost := readEvents(t, r)
	c := r.Counts()
	// Per run: the remapped read, the merged write, the split's two parts.
	if len(evs) != 8 || lost != 0 || c.Unmatched != 0 || c.Unfinished != 0 || r.Runs() != 2 {
		t.Fatalf("%d events (want 8), lost %d, counts %+v, runs %d:\n%s", len(evs), lost, c, r.Runs(), text)
	}
	sizes := map[int64]int{}
	for i, e := range evs {
		sizes[e.Size]++
		if i >= 4 && e.Start < evs[3].End {
			t.Errorf("the second run's event %d starts at %d, before the first run ended (%d)", i, e.Start, evs[3].End)
		}
	}
	remapped := evs[0]
	if remapped.Offset != 2048*512 || remapped.Start != 0 || remapped.Dev != (event.Dev{Major: 8, Minor: 0}) || sizes[8192] != 2 || sizes[4096] != 6 {
		t.Errorf("remapped read %+v (timed from its queueing on the partition), sizes %v", remapped, sizes)
	}
	said := strings.Join(r.Warnings(), "\n")
	for _, w := range []string{"2 runs one after another", "2 merges", "2 splits", "2 requeues", "2 remaps"} {
		if !strings.Contains(said, w) {
			t.Errorf("no %q in %q", w, said)
		}
	}
}
