package cli

import (
	"fmt"
	"io"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/store/storetest"
)

// BenchmarkLs runs 'ioshape ls' (text and --json) in-process on stores of
// 1,000 and 10,000 traces:
//
//	go test ./internal/cli -run '^$' -bench Ls -benchtime 50x
//
// p99-ms is the 99th percentile latency; peak-alloc-MiB the most the Go
// heap held during a run, which must not grow with the number of traces.
func BenchmarkLs(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		dir := b.TempDir()
		storetest.Fill(b, dir, n)
		for _, args := range [][]string{{"ls"}, {"ls", "--json"}} {
			b.Run(fmt.Sprintf("traces=%d/%s", n, args[len(args)-1]), func(b *testing.B) {
				var lat []time.Duration
				var peak uint64
				for i := 0; i < b.N; i++ {
					runtime.GC()
					stop := watchHeap(&peak)
					start := time.Now()
					if code := Main(append([]string{"--store", dir}, args...), nil, io.Discard, io.Discard); code != 0 {
						b.Fatalf("ls: exit %d", code)
					}
					lat = append(lat, time.Since(start))
					stop()
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

// watchHeap samples the heap in use until stopped, keeping the peak.
func watchHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > *peak {
				*peak = ms.HeapInuse
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}
