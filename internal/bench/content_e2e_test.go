//go:build linux && e2e

package bench

import (
	"context"
	"os"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// TestContentCost: zram compresses, so text costs it more than random
// bytes both ways; the VM disk stores them alike, and has no cost.
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
	if disk != nil {
		t.Errorf("the VM disk: content cost %+v, want none", *disk)
	}
}
