package host

import (
	"strings"
	"testing"
)

// Mount points with spaces and other escaped characters are decoded.
func TestParseMountinfoUnescapes(t *testing.T) {
	in := "36 25 8:1 / /mnt/My\\040Drive rw,relatime shared:1 - ext4 /dev/sda1 rw\n" +
		"37 25 8:2 / /mnt/tab\\011back\\134slash rw - xfs /dev/sda2 rw\n" +
		"38 25 8:3 / /plain rw - ext4 /dev/sda3 rw\n"
	got := parseMountinfo(strings.NewReader(in))
	want := map[string][2]string{
		"8:1": {"/mnt/My Drive", "ext4"},
		"8:2": {"/mnt/tab\tback\\slash", "xfs"},
		"8:3": {"/plain", "ext4"},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
}
