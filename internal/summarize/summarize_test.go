package summarize

import (
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// Rows are written as their seconds pass, not at the end: a long
// recording holds a few seconds of events and rows, whatever its length.
// Every I/O is in exactly one row; waits are not summarized; a copy's read
// half is counted but not in the depth.
func TestRowsAsSecondsPass(t *testing.T) {
	var rows []event.Summary
	var atClose int
	s := New(func(r *event.Summary) error {
		rows = append(rows, *r)
		return nil
	})
	var ios, held int64
	for i := range 60_000 { // 60 s at 1,000 I/Os a second, QD1, 2 processes
		start := int64(i) * 1e6
		e := event.Event{Layer: event.Block, Op: event.Read, Start: start, End: start + 500_000, Dev: event.Dev{Major: 8},
			Offset: int64(i) * 4096, Size: 4096, Bytes: 4096, Pid: uint32(100 + i%2), Comm: "fio"}
		if err := s.Add(&e); err != nil {
			t.Fatal(err)
		}
		ios++
		if i%7 == 0 {
			w := event.Event{Layer: event.Syscall, Call: event.CallWait, Start: start, End: start + 10}
			s.Add(&w)
			a := event.Event{Layer: event.Syscall, Call: event.CallFadvise, Flags: event.FlagAdviceSequential, Start: start, End: start + 10}
			s.Add(&a)
			c := event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallCopyFileRange, Flags: event.FlagCopySource,
				Start: start, End: start + 100, Dev: event.Dev{Major: 8, Minor: 1}, Offset: -1, Size: 4096, Bytes: 4096, Pid: 7, Comm: "cp"}
			s.Add(&c)
			ios++
		}
		held = max(held, int64(len(s.pending)-s.head))
	}
	atClose = len(rows)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if atClose < len(rows)*3/4 {
		t.Errorf("%d of %d rows were written before the end: rows wait for the end", atClose, len(rows))
	}
	if held > 5000 {
		t.Errorf("%d events held at once: more than the re-sorting window's", held)
	}
	var counted, depthCounted int64
	for _, r := range rows {
		counted += r.Count
		for _, d := range r.Depth {
			depthCounted += d[1]
		}
		if r.Layer == event.Syscall && (!r.CopySource || len(r.Depth) > 0) {
			t.Errorf("copy read half: %+v", r)
		}
		if r.Layer == event.Block && (r.Located != r.Count || r.Sequential < r.Count-1) {
			t.Errorf("a sequential reader's row: %d I/Os, %d located, %d sequential", r.Count, r.Located, r.Sequential)
		}
	}
	if counted != ios || depthCounted != 60_000 || s.Late() != 0 {
		t.Errorf("rows count %d I/Os of %d, %d depths of 60000, %d late", counted, ios, depthCounted, s.Late())
	}
}
