package host

import "testing"

// The root is never throttled; a cgroup that cannot be read (gone, or
// another machine's) is taken as throttled; io.max lines that set no
// limit are not limits.
func TestIOThrottled(t *testing.T) {
	if IOThrottled("") {
		t.Error("the root cgroup taken as throttled")
	}
	if !IOThrottled("/ioshape-no-such-cgroup") || !IOThrottled("/../etc") {
		t.Error("an unreadable cgroup taken as not throttled")
	}
	for s, want := range map[string]bool{
		"8:0 rbps=max wbps=max riops=max wiops=max\n":       true,
		"8:0 rbps=max wbps=41943040 riops=max wiops=max\n":  false,
		"8:0 rbps=max wbps=max riops=max wiops=max\n253:0 ": false,
		"":                                  true,
		"8:0 rbps=max\n\n253:0 wiops=max\n": true,
		"253:0 41943040\n":                  false,
	} {
		if got := allMax(s); got != want {
			t.Errorf("allMax(%q) = %v", s, got)
		}
	}
}
