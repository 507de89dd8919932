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
	if w := waitCost(pt, reads{}, reads{ios: 99, ms: 1}); w != nil {
		t.Errorf("from 99 reads: %v", *w)
	}
	// A slow drive's few hundred reads (the USB model: 2,071.5 µs in fio,
	// 1,178 ms over 580 reads on the device) tell its 40 µs within 1.7;
	// not 1.5 µs within 5.
	usb := drive.Point{LatUs: 2071.5}
	if w := waitCost(usb, reads{}, reads{ios: 580, ms: 1178}); w == nil || *w < 40 || *w > 41 {
		t.Errorf("slow drive: wait %v, want 2071.5 − 2031.0 µs", w)
	}
	if w := waitCost(usb, reads{}, reads{ios: 200, ms: 414}); w != nil {
		t.Errorf("a wait below the counter's resolution: %v", *w)
	}
	if w := waitCost(pt, reads{}, reads{ios: 10000, ms: 800}); w != nil {
		t.Errorf("a device slower than fio saw: %v", *w)
	}
}

// schedstat: time on the CPU, time runnable, timeslices (ns, ns, count).
func TestParseRunDelay(t *testing.T) {
	if us, ok := parseRunDelay("1210953968 185356470 12904\n"); !ok || us != 185356.47 {
		t.Errorf("parsed %v %v, want 185356.47 µs", us, ok)
	}
	for _, bad := range []string{"", "12", "1 x 3", "1 -5 3"} {
		if _, ok := parseRunDelay(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	if us, ok := threadRunDelay(); !ok || us < 0 {
		t.Errorf("this thread's run delay: %v %v", us, ok)
	}
}
