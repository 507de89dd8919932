package profile

import (
	"math/bits"

	"github.com/ioshape/ioshape/internal/event"
)

// seqTracker classifies I/Os as sequential or random and measures seek
// distance from the end of the previous I/O on the same device or file.
type seqTracker struct {
	streams event.Streams
	known   int64 // I/Os with a known offset
	seq     int64
	seeks   [65]int64 // log2 buckets of |distance| in bytes; [0] is distance 0
	seekH   logHist
}

func newSeqTracker() *seqTracker { return &seqTracker{} }

func (t *seqTracker) add(e *event.Event) {
	if e.Offset < 0 || e.Size <= 0 {
		return
	}
	t.step(e.Dev, e.Inode, e.Offset, e.Size)
}

// step takes an I/O with a known offset and size; it reports whether the
// I/O continued one of its device's (or file's) streams.
func (t *seqTracker) step(dev event.Dev, inode uint64, offset, size int64) bool {
	t.known++
	seq, d, prev := t.streams.Next(dev, inode, offset, size)
	if prev {
		t.seeks[bits.Len64(uint64(d))]++
		t.seekH.add(d)
	}
	if seq {
		t.seq++
	}
	return seq
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
