//go:build linux && e2e

package bench

import (
	"context"
	"os"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// TestContentCost: zram compresses, so text costs it more than random
// bytes both ways; the VM disk never costs text near as much as zram,
// which compresses on the guest's own CPU. Its host's storage may tell
// them apart too, run after run in either order, and either way (this
// project's VM once wrote text 0.32 ms/MiB slower; a CI run read it 0.84
// ms/MiB faster, as storage that compresses reads less): what the bench
// measures there is kept, not asserted away.
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
	if disk != nil && (disk.ReadUsPerMiB > zram.ReadUsPerMiB/3 || disk.WriteUsPerMiB > zram.WriteUsPerMiB/3) {
		t.Errorf("the VM disk: content cost %+v, want text no dearer than a third of zram's", *disk)
	}
	if disk != nil {
		t.Logf("the VM disk: %+v", *disk)
	}
}
