package classify

import (
	"strings"
	"testing"
)

// A name's count is one, whether its I/O names it with the same bytes or
// with a copy of them, and however many names take turns.
func TestTallyByNameAnyCopy(t *testing.T) {
	var tally actorTally
	names := []string{"fio", "cp", "kworker/u8:2", "Final Cut Pro", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"}
	for round := range 50 {
		for _, n := range names {
			if round%2 == 1 {
				n = strings.Clone(n) // other bytes, the same name
			}
			tally.count(n, 10, 1)
		}
	}
	if len(tally.counts) != len(names) {
		t.Fatalf("%d actors counted, want %d", len(tally.counts), len(names))
	}
	for _, n := range names {
		if c := tally.counts[n]; c.ios != 50 || c.bytes != 500 {
			t.Errorf("%s: %d I/Os, %d bytes; want 50, 500", n, c.ios, c.bytes)
		}
	}
}
