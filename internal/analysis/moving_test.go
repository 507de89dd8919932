package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// A trace whose requests went to two disks, without --on: only the disk
// the workload waited on most moves — the same answer as --on naming it,
// said in a note — and the trace is read once.
func TestPredictMovesTheDiskWaitedOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two.iotrace")
	w, err := tracefile.Create(path, tracefile.Header{Tool: "test", Backend: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	slow, fast := event.Dev{Major: 254, Minor: 0}, event.Dev{Major: 7, Minor: 1}
	var at int64
	for i := range 400 {
		dev, lat := slow, int64(2_000_000) // an external disk: 2 ms a read
		if i%2 == 1 {
			dev, lat = fast, 100_000 // the system's libraries: 0.1 ms
		}
		off := int64(i*7919%4096) << 20
		blk := event.Event{Layer: event.Block, Op: event.Read, Start: at + 5_000, End: at + 5_000 + lat, Dev: dev, Size: 4096, Bytes: 4096,
			Offset: off, Pid: 10, Tid: 10, Comm: "app", Flags: event.FlagDispatched, Dispatch: at + 6_000}
		call := event.Event{Layer: event.Syscall, Op: event.Read, Call: event.CallPread64, Start: at, End: at + lat + 20_000, Dev: dev,
			Size: 4096, Bytes: 4096, Offset: off, Pid: 10, Tid: 10, Comm: "app", Inode: uint64(dev.Minor + 1)}
		for _, e := range []*event.Event{&blk, &call} {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		at = call.End + 50_000
	}
	devs := []event.Device{{Major: 254, Minor: 0, Name: "vdb"}, {Major: 7, Minor: 1, Name: "loop1"}}
	if err := w.Close(tracefile.Footer{DurationNs: at, Devices: devs}); err != nil {
		t.Fatal(err)
	}
	to, err := drive.Coarse("to", []float64{3000, 1500, 800, 50}, []float64{2500, 1400, 700, 120})
	if err != nil {
		t.Fatal(err)
	}
	predictOn := func(on []event.Dev) (float64, []string, int) {
		reads := 0
		rk, err := Predict(context.Background(), openT(t, path), nil, []*drive.Spec{to}, nil, on, func(Step) func() {
			reads++
			return func() {}
		})
		if err != nil {
			t.Fatal(err)
		}
		return rk.Drives[0].PredictedS, rk.Drives[0].Notes, reads
	}
	chosen, notes, reads := predictOn(nil)
	onSlow, _, _ := predictOn([]event.Dev{slow})
	onFast, _, _ := predictOn([]event.Dev{fast})
	if chosen != onSlow || chosen == onFast || reads != 1 {
		t.Errorf("without --on %v s (read %d times); --on the slow disk %v s, the fast one %v s", chosen, reads, onSlow, onFast)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "only vdb's I/O moves to the new drive: the workload waited on it most (95%") {
		t.Errorf("notes %q", notes)
	}
}
