package testutil

import (
	"strings"
	"testing"
)

func TestDiffShowsFirstDifference(t *testing.T) {
	d := Diff("a\nb\nc\n", "a\nB\nc\n", 1)
	for _, want := range []string{"line 2", "-2: b", "+2: B"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "-3") {
		t.Errorf("diff shows more than asked:\n%s", d)
	}
}
