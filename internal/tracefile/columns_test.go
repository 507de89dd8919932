package tracefile

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// extremeEvents have every field at the ends of its range, times going
// backwards and forwards, and optional fields present and absent.
func extremeEvents() []event.Event {
	evs := sampleEvents(40)
	evs = append(evs,
		event.Event{Layer: event.Syscall, Op: event.Write, Call: event.CallWait, Flags: event.FlagBlocked | event.FlagCopySource,
			Start: math.MaxInt64 / 4, End: math.MaxInt64 / 2, Blocked: math.MaxInt64 / 4, Dev: event.Dev{Major: math.MaxUint32, Minor: math.MaxUint32},
			Inode: math.MaxUint64, Offset: math.MaxInt64, Size: math.MaxInt64, Bytes: math.MinInt64, Errno: math.MinInt32,
			Pid: math.MaxUint32, Tid: math.MaxUint32, Comm: strings.Repeat("x", maxNameLen)},
		event.Event{Layer: event.Block, Op: event.Discard, Flags: event.FlagDispatched, Start: math.MinInt64 / 4, Dispatch: math.MinInt64 / 4,
			End: math.MinInt64 / 4, Offset: -1, Size: -1, Bytes: -1, Errno: -1},
		event.Event{Offset: -1}, // an empty name, and nothing else
	)
	return evs
}

// writeChunks writes evs as one chunk of varint rows (version 1) or of
// columns, in a finished trace.
func writeChunks(t *testing.T, path string, evs []event.Event, rows bool) {
	t.Helper()
	w, err := Create(path, Header{Tool: "ioshape"})
	if err != nil {
		t.Fatal(err)
	}
	if rows {
		enc := newEncoder()
		for i := range evs {
			enc.add(&evs[i])
		}
		err = w.writeChunk(kindEvents, enc.payload(nil))
	} else {
		for i := range evs {
			w.Write(&evs[i])
		}
		err = w.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Footer{}); err != nil {
		t.Fatal(err)
	}
}

// Columns and version 1's varint rows give back the same events, at the
// ends of every field's range, through Next and NextBatch; a chunk whose
// columns are all the same value stores them in no bytes.
func TestColumnsReadAsRows(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]event.Event{
		"extremes": extremeEvents(),
		"constant": {{Comm: "a"}, {Comm: "a"}, {Comm: "a"}},
		"one":      {{Layer: event.Block, Op: event.Read, Start: 5, End: 9, Size: 4096, Bytes: 4096, Comm: "dd"}},
	}
	for name, evs := range cases {
		for _, rows := range []bool{true, false} {
			p := filepath.Join(dir, name)
			os.Remove(p)
			writeChunks(t, p, evs, rows)
			got, _, err := readAll(t, p)
			if err != nil || !reflect.DeepEqual(got, evs) {
				t.Fatalf("%s (rows %v): read %v\n got %+v\nwant %+v", name, rows, err, got, evs)
			}
			batched, _, err := readBatches(t, p)
			if err != nil || !reflect.DeepEqual(batched, evs) {
				t.Fatalf("%s (rows %v), in batches: read %v, %d events", name, rows, err, len(batched))
			}
		}
	}
	// Three identical events of time 0: every column takes no bytes.
	enc := newColumnEncoder()
	for _, e := range cases["constant"] {
		enc.add(&e)
	}
	if p := enc.payload(nil); len(p) != 1+1+1+1+numColumns+columnPad {
		t.Errorf("constant columns: payload of %d bytes", len(p))
	}
}

// A column chunk that is malformed inside a valid frame — a width past 8
// bytes, columns longer than the chunk, a name that is not in the string
// table, more events than a chunk holds — is reported as malformed,
// without a panic, and the events before it are read.
func TestMalformedColumns(t *testing.T) {
	evs := sampleEvents(10)
	enc := newColumnEncoder()
	for i := range evs {
		enc.add(&evs[i])
	}
	good := enc.payload(nil)
	head := len(good) - columnPad // where the columns start
	for i := range enc.cols {
		head -= 1 + colWidth(enc, i)*enc.n
	}
	cases := map[string]func([]byte) []byte{
		"width 9":   func(b []byte) []byte { b[head] = 9; return b },
		"cut":       func(b []byte) []byte { return b[:len(b)-columnPad-1] },
		"name":      func(b []byte) []byte { return setColumn(b, head, enc, colComm, 7) },
		"too many":  func(b []byte) []byte { return append([]byte{0, 0x81, 0x80, 0x10}, b[head:]...) }, // 0 names, 2^18+1 events
		"no widths": func(b []byte) []byte { return b[:head] },
	}
	for name, mangle := range cases {
		p := filepath.Join(t.TempDir(), "t")
		w, err := Create(p, Header{Tool: "ioshape"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			w.Write(&evs[i])
		}
		w.Flush()
		if err := w.writeChunk(kindColumns, mangle(append([]byte(nil), good...))); err != nil {
			t.Fatal(err)
		}
		w.Close(Footer{})
		for _, read := range []func(*testing.T, string) ([]event.Event, *Reader, error){readAll, readBatches} {
			got, _, err := read(t, p)
			if err == nil || !strings.Contains(err.Error(), "malformed event") || len(got) < len(evs) {
				t.Errorf("%s: read %d events, error %v", name, len(got), err)
			}
		}
	}
}

func colWidth(enc *columnEncoder, col int) int {
	w := 0
	for v := enc.widest[col]; v != 0; v >>= 8 {
		w++
	}
	return w
}

// setColumn puts v as every value of column col in a payload whose
// columns start at head.
func setColumn(b []byte, head int, enc *columnEncoder, col int, v uint64) []byte {
	at := head
	for i := 0; i < col; i++ {
		at += 1 + colWidth(enc, i)*enc.n
	}
	w := colWidth(enc, col)
	for k := 0; k < enc.n; k++ {
		for j := 0; j < w; j++ {
			b[at+1+k*w+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// BenchmarkWrite is the recorder's cost of storing events: encoding them
// as columns, compressing and writing each chunk. Run:
//
//	go test ./internal/tracefile -run '^$' -bench Write -benchmem
func BenchmarkWrite(b *testing.B) {
	evs := sampleEvents(1 << 20)
	path := filepath.Join(b.TempDir(), "w.iotrace")
	b.ResetTimer()
	for range b.N {
		os.Remove(path)
		w, err := Create(path, Header{Tool: "ioshape"})
		if err != nil {
			b.Fatal(err)
		}
		for i := range evs {
			w.Write(&evs[i])
		}
		if err := w.Close(Footer{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
