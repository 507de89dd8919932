package analysis

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// copyTrace writes a copy recorded on a drive that took 20 ms a MiB: one
// copy_file_range over 300 sequential 1 MiB reads (6 s) and, with
// writeback, a flusher writing 50 MiB back far away from 5 s on; the
// host took stealNs of its two CPUs' time while it ran.
func copyTrace(t *testing.T, writeback bool, stealNs int64) string {
	path := filepath.Join(t.TempDir(), "copy.iotrace")
	w, err := tracefile.Create(path, tracefile.Header{Tool: "test", Backend: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	dev := event.Dev{Major: 7, Minor: 2}
	var evs []event.Event
	for k := int64(0); k < 300; k++ {
		s := k * 20e6
		evs = append(evs, event.Event{Layer: event.Block, Op: event.Read, Start: s, End: s + 19e6, Dev: dev, Size: 1 << 20, Bytes: 1 << 20,
			Offset: 1<<30 + k<<20, Pid: 2, Tid: 2, Comm: "cp"})
		if writeback && s >= 5e9 {
			evs = append(evs, event.Event{Layer: event.Block, Op: event.Write, Start: s + 5e6, End: s + 15e6, Dev: dev, Size: 1 << 20, Bytes: 1 << 20,
				Offset: 3<<30 + (k-250)<<20, Pid: 40, Tid: 40, Comm: "kworker/u8:1", Flags: event.FlagKernel})
		}
	}
	evs = append(evs, event.Event{Layer: event.Syscall, Op: event.Write, Call: event.CallCopyFileRange, Start: 0, End: 6e9, Dev: dev,
		Size: 300 << 20, Bytes: 300 << 20, Pid: 2, Tid: 2, Comm: "cp", Flags: event.FlagBlocked, Blocked: 300 * 19e6})
	slices.SortStableFunc(evs, func(a, b event.Event) int { return int(a.End - b.End) })
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	f := tracefile.Footer{DurationNs: 6e9, Devices: []event.Device{{Major: 7, Minor: 2, Name: "loop2"}}}
	if stealNs > 0 {
		f.HostStealNs, f.CPUs = stealNs, 2
	}
	if err := w.Close(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// The flushers' writeback that started after the copy would have ended on
// a fast drive is read again without it, for that drive alone: it
// predicts there as the same copy without writeback, says so, and the
// slow drive keeps it.
func TestPredictLeavesOutLateWriteback(t *testing.T) {
	fast, err := drive.Coarse("fast", []float64{3000, 1500, 800, 50}, []float64{2500, 1400, 700, 120})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := drive.Coarse("slow", []float64{12, 10, 1, 0.4}, []float64{12, 10, 1, 0.4})
	if err != nil {
		t.Fatal(err)
	}
	predict := func(path string) ([2]float64, [2]string, int) {
		reads := 0
		rk, err := Predict(context.Background(), openT(t, path), nil, []*drive.Spec{fast, slow}, nil, nil, func(Step) func() {
			reads++
			return func() {}
		})
		if err != nil {
			t.Fatal(err)
		}
		var s [2]float64
		var notes [2]string
		for _, r := range rk.Drives {
			i := 0
			if r.Drive == "slow" {
				i = 1
			}
			s[i], notes[i] = r.PredictedS, strings.Join(r.Notes, "\n")
		}
		return s, notes, reads
	}
	clean, _, _ := predict(copyTrace(t, false, 0))
	got, notes, reads := predict(copyTrace(t, true, 0))
	const note = "writeback of 50 MiB from 5.0 s on"
	if reads != 2 || got[0] != clean[0] || !strings.Contains(notes[0], note) {
		t.Errorf("fast drive: %v s after %d reads, notes %q; want %v s as without writeback, after 2 reads, and a note", got[0], reads, notes[0], clean[0])
	}
	if !(got[1] > 6) || strings.Contains(notes[1], note) {
		t.Errorf("slow drive: %v s, notes %q; want the writeback kept", got[1], notes[1])
	}
}

// A recording during which the host took more than busyHost of the CPUs'
// time says so on every drive; one it took less of, or that did not
// count it, does not.
func TestPredictSaysTheHostWasBusy(t *testing.T) {
	fast, err := drive.Coarse("fast", []float64{3000, 1500, 800, 50}, []float64{2500, 1400, 700, 120})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stealNs int64
		want    string
	}{
		{0, ""},
		{int64(0.02 * 2 * 6e9), ""},
		{int64(0.12 * 2 * 6e9), "the virtual machine's host took 12% of the CPUs' time while recording"},
	} {
		rk, err := Predict(context.Background(), openT(t, copyTrace(t, false, c.stealNs)), nil, []*drive.Spec{fast}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(rk.Drives[0].Notes, "\n")
		if got := strings.Contains(notes, "host took"); got != (c.want != "") || !strings.Contains(notes, c.want) {
			t.Errorf("steal %d ns: notes %q, want %q", c.stealNs, notes, c.want)
		}
	}
}

// Where the trace says what the host took of its threads' time, the note
// says that is left out, and that the rest of a busy host's cost stays.
func TestBusyHostNoteWithTakings(t *testing.T) {
	f := &tracefile.Footer{DurationNs: 6e9, HostStealNs: int64(0.12 * 2 * 6e9), CPUs: 2}
	with, without := busyHostNote(f, 5e8), busyHostNote(f, 0)
	if !strings.Contains(with, "12%") || !strings.Contains(with, "is left out") || strings.Contains(with, "long by as much") {
		t.Errorf("with takings: %q", with)
	}
	if !strings.Contains(without, "long by as much") {
		t.Errorf("without: %q", without)
	}
	if busyHostNote(&tracefile.Footer{DurationNs: 6e9, HostStealNs: 1e6, CPUs: 2}, 5e8) != "" {
		t.Error("a quiet host noted")
	}
}
