package bench

import (
	"slices"
	"testing"
	"time"
)

// Writes carry new random data each time (a drive that compresses takes
// fio's reused buffer at another rate); reads need none.
func TestWritesAreIncompressible(t *testing.T) {
	for _, tc := range Grid() {
		args := testArgs("/x/f", 1<<30, tc, time.Second, true)
		if got, want := slices.Contains(args, incompressible), tc.Op == "write"; got != want {
			t.Errorf("%+v: refill %v, want %v", tc, got, want)
		}
	}
}
