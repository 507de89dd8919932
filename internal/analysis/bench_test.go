package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// writeSynthetic writes a trace of n events shaped like a real recording:
// block and syscall layers, four concurrent streams, mixed sizes, random and
// sequential offsets, and events in completion order (as tracers emit them).
func writeSynthetic(tb testing.TB, path string, n int) {
	tb.Helper()
	w, err := tracefile.Create(path, tracefile.Header{Tool: "ioshape-bench", Backend: "synthetic"})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	comms := []string{"fio", "cp", "kworker/u8:2", "Final Cut Pro"}
	var next [4]int64
	var off [4]int64
	pending := make([]event.Event, 0, 64)
	for i := 0; i < n; i++ {
		j := 0 // the stream whose previous I/O finished first goes next
		for k := range next {
			if next[k] < next[j] {
				j = k
			}
		}
		size := int64(4096) << rng.IntN(9)
		lat := 20_000 + size/4 + rng.Int64N(10_000)
		e := event.Event{
			Layer: event.Layer(i & 1), Op: event.Read + event.Op(rng.IntN(2)),
			Start: next[j], End: next[j] + lat, Dev: event.Dev{Major: 254, Minor: uint32(j & 1)},
			Size: size, Bytes: size, Pid: uint32(1000 + j), Tid: uint32(1000 + j), Comm: comms[j],
		}
		if e.Layer == event.Syscall {
			e.Call, e.Inode = event.CallPread64, uint64(j+1)
		} else {
			e.Flags, e.Dispatch = event.FlagDispatched, e.Start+500
		}
		if rng.IntN(3) == 0 {
			e.Offset = rng.Int64N(1<<30) &^ 4095
		} else {
			e.Offset = off[j]
		}
		off[j] = e.Offset + size
		next[j] = e.End + rng.Int64N(5_000)
		pending = append(pending, e)
		if len(pending) == cap(pending) {
			// Emit in completion order within small batches, as a tracer would.
			for k := 1; k < len(pending); k++ {
				for m := k; m > 0 && pending[m].End < pending[m-1].End; m-- {
					pending[m], pending[m-1] = pending[m-1], pending[m]
				}
			}
			for k := range pending {
				if err := w.Write(&pending[k]); err != nil {
					tb.Fatal(err)
				}
			}
			pending = pending[:0]
		}
	}
	for k := range pending {
		w.Write(&pending[k])
	}
	if err := w.Close(tracefile.Footer{}); err != nil {
		tb.Fatal(err)
	}
}

var synthCache sync.Map // events → path, shared across benchmark runs

func syntheticTrace(b *testing.B, n int) string {
	if p, ok := synthCache.Load(n); ok {
		return p.(string)
	}
	dir := os.Getenv("IOSHAPE_BENCH_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	// The name changes with the generator or the format it writes (v3:
	// event columns), so a file kept from before is not measured.
	path := filepath.Join(dir, fmt.Sprintf("ioshape-bench-v3-%d.iotrace", n))
	if _, err := os.Stat(path); err != nil {
		b.Logf("generating %d events into %s", n, path)
		writeSynthetic(b, path, n)
	}
	synthCache.Store(n, path)
	return path
}

// peakHeap samples the live heap while f runs.
func peakHeap(f func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	return peak.Load()
}

// BenchmarkLoadProfile measures reading a trace file and profiling it
// (decode + profile), in events per second, and the peak live heap. Run:
//
//	go test ./internal/analysis -run '^$' -bench LoadProfile -benchtime 3x
//
// The 1M and 10M cases together show that memory does not grow with the
// trace's length.
func BenchmarkLoadProfile(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			benchPeak(b, n, func(path string) {
				prof, err := Profile(context.Background(), openT(b, path), profile.Options{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if prof.Events != int64(n) {
					b.Fatalf("profiled %d events, want %d", prof.Events, n)
				}
			})
		})
	}
}

// BenchmarkAnalyze is what `report` computes: the profile with its time
// series and the classification (three reads of the file). Run:
//
//	go test ./internal/analysis -run '^$' -bench Analyze -benchtime 2x
func BenchmarkAnalyze(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			benchPeak(b, n, func(path string) {
				a, err := Analyze(context.Background(), openT(b, path), profile.Options{}, classify.Options{}, nil, nil)
				if err != nil || a.Class == nil || a.Show.Events != int64(n) {
					b.Fatalf("analyze: %v", err)
				}
			})
		})
	}
}

// fileEvents reads a trace's events into memory, directly from its reader.
func fileEvents(tb testing.TB, path string) []event.Event {
	tb.Helper()
	r, err := tracefile.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var evs []event.Event
	for r.Next() {
		evs = append(evs, *r.Event())
	}
	if err := r.Err(); err != nil {
		tb.Fatal(err)
	}
	return evs
}

// BenchmarkProfileOnly isolates the profile step from file decoding.
func BenchmarkProfileOnly(b *testing.B) {
	evs := fileEvents(b, syntheticTrace(b, 1_000_000))
	for _, parallel := range []bool{false, true} {
		b.Run(fmt.Sprintf("parallel=%v", parallel), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				bd := profile.NewBuilder(profile.Options{Parallel: parallel})
				for k := range evs {
					bd.Add(&evs[k])
				}
				bd.Finish()
			}
			b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkDecodeOnly isolates reading the trace file.
func BenchmarkDecodeOnly(b *testing.B) {
	path := syntheticTrace(b, 1_000_000)
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		r, err := tracefile.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
			n++
		}
		r.Close()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkPredict is predict on a long trace: the model holds the I/O of
// the last ten seconds of trace time, so its peak heap is the same at 1 M
// and 10 M events. Run:
//
//	go test ./internal/analysis -run '^$' -bench Predict -benchtime 1x
func BenchmarkPredict(b *testing.B) {
	d, err := drive.Coarse("bench", []float64{3000, 1500, 800, 50}, []float64{2500, 1400, 700, 120})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			benchPeak(b, n, func(path string) {
				res, err := Predict(context.Background(), openT(b, path), nil, []*drive.Spec{d}, nil, nil, nil)
				if err != nil || !(res.Drives[0].PredictedS > 0) {
					b.Fatalf("predict: %v %+v", err, res)
				}
			})
		})
	}
}

// benchPeak runs fn b.N times on a synthetic trace of n events and reports
// events per second and the peak live heap.
// BenchmarkPredictDrives predicts one trace on one drive and on ten (each
// with the two ends of its range: three models a drive), in one read.
//
//	go test ./internal/analysis -run '^$' -bench PredictDrives -benchtime 3x
func BenchmarkPredictDrives(b *testing.B) {
	var tos []*drive.Spec
	for i := range 10 {
		f := float64(i + 1)
		d, err := drive.Coarse(fmt.Sprintf("drive-%d", i), []float64{300 * f, 150 * f, 80 * f, 5 * f}, []float64{250 * f, 140 * f, 70 * f, 12 * f})
		if err != nil {
			b.Fatal(err)
		}
		tos = append(tos, d)
	}
	path := syntheticTrace(b, 200_000)
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("drives=%d", n), func(b *testing.B) {
			for b.Loop() {
				rk, err := Predict(context.Background(), openT(b, path), nil, tos[:n], nil, nil, nil)
				if err != nil || len(rk.Drives) != n {
					b.Fatalf("predict: %v", err)
				}
			}
		})
	}
}

func benchPeak(b *testing.B, n int, fn func(path string)) {
	path := syntheticTrace(b, n)
	runtime.GC()
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		peak = max(peak, peakHeap(func() { fn(path) }))
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
