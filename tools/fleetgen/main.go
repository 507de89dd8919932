// Command fleetgen writes a generated fleet of traces into a store, for
// measuring what a fleet-sized Parquet dataset costs the engines that read
// it (scripts/fleet-bench.sh): TRACES traces of EVENTS I/Os each, from
// hosts mac-001…, both layers, a few processes and devices, 4 KiB–1 MiB.
//
//	fleetgen STORE TRACES EVENTS
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: fleetgen STORE TRACES EVENTS")
		os.Exit(2)
	}
	store := os.Args[1]
	traces, _ := strconv.Atoi(os.Args[2])
	events, _ := strconv.Atoi(os.Args[3])
	dir := filepath.Join(store, "traces")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	const alphabet = "23456789abcdefghjkmnpqrstuvwxyz"
	comms := []string{"Safari", "Finder", "cp", "mds_stores", "photolibraryd", "Xcode"}
	devs := []event.Device{{Major: 1, Minor: 0, Name: "disk0"}, {Major: 1, Minor: 1, Name: "disk2"}, {Major: 1, Minor: 2, Name: "disk4"}}
	for i := range traces {
		id := "fq"
		for k, n := 0, i; k < 4; k, n = k+1, n/len(alphabet) {
			id += string(alphabet[n%len(alphabet)])
		}
		host := fmt.Sprintf("mac-%03d", i%200)
		day := time.Date(2026, 11, 1+i%25, 9, 0, 0, 0, time.UTC)
		w, err := tracefile.Create(filepath.Join(dir, id+".iotrace"), tracefile.Header{ID: id, Host: host, Label: "launch", Start: day, Tool: "fleetgen", Backend: "generated"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for j := range events {
			k := j*7919 + i*104729
			e := event.Event{Layer: event.Layer(k % 2), Op: event.Op(k % 3 % 2), Start: int64(j) * 20_000, Size: 4096 << (k % 9),
				Dev: event.Dev{Major: 1, Minor: uint32(k % 3)}, Pid: uint32(100 + k%6), Tid: uint32(100 + k%6), Comm: comms[k%6]}
			e.End = e.Start + int64(50_000+k%997*1000)
			e.Bytes, e.Offset = e.Size, int64(k%1_000_000)*4096
			w.Write(&e)
		}
		if err := w.Close(tracefile.Footer{DurationNs: int64(events) * 20_000, Devices: devs}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
