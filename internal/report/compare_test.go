package report_test

import (
	"testing"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// analysisOf profiles n syscall I/Os of one size, one at a time, each gap
// after the last: sequential or random, reads or writes.
func analysisOf(t *testing.T, label string, n int, size int64, op event.Op, sequential bool, gap int64) *report.Analysis {
	t.Helper()
	b := profile.NewBuilder(profile.Options{})
	var at, off int64
	for i := range n {
		if !sequential {
			off = int64((i*7919)%1000) * 1 << 20
		}
		e := event.Event{Layer: event.Syscall, Op: op, Call: event.CallPread64, Start: at, End: at + 100e3, Size: size, Bytes: size,
			Offset: off, Dev: event.Dev{Major: 8, Minor: 1}, Inode: 12, Pid: 7, Tid: 7, Comm: "w"}
		if op == event.Write {
			e.Call = event.CallPwrite64
		}
		b.Add(&e)
		at += 100e3 + gap
		off += size
	}
	p := b.Finish()
	a := &report.Analysis{Show: report.NewShow(label, tracefile.Meta{Header: tracefile.Header{ID: label, Label: label}}, p)}
	sh, ok := classify.ShapeOf(p)
	if !ok {
		t.Fatalf("%s: no shape", label)
	}
	a.Class = &classify.Result{Shape: sh}
	return a
}

// Two traces of different shapes: each row holds both values, the change
// relative to A, and is flagged where it matters.
func TestCompareTwoDifferentTraces(t *testing.T) {
	a := analysisOf(t, "small-random-reads", 400, 4096, event.Read, false, 0)
	b := analysisOf(t, "large-sequential-writes", 100, 1<<20, event.Write, true, 300e3)
	c := report.Compare([]*report.Analysis{a, b})
	if len(c.Traces) != 2 || c.Traces[0].ID != "small-random-reads" || c.Traces[1].ID != "large-sequential-writes" {
		t.Fatalf("traces %+v", c.Traces)
	}
	rows := map[string]report.CompareRow{}
	for _, r := range c.Rows {
		rows[r.Key] = r
	}
	check := func(key string, wantA, wantB, wantChange float64) {
		t.Helper()
		r, ok := rows[key]
		if !ok || len(r.Values) != 2 || r.Values[0] == nil || r.Values[1] == nil || r.Change[1] == nil {
			t.Fatalf("row %s: %+v", key, r)
		}
		if *r.Values[0] != wantA || *r.Values[1] != wantB || *r.Change[1] != wantChange || !r.Matters {
			t.Errorf("row %s: A %v, B %v, change %v, matters %v; want %v, %v, %v, true",
				key, *r.Values[0], *r.Values[1], *r.Change[1], r.Matters, wantA, wantB, wantChange)
		}
	}
	check("block_size", 4096, 1<<20, 255)    // ×256: +25500 %
	check("read_fraction", 1, 0, -1)         // shares change in points
	check("random_fraction", 1, 0.01, -0.99) // the first of B's 100 I/Os starts its stream
	if r := rows["idle_fraction"]; r.Values[1] == nil || *r.Values[1] < 0.6 || *r.Values[0] > 0.01 {
		t.Errorf("idle: %+v", r)
	}
	// A against itself changes nothing.
	same := report.Compare([]*report.Analysis{a, a})
	for _, r := range same.Rows {
		if r.Matters {
			t.Errorf("row %s flagged comparing a trace with itself", r.Key)
		}
	}
}
