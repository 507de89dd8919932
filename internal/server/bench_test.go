package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/store/storetest"
)

// BenchmarkListPage serves the daemon's list page (and the API's first
// page) from stores of 1,000 and 10,000 traces:
//
//	go test ./internal/server -run '^$' -bench ListPage -benchtime 200x
//
// p99-ms is the 99th percentile of the requests' latency; heap-MiB the heap
// in use after them, which must not grow with the number of traces.
func BenchmarkListPage(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, path := range []string{"/", "/api/traces?limit=200"} {
			b.Run(fmt.Sprintf("traces=%d/%s", n, map[string]string{"/": "page", "/api/traces?limit=200": "api"}[path]), func(b *testing.B) {
				s := New(Config{Store: storetest.Fill(b, b.TempDir(), n), Addr: "127.0.0.1:7878"}, port)
				defer s.Shutdown()
				h := s.Handler()
				var lat []time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r := httptest.NewRequest("GET", path, nil)
					r.Host = "127.0.0.1:7878"
					r.AddCookie(&http.Cookie{Name: s.cookieName(), Value: s.session})
					w := httptest.NewRecorder()
					start := time.Now()
					h.ServeHTTP(w, r)
					lat = append(lat, time.Since(start))
					if w.Code != 200 {
						b.Fatalf("%s: %d", path, w.Code)
					}
				}
				b.StopTimer()
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			})
		}
	}
}
