package tracer

import "testing"

// csrutil's texts: the plain states, and the custom configuration that
// `csrutil enable --without dtrace` leaves.
func TestSIPAllowsDTrace(t *testing.T) {
	for _, c := range []struct {
		status string
		want   bool
	}{
		{"System Integrity Protection status: enabled.\n", false},
		{"System Integrity Protection status: disabled.\n", true},
		{"System Integrity Protection status: enabled (Custom Configuration).\n\nConfiguration:\n\tApple Internal: disabled\n\tKext Signing: enabled\n\tFilesystem Protections: enabled\n\tDebugging Restrictions: enabled\n\tDTrace Restrictions: disabled\n\tNVRAM Protections: enabled\n\nThis is an unsupported configuration, likely to break in the future and leave your machine in an unknown state.\n", true},
		{"System Integrity Protection status: enabled (Custom Configuration).\n\nConfiguration:\n\tDTrace Restrictions: enabled\n", false},
		{"", false},
	} {
		if got := SIPAllowsDTrace(c.status); got != c.want {
			t.Errorf("%q: %v, want %v", c.status, got, c.want)
		}
	}
}
