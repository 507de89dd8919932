package bench

import (
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
)

// sysfs's stat: reads are its first field, their milliseconds its
// fourth; a wait's cost is fio's latency less the device's mean, and
// nothing from too few reads, or a device slower than fio saw.
func TestWaitCost(t *testing.T) {
	r, ok := parseDiskStat("   54398        0   435184     3445      12     0   96    1   0   3400  3446   0 0 0 0 0 0\n")
	if !ok || r.ios != 54398 || r.ms != 3445 {
		t.Fatalf("parsed %+v %v", r, ok)
	}
	for _, bad := range []string{"", "1 2 3", "1 2 3 x", "-1 0 0 5"} {
		if _, ok := parseDiskStat(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	pt := drive.Point{LatUs: 72.8}
	if w := waitCost(pt, reads{}, reads{ios: 54398, ms: 3445}); w == nil || *w < 9.4 || *w > 9.6 {
		t.Errorf("wait cost %v, want 72.8 − 63.33 µs", w)
	}
	if w := waitCost(pt, reads{}, reads{ios: 999, ms: 10}); w != nil {
		t.Errorf("from 999 reads: %v", *w)
	}
	if w := waitCost(pt, reads{}, reads{ios: 10000, ms: 800}); w != nil {
		t.Errorf("a device slower than fio saw: %v", *w)
	}
}
