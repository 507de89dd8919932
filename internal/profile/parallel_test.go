package profile

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// mixedTrace is both layers, in completion order within short batches (as
// tracers emit), with far more devices and processes than the profile
// keeps apart, kernel writeback, flushes, failures and unknown offsets:
// every path of the aggregation.
func mixedTrace(n int) []event.Event {
	rng := rand.New(rand.NewPCG(7, 8))
	evs := make([]event.Event, 0, n)
	var at int64
	for i := 0; i < n; i++ {
		size := int64(512) << rng.IntN(12)
		lat := 10_000 + rng.Int64N(400_000)
		e := event.Event{
			Layer: event.Layer(rng.IntN(2)), Op: event.Read + event.Op(rng.IntN(2)),
			Start: at, End: at + lat, Size: size, Bytes: size,
			Dev:    event.Dev{Major: 8, Minor: uint32(rng.IntN(100))},
			Offset: rng.Int64N(1 << 32), Inode: uint64(rng.IntN(50)),
			Pid: uint32(rng.IntN(400)), Comm: "p",
		}
		switch k := rng.IntN(50); {
		case k == 0:
			e.Op, e.Size, e.Bytes = event.Flush, 0, 0
		case k == 1:
			e.Errno, e.Bytes = 5, 0
		case k == 2:
			e.Offset = -1
		case k < 8 && e.Layer == event.Block:
			e.Flags |= event.FlagKernel
			e.Comm = "kworker/u8:1"
		}
		if e.Layer == event.Block && rng.IntN(4) > 0 {
			e.Flags |= event.FlagDispatched
			e.Dispatch = e.Start + rng.Int64N(lat)
		}
		evs = append(evs, e)
		at += rng.Int64N(20_000)
	}
	for i := 0; i+32 <= len(evs); i += 32 { // completion order within each batch
		b := evs[i : i+32]
		for k := 1; k < len(b); k++ {
			for m := k; m > 0 && b[m].End < b[m-1].End; m-- {
				b[m], b[m-1] = b[m-1], b[m]
			}
		}
	}
	return evs
}

// Each layer on its own goroutine gives the profile of one goroutine,
// byte for byte.
func TestParallelSameProfile(t *testing.T) {
	evs := mixedTrace(60_000)
	for _, wb := range []bool{false, true} {
		serial := build(evs, Options{ExcludeWriteback: wb})
		par := build(evs, Options{ExcludeWriteback: wb, Parallel: true})
		a, _ := json.Marshal(serial)
		b, _ := json.Marshal(par)
		if string(a) != string(b) {
			t.Fatalf("exclude writeback %v: parallel profile differs:\n%s\n%s", wb, a, b)
		}
		if len(serial.Warnings) < 2 || serial.Block == nil || serial.Syscall == nil {
			t.Fatalf("the trace does not exercise folding: warnings %q", serial.Warnings)
		}
	}
}
