//go:build linux && e2e

package bench

import (
	"context"
	"os"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// TestContentCost: zram compresses, so text costs it more than random
// bytes both ways; the VM disk stores them alike — as far as its guest
// can tell: a host's storage may compress too (this project's VM once
// wrote text 0.32 ms/MiB slower, run after run, in either order), but
// never near zram's cost, which does it on the guest's own CPU.
func TestContentCost(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "needs root to make a file system on zram")
	}
	dir := testutil.ZramFS(t, "128M")

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
	if disk != nil && (disk.ReadUsPerMiB > zram.ReadUsPerMiB/3 || disk.WriteUsPerMiB > zram.WriteUsPerMiB/3 ||
		disk.ReadUsPerMiB < -zram.ReadUsPerMiB/3 || disk.WriteUsPerMiB < -zram.WriteUsPerMiB/3) {
		t.Errorf("the VM disk: content cost %+v, want none or under a third of zram's", *disk)
	}
	if disk != nil {
		t.Logf("the VM disk: %+v", *disk)
	}
}
