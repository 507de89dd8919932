package tracefile

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// readBatches is readAll through NextBatch.
func readBatches(t *testing.T, path string) ([]event.Event, *Reader, error) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out []event.Event
	for b := r.NextBatch(); b != nil; b = r.NextBatch() {
		out = append(out, b...)
	}
	return out, r, r.Err()
}

// Chunks decoded on other goroutines (NextBatch) give what Next gives, in
// the same order, with the same ending — finished, cut anywhere, corrupt,
// malformed inside a valid chunk — on one core and on several.
func TestBatchesSameAsNext(t *testing.T) {
	dir := t.TempDir()
	var files []string
	add := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	whole := filepath.Join(dir, "whole")
	writeTrace(t, whole, sampleEvents(70000), true)
	files = append(files, whole)
	partial := filepath.Join(dir, "partial")
	writeTrace(t, partial, sampleEvents(3000), false)
	cutFrom, err := os.ReadFile(partial + PartialSuffix)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut < len(cutFrom); cut += 1 + cut/7 {
		add("cut-"+strconv.Itoa(cut), cutFrom[:cut])
	}
	good, _ := os.ReadFile(whole)
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)/2] ^= 0xff
	add("corrupt", corrupt)
	add("malformed", malformedChunk(t, dir))

	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, p := range files {
			want, r1, err1 := readAll(t, p)
			got, r2, err2 := readBatches(t, p)
			if strings.HasSuffix(p, "malformed") && (err1 == nil || !strings.Contains(err1.Error(), "malformed events")) {
				t.Errorf("malformed chunk read with error %v", err1)
			}
			if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
				t.Errorf("%s, %d cores: Next ended with %v, NextBatch with %v", filepath.Base(p), procs, err1, err2)
				continue
			}
			if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d cores: NextBatch read %d events, Next %d (or they differ)", filepath.Base(p), procs, len(got), len(want))
			}
			if r1 != nil && (r1.Incomplete() != r2.Incomplete() || r1.CutNote() != r2.CutNote()) {
				t.Errorf("%s, %d cores: endings differ: incomplete %v/%v, cut %q/%q", filepath.Base(p), procs, r1.Incomplete(), r2.Incomplete(), r1.CutNote(), r2.CutNote())
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// malformedChunk is a finished trace whose second event chunk decompresses
// but whose events stop making sense half-way: a varint cut at the end.
func malformedChunk(t *testing.T, dir string) []byte {
	t.Helper()
	p := filepath.Join(dir, "malformed-src")
	w, err := Create(p, Header{Tool: "ioshape"})
	if err != nil {
		t.Fatal(err)
	}
	evs := sampleEvents(200)
	for i := range evs[:100] {
		w.Write(&evs[i])
	}
	w.Flush()
	enc := newEncoder()
	for i := range evs[100:] {
		enc.add(&evs[100+i])
	}
	body := enc.payload(nil)
	body = append(body[:len(body)-30], 0xff, 0xff) // cut mid-event, ending in a continuation byte
	if err := w.writeChunk(kindEvents, body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Footer{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
