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

	"github.com/ioshape/ioshape/internal/testutil"
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
	for i := range traces {
		id := "fq"
		for k, n := 0, i; k < 4; k, n = k+1, n/len(alphabet) {
			id += string(alphabet[n%len(alphabet)])
		}
		day := time.Date(2026, 11, 1+i%25, 9, 0, 0, 0, time.UTC)
		if err := testutil.WriteFleetTrace(filepath.Join(dir, id+".iotrace"), id, fmt.Sprintf("mac-%03d", i%200), day, events, i); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
