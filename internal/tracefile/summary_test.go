package tracefile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

func sampleSummaries(n int) []event.Summary {
	rows := make([]event.Summary, n)
	for i := range rows {
		rows[i] = event.Summary{Start: int64(i/3) * event.SummarySeconds, Layer: event.Layer(i % 2), Op: event.Read + event.Op(i%2),
			Dev: event.Dev{Major: 254}, Pid: uint32(100 + i%3), Comm: "fio", First: int64(i/3)*event.SummarySeconds + 5, Last: int64(i/3+1) * event.SummarySeconds,
			Count: int64(10 + i), Bytes: int64(10+i) * 4096, SizeSum: int64(10+i) * 4096, LatencyNs: int64(10+i) * 90_000,
			Size: []event.HistCount{{44, int64(10 + i)}}, Lat: []event.HistCount{{63, int64(10 + i)}}, Depth: []event.HistCount{{1, int64(10 + i)}}}
	}
	return rows
}

func writeSummaryTrace(t *testing.T, path string, rows []event.Summary, finish bool) {
	t.Helper()
	w, err := Create(path, Header{Tool: "ioshape", Backend: "native", Start: time.Unix(1700000000, 0).UTC(), Target: Target{Mode: "command", Summary: true}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.WriteSummary(&rows[i]); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !finish {
		w.Flush()
		w.abandon()
		return
	}
	if err := w.Close(Footer{EndReason: "target exited", SummarizedIOs: 1}); err != nil {
		t.Fatal(err)
	}
}

func readSummaries(t *testing.T, path string) ([]event.Summary, *Reader) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var got []event.Summary
	r.OnSummary(func(s *event.Summary) { got = append(got, *s) })
	for r.Next() {
		t.Fatal("a summary trace yielded an event")
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return got, r
}

// Summary rows come back as written, in a trace of format version 2 that
// says it is a summary; a reader not asking for them skips them.
func TestSummaryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.iotrace")
	rows := sampleSummaries(23)
	writeSummaryTrace(t, path, rows, true)
	got, r := readSummaries(t, path)
	if !reflect.DeepEqual(got, rows) {
		t.Fatalf("rows differ:\n got %+v\nwant %+v", got, rows)
	}
	m := r.Meta()
	if !r.Summary() || m.Header.FormatVersion != 2 || m.Footer == nil || m.Footer.SummaryRows != int64(len(rows)) {
		t.Errorf("summary=%v version=%d footer=%+v", r.Summary(), m.Header.FormatVersion, m.Footer)
	}
	raw, _ := os.ReadFile(path)
	if v := binary.LittleEndian.Uint16(raw[8:]); v != 2 {
		t.Errorf("preamble version %d", v)
	}
	plain, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for plain.Next() {
		t.Fatal("event from a summary trace")
	}
	if plain.Err() != nil {
		t.Fatal(plain.Err())
	}
	// Event traces are version 3: their events are columns.
	ev := filepath.Join(t.TempDir(), "e.iotrace")
	writeTrace(t, ev, sampleEvents(3), true)
	raw, _ = os.ReadFile(ev)
	if v := binary.LittleEndian.Uint16(raw[8:]); v != 3 {
		t.Errorf("an event trace has version %d", v)
	}
}

// A summary recording cut short keeps every chunk it flushed.
func TestSummaryCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.iotrace")
	rows := sampleSummaries(12)
	writeSummaryTrace(t, path, rows, false)
	got, r := readSummaries(t, path+PartialSuffix)
	if !reflect.DeepEqual(got, rows) || !r.Incomplete() {
		t.Fatalf("cut-short summary: %d of %d rows, incomplete=%v", len(got), len(rows), r.Incomplete())
	}
}

// A summary chunk that is not rows is a corrupt trace, said in one line.
func TestSummaryCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.iotrace")
	w, err := Create(path, Header{Tool: "ioshape", Target: Target{Summary: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.writeChunk(kindSummary, []byte(`{"not": "rows"}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Footer{}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.OnSummary(func(*event.Summary) {})
	for r.Next() {
	}
	if r.Err() == nil {
		t.Fatal("a malformed summary chunk was read without error")
	}
}
