package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// The iolog replays what the application asked for, in issue order, each
// file's offsets from its lowest, with µs times; the kernel's own I/O is
// left out, a copy's read half is a read of its source; without a syscall
// layer the block layer's requests are replayed per device.
func TestIolog(t *testing.T) {
	var l Iolog
	dev := event.Dev{Major: 8, Minor: 1}
	// Completion order, not issue order.
	l.Add(&event.Event{Layer: event.Syscall, Op: event.Write, Start: 3_000_000, End: 3_100_000, Dev: dev, Inode: 7, Offset: 1<<20 + 4096, Size: 4096})
	l.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 1_000_000, End: 1_200_000, Dev: dev, Inode: 7, Offset: 1 << 20, Size: 4096})
	l.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 2_000_000, End: 2_050_000, Dev: dev, Inode: 9, Offset: 0, Size: 65536})
	l.Add(&event.Event{Layer: event.Syscall, Op: event.Flush, Start: 4_000_000, End: 4_500_000, Dev: dev, Inode: 7, Offset: -1})
	l.Add(&event.Event{Layer: event.Block, Op: event.Write, Start: 5_000_000, End: 5_100_000, Dev: dev, Offset: 0, Size: 4096, Flags: event.FlagKernel})
	l.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: 4_600_000, End: 4_700_000, Dev: dev, Inode: 9, Offset: 0, Size: 4096, Flags: event.FlagCopySource})
	var out bytes.Buffer
	files, n, err := l.Write(&out)
	if err != nil {
		t.Fatal(err)
	}
	want := `fio version 3 iolog
0 f1.dat add
0 f2.dat add
0 f1.dat open
0 f2.dat open
0 f1.dat read 0 4096
1000 f2.dat read 0 65536
2000 f1.dat write 4096 4096
3000 f1.dat sync 0 0
3600 f2.dat read 0 4096
3600 f1.dat close
3600 f2.dat close
`
	if out.String() != want {
		t.Errorf("iolog:\n%s\nwant:\n%s", out.String(), want)
	}
	if n != 5 || len(files) != 2 || files[0].Size != 8192 || files[0].Inode != 7 || files[1].Size != 65536 {
		t.Errorf("n %d, files %+v", n, files)
	}

	var b Iolog
	b.Add(&event.Event{Layer: event.Block, Op: event.Read, Start: 0, End: 100, Dev: dev, Offset: 1 << 30, Size: 4096, Pid: 4})
	out.Reset()
	if files, n, _ := b.Write(&out); n != 1 || len(files) != 1 || files[0].Dev != dev || !strings.Contains(out.String(), "0 f1.dat read 0 4096") {
		t.Errorf("block only: %d %+v\n%s", n, files, out.String())
	}
}

// Two threads reading side by side, each waiting for its own reads: a log
// each, on the same files, timed from the trace's first I/O; one thread
// after another, or asynchronous I/O, needs one log.
func TestIologThreads(t *testing.T) {
	dev := event.Dev{Major: 8, Minor: 1}
	var l Iolog
	for i := int64(0); i < 4; i++ {
		for tid := uint32(1); tid <= 2; tid++ {
			at := i*1_000_000 + int64(tid)*100_000
			l.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 500_000, Dev: dev, Inode: uint64(tid),
				Offset: i * 4096, Size: 4096, Tid: tid})
		}
	}
	threads := l.Threads()
	if len(threads) != 2 || threads[0] != 1 || threads[1] != 2 {
		t.Fatalf("threads %v, want [1 2]", threads)
	}
	var whole, t2 bytes.Buffer
	all, n, _ := l.Write(&whole)
	files, n2, err := l.WriteThread(&t2, 2)
	if err != nil || n != 8 || n2 != 4 || len(files) != len(all) || files[1].Name != all[1].Name {
		t.Fatalf("whole %d I/Os %+v; thread 2 %d I/Os %+v (%v)", n, all, n2, files, err)
	}
	want := `fio version 3 iolog
0 f2.dat add
0 f2.dat open
100 f2.dat read 0 4096
1100 f2.dat read 4096 4096
2100 f2.dat read 8192 4096
3100 f2.dat read 12288 4096
3100 f2.dat close
`
	if t2.String() != want {
		t.Errorf("thread 2's log:\n%s\nwant:\n%s", t2.String(), want)
	}

	var serial Iolog
	for tid := uint32(1); tid <= 2; tid++ {
		at := int64(tid) * 10_000_000
		serial.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Start: at, End: at + 500_000, Dev: dev, Inode: 1, Size: 4096, Tid: tid})
	}
	if th := serial.Threads(); th != nil {
		t.Errorf("one thread after another: %v, want one log", th)
	}
	var async Iolog
	for tid := uint32(1); tid <= 2; tid++ {
		async.Add(&event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallAioRead, Flags: event.FlagAsync, Start: 0, End: 500_000,
			Dev: dev, Inode: 1, Size: 4096, Tid: tid})
	}
	if th := async.Threads(); th != nil {
		t.Errorf("asynchronous I/O: %v, want one log", th)
	}
}
