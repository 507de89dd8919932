package bench

import (
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/drive"
)

// A test runs again for eight of its latencies when that is longer than
// its run: long enough for a queue to go round several times, at most
// maxSettle.
func TestSettleTime(t *testing.T) {
	for lat, want := range map[float64]time.Duration{
		50:      400 * time.Microsecond,
		206_000: 1648 * time.Millisecond,
		900_000: maxSettle,
	} {
		if got := settleTime(drive.Point{LatUs: lat}); got != want {
			t.Errorf("latency %v µs: %v, want %v", lat, got, want)
		}
	}
}
