package host

import (
	"fmt"
	"slices"
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
		if m := got[k]; m == nil || m.first != w[0] || m.fstype != w[1] {
			t.Errorf("%s: %+v, want %q", k, m, w)
		}
	}
}

// A device mounted twice (a bind mount) keeps its first mount point and
// the others, at most maxMounts of them.
func TestParseMountinfoEveryMountPoint(t *testing.T) {
	in := "36 25 7:1 / /var/tmp/disk rw - ext4 /dev/loop1 rw\n" +
		"37 25 7:1 /vda /var/tmp/vda rw - ext4 /dev/loop1 rw\n" +
		"38 25 7:1 /slow /var/tmp/slow rw - ext4 /dev/loop1 rw\n"
	for i := range maxMounts + 5 {
		in += fmt.Sprintf("%d 25 8:1 /x /bind%d rw - ext4 /dev/sda1 rw\n", 40+i, i)
	}
	got := parseMountinfo(strings.NewReader(in))
	if m := got["7:1"]; m == nil || m.first != "/var/tmp/disk" || !slices.Equal(m.others, []string{"/var/tmp/vda", "/var/tmp/slow"}) {
		t.Errorf("7:1: %+v", m)
	}
	if m := got["8:1"]; m == nil || m.first != "/bind0" || len(m.others) != maxMounts {
		t.Errorf("8:1: %+v", m)
	}
}
