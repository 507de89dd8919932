package main

import (
	"testing"
	"time"
)

// Where the head is decides an HDD's time: a far request pays a longer
// seek than a near one, a request that continues the last one pays only
// its transfer (the sector is just coming round), and a read the cache
// holds costs a fraction of a millisecond.
func TestHDDKnowsWhereTheHeadIs(t *testing.T) {
	const gib = int64(1) << 30
	// Many trials at random clock phases: the rotational wait averages
	// half a turn, whatever the seek.
	mean := func(dist int64) time.Duration {
		var total time.Duration
		for i := range 200 {
			d := newHDD(4 * gib)
			d.serve(d.epoch, false, 0, 4096)
			d.cacheStart, d.cacheEnd = 0, 0
			now := d.epoch.Add(time.Duration(i) * 397 * time.Microsecond)
			total += d.serve(now, false, dist, 4096)
		}
		return total / 200
	}
	near, far := mean(16<<20), mean(4*gib-8192)
	if far < near+8*time.Millisecond || near < time.Millisecond {
		t.Errorf("seek: 16 MiB away %v, the disk's far end %v; want the far end ≥ 8 ms slower", near, far)
	}
	d := newHDD(4 * gib)
	d.serve(d.epoch, false, 1<<30, 1<<20)
	// The next MiB, just as the last one ended: no seek, no turn, its
	// transfer (it is in the read cache: faster still).
	if got := d.serve(d.epoch.Add(10*time.Millisecond), false, 1<<30+1<<20, 1<<20); got > 11*time.Millisecond {
		t.Errorf("a sequential read took %v", got)
	}
	if got := d.serve(d.epoch.Add(time.Second), false, 1<<30+1<<20, 4096); got > time.Millisecond {
		t.Errorf("a read in the cache took %v", got)
	}
	// Faster spindles wait less for the sector, on average.
	slow, fast := newHDD(4*gib), newHDD(4*gib)
	fast.rpm = 7200
	var ts, tf time.Duration
	for i := range 500 {
		at := slow.epoch.Add(time.Duration(i) * 173 * time.Microsecond)
		ts += slow.serve(at, false, int64(i%50)*(64<<20), 4096)
		tf += fast.serve(fast.epoch.Add(at.Sub(slow.epoch)), false, int64(i%50)*(64<<20), 4096)
	}
	if tf >= ts {
		t.Errorf("7,200 rpm (%v) not faster than 5,400 (%v)", tf/500, ts/500)
	}
}

// A single-command bridge costs the same per command wherever the data
// is, plus the transfer at its rate.
func TestUSBBridgeCostsPerCommand(t *testing.T) {
	b := newUSBBridge()
	now := time.Now()
	if a, c := b.serve(now, false, 0, 4096), b.serve(now, false, 3<<30, 4096); a != c || a < time.Millisecond {
		t.Errorf("4 KiB here %v, there %v", a, c)
	}
	if got := b.serve(now, true, 0, 1<<20); got < 26*time.Millisecond || got > 28*time.Millisecond {
		t.Errorf("1 MiB took %v, want 1 ms + 26.2 ms", got)
	}
}
