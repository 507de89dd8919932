package host

import (
	"strings"
	"testing"
	"time"
)

func TestParseStatSteal(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		// A KVM guest's (this project's VM), with the rest of the file.
		{"cpu  24834 0 14039 86597 11149 0 499 1501 0 0\ncpu0 11933 0 6318 45321 5165 0 60 724 0 0\nintr 1 2 3\n", 15010 * time.Millisecond, true},
		{"cpu  1 2 3 4 5 6 7 0 0 0\n", 0, true},
		// An old kernel's line, without steal.
		{"cpu  1 2 3 4 5 6 7\n", 0, false},
		{"cpu  1 2 3 4 5 6 7 -8 0 0\n", 0, false},
		{"cpu  1 2 3 4 5 6 7 99999999999999999999 0 0\n", 0, false},
		{"intr 1 2 3\n", 0, false},
		{"", 0, false},
		// A first line past the 4 KiB read is not taken in part.
		{"cpu  1 2 3 4 5 6 7 " + strings.Repeat("0", 5000) + "9 0 0\n", 0, false},
	} {
		got, err := parseStatSteal(strings.NewReader(c.in))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseStatSteal(%.40q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
