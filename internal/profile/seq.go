package profile

import (
	"math/bits"

	"github.com/ioshape/ioshape/internal/event"
)

// streamHeads is how many concurrent sequential streams per device (or
// file) are recognised: an I/O continuing any of them is sequential, so two
// interleaved sequential readers do not look random.
const streamHeads = 8

type streamKey struct {
	dev   event.Dev
	inode uint64
}

type heads struct {
	next [streamHeads]int64 // where each stream's next I/O would start
	used int
	last int // slot updated most recently
}

// seqTracker classifies I/Os as sequential or random and measures seek
// distance from the end of the previous I/O on the same device or file.
type seqTracker struct {
	streams   map[streamKey]*heads
	known     int64 // I/Os with a known offset
	seq       int64
	seeks     [65]int64 // log2 buckets of |distance| in bytes; [0] is distance 0
	seekH     logHist
	lastKey   streamKey
	lastHeads *heads
	// limit, if set, bounds the streams remembered: past it they are all
	// forgotten (see ShapeTracker).
	limit int
}

func newSeqTracker() *seqTracker { return &seqTracker{streams: map[streamKey]*heads{}} }

func (t *seqTracker) add(e *event.Event) {
	if e.Offset < 0 || e.Size <= 0 {
		return
	}
	t.step(streamKey{e.Dev, e.Inode}, e.Offset, e.Size)
}

// step takes an I/O with a known offset and size; it reports whether the
// I/O continued one of its device's (or file's) streams.
func (t *seqTracker) step(k streamKey, offset, size int64) bool {
	h := t.lastHeads
	if h == nil || t.lastKey != k {
		h = t.streams[k]
		if h == nil {
			if t.limit > 0 && len(t.streams) >= t.limit {
				clear(t.streams)
			}
			h = &heads{}
			t.streams[k] = h
		}
		t.lastKey, t.lastHeads = k, h
	}
	t.known++
	end := offset + size
	if h.used > 0 {
		d := offset - h.next[h.last]
		if d < 0 {
			d = -d
		}
		t.seeks[bits.Len64(uint64(d))]++
		t.seekH.add(d)
	}
	for i := 0; i < h.used; i++ {
		if h.next[i] == offset {
			t.seq++
			h.next[i], h.last = end, i
			return true
		}
	}
	// A new stream replaces the least recently continued one.
	slot := h.used
	if h.used < streamHeads {
		h.used++
	} else {
		slot = (h.last + 1) % streamHeads
	}
	h.next[slot], h.last = end, slot
	return false
}

func (t *seqTracker) merge(o *seqTracker) {
	t.known += o.known
	t.seq += o.seq
	for i, c := range o.seeks {
		t.seeks[i] += c
	}
	t.seekH.merge(&o.seekH)
}

// SeekStats is the distribution of distances from the end of the previous
// I/O on the same device (block layer) or file (syscall layer).
type SeekStats struct {
	P50       float64      `json:"p50"`
	P90       float64      `json:"p90"`
	Histogram []SeekBucket `json:"histogram"`
}

// SeekBucket counts seeks of at most UpTo bytes (and more than the
// previous bucket's UpTo).
type SeekBucket struct {
	UpTo  int64 `json:"up_to"`
	Count int64 `json:"count"`
}

func (t *seqTracker) stats() (float64, SeekStats) {
	var s SeekStats
	frac := 0.0
	if t.known > 0 {
		frac = round3(float64(t.seq) / float64(t.known))
	}
	s.P50, s.P90 = t.seekH.quantile(0.5), t.seekH.quantile(0.9)
	for i, c := range t.seeks {
		if c == 0 {
			continue
		}
		upTo := int64(0)
		if i > 0 {
			upTo = int64(uint64(1)<<uint(i) - 1)
		}
		s.Histogram = append(s.Histogram, SeekBucket{upTo, c})
	}
	return frac, s
}
