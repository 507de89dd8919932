package fsusage

import (
	"testing"
	"time"
)

// A recording that starts just before midnight, with fs_usage's first line
// just after, counts from the next day's midnight.
func TestMidnightBefore(t *testing.T) {
	loc := time.UTC
	started := time.Date(2026, 3, 1, 23, 59, 59, 500e6, loc)
	if got := MidnightBefore(started, int64(100*time.Millisecond)); !got.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, loc)) {
		t.Errorf("just after midnight: %v", got)
	}
	if got := MidnightBefore(started, int64(23*time.Hour+59*time.Minute+59*time.Second+600*time.Millisecond)); !got.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, loc)) {
		t.Errorf("same day: %v", got)
	}
	early := time.Date(2026, 3, 2, 0, 0, 0, 100e6, loc)
	if got := MidnightBefore(early, int64(23*time.Hour+59*time.Minute+59*time.Second)); !got.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, loc)) {
		t.Errorf("a line from just before midnight: %v", got)
	}
}
