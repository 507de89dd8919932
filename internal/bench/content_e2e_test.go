//go:build linux && e2e

package bench

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// TestContentCost: zram compresses, so text costs it more than random
// bytes both ways; the VM disk stores them alike, and has no cost.
func TestContentCost(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "needs root to make a file system on zram")
	}
	testutil.SizeZram(t, "128M")
	dir := t.TempDir()
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "/dev/zram0").CombinedOutput(); err != nil {
		testutil.Unavailable(t, "mkfs.ext4 on zram0: %v %s", err, out)
	}
	if out, err := exec.Command("mount", "/dev/zram0", dir).CombinedOutput(); err != nil {
		testutil.Unavailable(t, "mount zram0: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()

	zram, _, err := measureContent(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if zram == nil || zram.WriteUsPerMiB <= 0 || zram.ReadUsPerMiB <= 0 {
		t.Fatalf("zram: content cost %+v, want text dearer both ways", zram)
	}
	if zram.TextSaved < 0.4 || zram.TextSaved > 0.56 {
		t.Errorf("zram: the text saves %.2f, want 0.40–0.56", zram.TextSaved)
	}
	t.Logf("zram: %+v", *zram)

	disk, _, err := measureContent(context.Background(), "/var/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if disk != nil {
		t.Errorf("the VM disk: content cost %+v, want none", *disk)
	}
}
