// Package storetest fills trace stores for tests and benchmarks.
package storetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Fill makes a store at dir holding n small finished traces, each in the
// index, and returns it.
func Fill(tb testing.TB, dir string, n int) *store.Store {
	tb.Helper()
	s := store.Open(dir)
	if err := s.Ensure(); err != nil {
		tb.Fatal(err)
	}
	// One small trace, copied under n IDs: lists read headers, footers
	// and the index, never the events.
	tmpl := filepath.Join(tb.TempDir(), "t.iotrace")
	w, err := tracefile.Create(tmpl, tracefile.Header{Label: "bench", Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Target: tracefile.Target{Mode: "command", Command: []string{"cp", "a", "b"}}})
	if err != nil {
		tb.Fatal(err)
	}
	e := event.Event{Layer: event.Block, Op: event.Read, Start: 0, End: 1000, Size: 4096, Bytes: 4096, Comm: "cp"}
	w.Write(&e)
	if err := w.Close(tracefile.Footer{DurationNs: 1000, Events: 1}); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(tmpl)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("%06d", i)
		for j, c := range []byte(id) { // digits 0 and 1 are not in the alphabet
			id = id[:j] + string("23456789ab"[c-'0']) + id[j+1:]
		}
		if err := os.WriteFile(filepath.Join(dir, "traces", id+store.Ext), data, 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := s.Add(id); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}
