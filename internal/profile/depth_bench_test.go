package profile

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// BenchmarkDepthSweep is the depth sweep alone, over arrivals from
// streams at depths 1–64 with latencies spread 1:15.
func BenchmarkDepthSweep(b *testing.B) {
	for _, streams := range []int{1, 4, 64, 1024} {
		rng := rand.New(rand.NewPCG(1, 2))
		type io struct{ a, c int64 }
		var ios []io
		next := make([]int64, streams)
		for range 1 << 16 {
			j := rng.IntN(streams)
			lat := 20_000 + rng.Int64N(280_000)
			ios = append(ios, io{next[j], next[j] + lat})
			next[j] += lat + rng.Int64N(5_000)
		}
		sort.Slice(ios, func(i, j int) bool { return ios[i].a < ios[j].a })
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s := newDepthSweep()
				for _, x := range ios {
					s.arrive(x.a, x.c)
				}
				s.finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ios)), "ns/arrival")
		})
	}
}
