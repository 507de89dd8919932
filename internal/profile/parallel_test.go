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

// While a layer has one device, the layer's sweep is left to the device's
// and copied when a second device comes: the profile, its series and the
// arrivals handed on are those of a layer swept on its own from the start.
func TestOneDeviceSweepIsTheLayers(t *testing.T) {
	base := mixedTrace(40_000)
	for _, joinAt := range []int{-1, 0, 1, 20_000, 39_990} { // where a second device joins; -1: never
		evs := append([]event.Event(nil), base...)
		for i := range evs {
			evs[i].Dev.Minor = 0
			if joinAt >= 0 && i >= joinAt && i%3 == 0 {
				evs[i].Dev.Minor = 1
			}
		}
		type seen struct { // an arrival's event is the profile's until the call returns
			e        event.Event
			depth    int
			idle     int64
			seq, any bool
		}
		run := func(solo bool) (string, []seen) {
			var got []seen
			keep := func(a *Arrival) { got = append(got, seen{*a.Event, a.depth, a.idle, a.seq, a.seqKnown}) }
			b := NewBuilder(Options{Series: true, OnArrival: [2]func(*Arrival){keep, keep}})
			for _, h := range b.halves {
				h.soloOff = !solo
			}
			for k := range evs {
				b.Add(&evs[k])
			}
			j, _ := json.Marshal(b.Finish())
			return string(j), got
		}
		want, wantArr := run(false)
		got, gotArr := run(true)
		if got != want {
			t.Fatalf("second device at %d: the profile differs:\n%s\n%s", joinAt, got, want)
		}
		if len(gotArr) != len(wantArr) || len(gotArr) < 30_000 {
			t.Fatalf("second device at %d: %d arrivals, want %d", joinAt, len(gotArr), len(wantArr))
		}
		for i := range gotArr {
			if gotArr[i] != wantArr[i] {
				t.Fatalf("second device at %d: arrival %d is %+v, want %+v", joinAt, i, gotArr[i], wantArr[i])
			}
		}
	}
}
