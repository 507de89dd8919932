package main

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// A model is a drive's timing: how long a request at an offset takes,
// given what came before it. The server calls serve for each request, one
// at a time (the drives modelled take one command at a time), and sleeps
// for what it returns.
type model interface {
	serve(now time.Time, write bool, off, size int64) time.Duration
	describe() string
}

// hdd is a portable hard disk: a head that seeks (settle time, then a
// square-root curve to a full stroke), a platter that turns (a request
// waits for its sector to come round: the angle follows from the offset,
// the platter's position from the clock), media read at the zone's rate,
// and a read cache holding what was last read and what follows it.
type hdd struct {
	capacity   int64
	rpm        float64
	trackBytes int64         // bytes on one track (an outer-zone average)
	settle     time.Duration // track-to-track seek
	fullStroke time.Duration // seek across the whole disk
	mediaMBs   float64       // sustained transfer from the platter
	cacheBytes int64         // read cache (track buffer and read-ahead)
	busMBs     float64       // transfer from the cache over USB

	mu         sync.Mutex
	head       int64 // offset under the head after the last request
	cacheStart int64 // the cache holds [cacheStart, cacheEnd)
	cacheEnd   int64
	epoch      time.Time
}

func newHDD(capacity int64) *hdd {
	return &hdd{
		capacity: capacity, rpm: 5400, trackBytes: 1 << 20,
		settle: time.Millisecond, fullStroke: 20 * time.Millisecond,
		mediaMBs: 100, cacheBytes: 8 << 20, busMBs: 350, epoch: time.Now(),
	}
}

func (d *hdd) describe() string {
	return fmt.Sprintf("portable HDD: %.0f rpm (%.1f ms a turn), seek %v track to track to %v full stroke (square root of distance), %.0f MB/s media, %d MiB read cache, %.0f MB/s from the cache, one command at a time",
		d.rpm, 60e3/d.rpm, d.settle, d.fullStroke, d.mediaMBs, d.cacheBytes>>20, d.busMBs)
}

func (d *hdd) serve(now time.Time, write bool, off, size int64) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	end := off + size
	if !write && off >= d.cacheStart && end <= d.cacheEnd {
		return 100*time.Microsecond + mbs(size, d.busMBs)
	}
	var t time.Duration
	dist := off - d.head
	if dist < 0 {
		dist = -dist
	}
	if dist >= d.trackBytes {
		frac := float64(dist) / float64(d.capacity)
		t += d.settle + time.Duration(float64(d.fullStroke-d.settle)*math.Sqrt(frac))
	}
	// Wait for the sector to come under the head: the platter turned
	// while the head moved.
	turn := time.Duration(60e9 / d.rpm)
	at := now.Add(t).Sub(d.epoch) % turn
	want := time.Duration(float64(turn) * float64(off%d.trackBytes) / float64(d.trackBytes))
	wait := (want - at + turn) % turn
	if dist == 0 && wait > turn-turn/20 {
		wait = 0 // it arrived just after the previous one ended: no miss
	}
	t += wait + mbs(size, d.mediaMBs)
	d.head = end
	if write {
		if off < d.cacheEnd && end > d.cacheStart {
			d.cacheStart, d.cacheEnd = 0, 0 // stale
		}
	} else {
		// The drive keeps reading ahead into its cache after a read.
		d.cacheStart, d.cacheEnd = off, min(end+d.cacheBytes-size, d.capacity)
		if d.cacheEnd < end {
			d.cacheEnd = end
		}
	}
	return t
}

// usbBridge is a USB mass-storage ("bulk-only transport") bridge in front
// of flash: one command at a time, each a fixed cost, then the transfer at
// the bridge's rate; where the data lies does not matter.
type usbBridge struct {
	perCommand time.Duration
	mbs        float64
}

func newUSBBridge() *usbBridge { return &usbBridge{perCommand: time.Millisecond, mbs: 40} }

func (b *usbBridge) describe() string {
	return fmt.Sprintf("USB bulk-only bridge in front of flash: one command at a time, %v each, then %.0f MB/s", b.perCommand, b.mbs)
}

func (b *usbBridge) serve(_ time.Time, _ bool, _, size int64) time.Duration {
	return b.perCommand + mbs(size, b.mbs)
}

// mbs is how long size bytes take at rate MB/s.
func mbs(size int64, rate float64) time.Duration {
	return time.Duration(float64(size) / (rate * 1e6) * 1e9)
}
