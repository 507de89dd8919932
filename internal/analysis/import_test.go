package analysis

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// fioAccount is what fio said of a run (its --output-format=json).
type fioAccount struct {
	Jobs []struct {
		Options map[string]string `json:"job options"`
		Read    struct {
			TotalIOs int64 `json:"total_ios"`
			IOBytes  int64 `json:"io_bytes"`
		} `json:"read"`
		Write struct {
			TotalIOs int64 `json:"total_ios"`
			IOBytes  int64 `json:"io_bytes"`
		} `json:"write"`
	} `json:"jobs"`
}

// The shared captures are real output of ioshape's D script under Oracle
// DTrace for Linux, printed before the script named its platform (raw
// b_flags, block numbers in sectors). Imported, fio's own block I/O must
// agree with fio's own account: the count within 3 % (that DTrace drops
// 2–3 % of probes silently under load), the size, the read share, the
// sequential share, and the depth within 1 of the iodepth asked for.
func TestDTraceSharedCapturesAgreeWithFio(t *testing.T) {
	dir := testutil.Shared(t, "samples", "dtrace-oracle-linux")
	for _, run := range []string{"fio4k", "aio8", "seqwrite1m-r1"} {
		t.Run(run, func(t *testing.T) {
			var fio fioAccount
			b, err := os.ReadFile(filepath.Join(dir, run+".fio.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &fio); err != nil || len(fio.Jobs) != 1 {
				t.Fatalf("fio's account: %v", err)
			}
			job := fio.Jobs[0]
			out := filepath.Join(t.TempDir(), "t.iotrace")
			res, err := Import(context.Background(), ImportRequest{File: filepath.Join(dir, run+".out.gz"), Format: "auto", Path: out})
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != parse.FormatDTrace || res.Platform != parse.PlatformLinux || res.Malformed != 0 {
				t.Fatalf("import: %+v", res)
			}
			p := fioProfile(t, out, false)
			want := job.Read.TotalIOs + job.Write.TotalIOs
			if got := p.IOs; math.Abs(float64(got-want)) > 0.03*float64(want) {
				t.Errorf("%d block I/Os by fio, fio counted %d", got, want)
			}
			bs := map[string]int64{"4k": 4096, "1M": 1 << 20}[job.Options["bs"]]
			if p.SizeBytes.P50 != bs {
				t.Errorf("size p50 %v, fio's bs %v", p.SizeBytes.P50, bs)
			}
			readShare := float64(job.Read.TotalIOs) / float64(want)
			if math.Abs(p.ReadFraction-readShare) > 0.01 {
				t.Errorf("read share %.3f, fio's %.3f", p.ReadFraction, readShare)
			}
			sequential := !strings.HasPrefix(job.Options["rw"], "rand")
			if sequential && p.SequentialFraction < 0.95 || !sequential && p.SequentialFraction > 0.05 {
				t.Errorf("sequential share %.3f for rw=%s", p.SequentialFraction, job.Options["rw"])
			}
			// The block layer sees the depth fio keeps: at most its iodepth,
			// reached often (fio reaps in batches, so the mean is lower).
			depth := 1.0
			if v, err := strconv.Atoi(job.Options["iodepth"]); err == nil {
				depth = float64(v)
			}
			if math.Abs(float64(p.QueueDepth.P90)-depth) > 1 || float64(p.QueueDepth.Max) > depth+1 {
				t.Errorf("queue depth p90 %v, max %v; fio's iodepth %v", p.QueueDepth.P90, p.QueueDepth.Max, depth)
			}
		})
	}
}

// fioProfile profiles the block I/O of the process that moved the most
// bytes, or with byCount made the most requests: fio's job. fio's parent
// process pages in its binary in small requests, and reads ahead in large
// ones: which measure finds the job depends on the job.
func fioProfile(t *testing.T, path string, byCount bool) *profile.Layer {
	t.Helper()
	counts := map[uint32]int64{}
	read := func(fn func(e *event.Event)) {
		r, err := tracefile.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for r.Next() {
			if e := r.Event(); e.Layer == event.Block {
				fn(e)
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
	}
	read(func(e *event.Event) {
		if byCount {
			counts[e.Pid]++
		} else {
			counts[e.Pid] += e.Bytes
		}
	})
	var top uint32
	for pid, n := range counts {
		if n > counts[top] {
			top = pid
		}
	}
	b := profile.NewBuilder(profile.Options{})
	read(func(e *event.Event) {
		if e.Pid == top {
			b.Add(e)
		}
	})
	p := b.Finish()
	if p.Block == nil {
		t.Fatal("no block layer")
	}
	return p.Block
}

// A cold cp's capture: what DTrace could check of its own losses is in the
// trace (9 completions whose start it never saw).
func TestDTraceCaptureSaysWhatItCouldCheck(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.iotrace")
	res, err := Import(context.Background(), ImportRequest{File: testutil.Shared(t, "samples", "dtrace-oracle-linux", "cp64m-cold.out.gz"), Path: out})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := tracefile.ReadMeta(out)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Footer.UnmatchedCompletions != 9 || len(res.Warnings) != 0 {
		t.Errorf("footer %+v, warnings %q", meta.Footer, res.Warnings)
	}
}

// The second set of real captures was made while other work loaded the
// machine: DTrace lost firings and emitted records that describe no I/O.
// Imported, nothing in the trace may show a size, a device or a depth
// that did not happen, sizes are the requests' (not their last part's),
// and what was dropped or lost is said.
func TestDTraceUnderLoadShowsOnlyWhatHappened(t *testing.T) {
	dir := testutil.Shared(t, "samples", "dtrace-oracle-linux", "2026-11-26")
	for _, c := range []struct {
		run         string
		corrupt     bool  // records that cannot be right are in the capture
		lost        bool  // completions DTrace lost are beyond a drive's queue
		blockReadMB int64 // the block layer's reads, when the capture holds them whole
	}{
		{run: "a3", corrupt: true, lost: true},
		{run: "b1", corrupt: true, lost: true},
		{run: "c1"},
		{run: "e1", blockReadMB: 256},
	} {
		t.Run(c.run, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "t.iotrace")
			res, err := Import(context.Background(), ImportRequest{File: filepath.Join(dir, c.run+".dtrace.txt"), Path: out})
			if err != nil {
				t.Fatal(err)
			}
			meta, err := tracefile.ReadMeta(out)
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Join(res.Warnings, "\n")
			if got := meta.Footer.CorruptRecords > 0; got != c.corrupt || got != strings.Contains(said, "corrupted records from the tracer dropped") {
				t.Errorf("corrupt records %d, warnings %q", meta.Footer.CorruptRecords, res.Warnings)
			}
			if got := meta.Footer.UnfinishedRequests > event.InFlightAllowance; got != c.lost || got != strings.Contains(said, "DTrace lost the completions") {
				t.Errorf("unfinished %d, warnings %q", meta.Footer.UnfinishedRequests, res.Warnings)
			}
			r, err := tracefile.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			b := profile.NewBuilder(profile.Options{})
			for r.Next() {
				e := r.Event()
				if e.Layer == event.Block && (e.Dev == event.Dev{} || e.Size <= 0 || e.Size%512 != 0 || e.Size >= 1<<32 || e.End < e.Start) {
					t.Fatalf("a block event that did not happen: %+v", e)
				}
				b.Add(e)
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			p := b.Finish()
			var fio fioAccount
			raw, err := os.ReadFile(filepath.Join(dir, c.run+".fio.json"))
			if err == nil {
				err = json.Unmarshal(raw, &fio)
			}
			if err == nil && len(fio.Jobs) == 1 {
				job := fio.Jobs[0]
				depth, _ := strconv.Atoi(job.Options["iodepth"])
				depth = max(depth, 1)
				// The calls fio made: never deeper than its iodepth (plus
				// the one a reaping overlaps with).
				if p.Syscall == nil || p.Syscall.QueueDepth.Max > depth+1 {
					t.Errorf("syscall depth max %v for fio's iodepth %d", p.Syscall.QueueDepth.Max, depth)
				}
				// The job's own block I/O: its size, and a depth no deeper.
				job1 := fioProfile(t, out, true)
				bs := map[string]int64{"4k": 4096, "1M": 1 << 20}[job.Options["bs"]]
				if job1.SizeBytes.P50 != bs || job1.SizeBytes.Max > bs && job.Options["direct"] == "1" && !strings.HasPrefix(job.Options["rw"], "rand") {
					t.Errorf("block size p50 %d max %d, fio's bs %d", job1.SizeBytes.P50, job1.SizeBytes.Max, bs)
				}
				if job1.QueueDepth.Max > depth+1 {
					t.Errorf("block depth max %d for fio's iodepth %d", job1.QueueDepth.Max, depth)
				}
				if !c.lost {
					// Whole: the block layer moved what fio did.
					got, want := float64(job1.ReadBytes+job1.WriteBytes), float64(job.Read.IOBytes+job.Write.IOBytes)
					if math.Abs(got/want-1) > 0.03 {
						t.Errorf("block bytes %.0f, fio moved %.0f", got, want)
					}
				}
			}
			if c.blockReadMB > 0 && (p.Block == nil || math.Abs(float64(p.Block.ReadBytes)/float64(c.blockReadMB<<20)-1) > 0.03) {
				t.Errorf("block reads %d B, the copy read %d MiB", p.Block.ReadBytes, c.blockReadMB)
			}
		})
	}
}
