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
