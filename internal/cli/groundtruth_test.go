//go:build linux && e2e

package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ioshape/ioshape/internal/classify"
)

// groundTruth is a fio workload whose shape is known, and the catalog
// family it should match.
type groundTruth struct {
	name   string
	fio    []string
	family string
	access string
	size   int64   // byte-weighted median, bytes
	depth  float64 // requested queue depth
	reads  float64 // read share of bytes
}

var groundTruths = []groundTruth{
	{"4K random read QD1", []string{"--rw=randread", "--bs=4k", "--ioengine=psync"}, "rnd4k-q1", "random", 4096, 1, 1},
	{"4K random write QD1", []string{"--rw=randwrite", "--bs=4k", "--ioengine=psync"}, "rnd4k-q1", "random", 4096, 1, 0},
	{"4K random read QD32 (libaio)", []string{"--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=32"}, "rnd4k-q32", "random", 4096, 32, 1},
	{"4K random read, 4 threads (psync)", []string{"--rw=randread", "--bs=4k", "--ioengine=psync", "--numjobs=4"}, "rnd4k-q4", "random", 4096, 4, 1},
	{"4K random 50/50 read/write QD4", []string{"--rw=randrw", "--rwmixread=50", "--bs=4k", "--ioengine=libaio", "--iodepth=4"}, "rnd4k-q4-mixed", "random", 4096, 4, 0.5},
	{"1M sequential read QD1", []string{"--rw=read", "--bs=1M", "--ioengine=psync"}, "seq1m-q1", "sequential", 1 << 20, 1, 1},
	{"1M sequential write QD1", []string{"--rw=write", "--bs=1M", "--ioengine=psync"}, "seq1m-q1", "sequential", 1 << 20, 1, 0},
	{"1M sequential read QD8 (libaio)", []string{"--rw=read", "--bs=1M", "--ioengine=libaio", "--iodepth=8"}, "seq1m-q8", "sequential", 1 << 20, 8, 1},
	{"1M sequential write QD8 (libaio)", []string{"--rw=write", "--bs=1M", "--ioengine=libaio", "--iodepth=8"}, "seq1m-q8", "sequential", 1 << 20, 8, 0},
	{"128K sequential read QD32 (libaio)", []string{"--rw=read", "--bs=128k", "--ioengine=libaio", "--iodepth=32"}, "seq128k-q32", "sequential", 128 << 10, 32, 1},
	{"128K sequential read QD1", []string{"--rw=read", "--bs=128k", "--ioengine=psync"}, "seq128k-q1", "sequential", 128 << 10, 1, 1},
	{"512K random read QD1 with think time (scrubbing)", []string{"--rw=randread", "--bs=512k", "--ioengine=psync", "--thinktime=400"}, "fcp-scrub", "random", 512 << 10, 1, 1},
	{"1M sequential read+write QD1, 250 µs gaps (Finder-like copy)", []string{"--rw=rw", "--rwmixread=50", "--bs=1M", "--ioengine=psync", "--thinktime=250"}, "finder-copy", "sequential", 1 << 20, 1, 0.5},
	{"4–64K random reads with think time (app-launch-like)", []string{"--rw=randread", "--bssplit=4k/50:16k/30:64k/20", "--ioengine=psync", "--thinktime=800"}, "app-launch", "random", 64 << 10, 1, 1},
}

// TestGroundTruth records real fio workloads and checks that classify
// describes each correctly and ranks the right family first. It prints
// the accuracy table docs/classify.md shows:
//
//	sudo go test ./internal/cli -run GroundTruth -v
func TestGroundTruth(t *testing.T) {
	requireTracing(t)
	dir, store := workdir(t), t.TempDir()
	file := filepath.Join(dir, "data")
	prepFile(t, file, 256)
	var table []string
	failures := 0
	for _, g := range groundTruths {
		// Each on a quiet disk: the dirty pages of earlier tests (traces of
		// millions of events) written back beside fio's direct writes made
		// its 1 MiB writes at depth 8 crawl at 14 MB/s, ordered otherwise.
		syscall.Sync()
		args := append([]string{"--", "fio", "--name=job", "--filename=" + file, "--size=256M", "--runtime=3",
			"--time_based", "--direct=1", "--output=/dev/null"}, g.fio...)
		id, _ := record(t, store, args...)
		r := ioshape(t, nil, "--store", store, "classify", "--json", id)
		if r.code != 0 {
			t.Fatalf("%s: classify: %s", g.name, r.stderr)
		}
		var res classify.Result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatal(err)
		}
		s, top := res.Shape, res.Matches[0]
		var bad []string
		if s.Access != g.access {
			bad = append(bad, "access")
		}
		if ratio := float64(s.BlockSizeBytes) / float64(g.size); ratio < 0.5 || ratio > 2 {
			bad = append(bad, "size")
		}
		if math.Abs(s.QueueDepth-g.depth) > math.Max(1, 0.3*g.depth) {
			bad = append(bad, "depth")
		}
		if math.Abs(s.ReadFraction-g.reads) > 0.1 {
			bad = append(bad, "reads")
		}
		if top.Family != g.family {
			bad = append(bad, "family")
		}
		verdict := "ok"
		if len(bad) > 0 {
			verdict = "WRONG: " + strings.Join(bad, ", ")
			failures++
			t.Errorf("%s: %s; shape %+v; best %s (%s, %.2f)", g.name, verdict, s, top.ID, top.Family, top.Score)
		}
		table = append(table, fmt.Sprintf("| %s | %s | %s %s | %s | %g (device %g) | %.0f%% | %s (%.2f) | %s |",
			g.name, g.family, s.Access, fmt.Sprintf("(%.0f%% seq)", s.SequentialFraction*100), sizeLabel(s.BlockSizeBytes),
			s.QueueDepth, s.DeviceQueueDepth, s.ReadFraction*100, top.Family, top.Score, verdict))
	}
	t.Logf("accuracy: %d of %d patterns described and matched correctly\n"+
		"| workload (fio, direct) | expected family | access | size (by bytes) | requested QD | reads | best family (score) | |\n"+
		"|---|---|---|---|---|---|---|---|\n%s", len(groundTruths)-failures, len(groundTruths), strings.Join(table, "\n"))
}

func sizeLabel(b int64) string {
	if b >= 1<<20 {
		return fmt.Sprintf("%g MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%g KiB", float64(b)/(1<<10))
}
