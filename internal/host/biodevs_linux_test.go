package host

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A fake /sys/block: a blk-mq disk with a partition, zram (bio-based) with
// a partition, a device-mapper volume over the disk, and an NVMe
// multipath head.
func TestBioBasedDevices(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, dev string) {
		dir := filepath.Join(root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if dev != "" {
			os.WriteFile(filepath.Join(dir, "dev"), []byte(dev+"\n"), 0o644)
		}
	}
	mk("vda", "254:0")
	mk("vda/mq", "")
	mk("vda/vda1", "254:1")
	mk("zram0", "252:0")
	mk("zram0/zram0p1", "252:1")
	mk("dm-0", "253:0")
	mk("dm-0/slaves/vda1", "")
	mk("nvme0n1", "259:0")
	got := BioBasedDevices(root)
	want := []uint32{252 << 20, 252<<20 | 1} // 252:0, 252:1
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("bio-based devices %v, want %v (zram0 and its partition only)", got, want)
	}
}

func TestIOCgroup(t *testing.T) {
	for _, c := range []struct {
		in, want string
		v1       bool
	}{
		{"12:blkio:/ioshape-validate\n11:memory:/user.slice\n0::/user.slice/x\n", "/ioshape-validate", true},
		{"12:blkio:/\n0::/user.slice\n", "", true},
		{"0::/system.slice/ioshape.service\n", "/system.slice/ioshape.service", false},
		{"0::/\n", "", false},
		{"5:cpu,io:/limited\n", "/limited", false},
		{"", "", false},
	} {
		if got, v1 := ioCgroupOf(c.in); got != c.want || v1 != c.v1 {
			t.Errorf("ioCgroupOf(%q) = %q, %v; want %q, %v", c.in, got, v1, c.want, c.v1)
		}
	}
}
