package testutil

import (
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// WriteFleetTrace writes a generated trace as a recording on host would
// leave it, for fleet-sized datasets (tools/fleetgen) and the tests that
// query one: n I/Os from day's start, both layers, six processes, three
// devices, 4 KiB–1 MiB, varied by seed.
func WriteFleetTrace(path, id, host string, day time.Time, n, seed int) error {
	w, err := tracefile.Create(path, tracefile.Header{ID: id, Host: host, Label: "launch", Start: day, Tool: "fleetgen", Backend: "generated"})
	if err != nil {
		return err
	}
	comms := []string{"Safari", "Finder", "cp", "mds_stores", "photolibraryd", "Xcode"}
	for j := range n {
		k := j*7919 + seed*104729
		e := event.Event{Layer: event.Layer(k % 2), Op: event.Op(k % 3 % 2), Start: int64(j) * 20_000, Size: 4096 << (k % 9),
			Dev: event.Dev{Major: 1, Minor: uint32(k % 3)}, Pid: uint32(100 + k%6), Tid: uint32(100 + k%6), Comm: comms[k%6]}
		e.End = e.Start + int64(50_000+k%997*1000)
		e.Bytes, e.Offset = e.Size, int64(k%1_000_000)*4096
		if err := w.Write(&e); err != nil {
			return err
		}
	}
	devs := []event.Device{{Major: 1, Minor: 0, Name: "disk0"}, {Major: 1, Minor: 1, Name: "disk2"}, {Major: 1, Minor: 2, Name: "disk4"}}
	return w.Close(tracefile.Footer{DurationNs: int64(n) * 20_000, Devices: devs})
}
