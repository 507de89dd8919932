package profile

import (
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// defaultWindow is how far out of time order events may arrive unless
// told (Options.Window).
const defaultWindow = 10 * time.Second

// Arrival is a data I/O as a profile's layer sweep sees it, in arrival
// order (Options.OnArrival): the event, which is the profile's and must not
// be changed, and what the sweep found — the depth it arrived at, the idle
// time before it, whether it continued a stream. ShapeBuckets count
// arrivals; a Sweep gives them a program's own view instead of the whole
// layer's.
type Arrival struct {
	*event.Event
	depth    int   // in flight when it arrived, itself included (0: not counted)
	idle     int64 // nothing in flight for this long before it, ns
	seq      bool  // it continued a stream
	seqKnown bool  // it had an offset and a size
}

// maxShapeStreams bounds the devices and files whose streams a Sweep
// remembers (a crafted trace can name millions): past it, every stream is
// forgotten and starts again. A file read once, as a search over a tree
// reads them, starts no stream worth remembering.
const maxShapeStreams = 1 << 14

// Sweep re-computes the depth, idle time and streams of a subset of a
// layer's arrivals (one program's), given in arrival order, as if they
// were all there was.
type Sweep struct {
	depth   *depthSweep
	streams event.Streams // not a seqTracker: no seek distances wanted
}

// NewSweep returns a Sweep that has seen nothing.
func NewSweep() *Sweep {
	s := &Sweep{depth: newBareSweep()}
	s.streams.Limit = maxShapeStreams
	return s
}

// Apply sets a's depth, idle time and stream as this sweep sees them.
func (s *Sweep) Apply(a *Arrival) {
	a.depth, a.idle = 0, 0
	if a.Flags&event.FlagCopySource == 0 {
		gaps := s.depth.gaps.sum
		s.depth.arrive(a.Start, a.End)
		a.depth = s.depth.inflight.Len()
		a.idle = int64(s.depth.gaps.sum - gaps)
	}
	a.seq, a.seqKnown = false, false
	if a.Offset >= 0 && a.Size > 0 {
		a.seqKnown = true
		a.seq, _, _ = s.streams.Next(a.Dev, a.Inode, a.Offset, a.Size)
	}
}

// report is emitArrival's report of e to OnArrival: e's fields and what
// the layer's sweep (agg) and its device's streams (dev) made of it, given
// their counts from before e.
func (h *layerHalf) report(e *event.Event, gaps float64, known, seq int64, dev *layerAgg) {
	a := &h.scratch
	*a = Arrival{Event: e}
	if e.Flags&event.FlagCopySource == 0 {
		cross := h.cross()
		a.depth = cross.depth.inflight.Len()
		a.idle = int64(cross.depth.gaps.sum - gaps)
	}
	a.seqKnown, a.seq = dev.seq.known > known, dev.seq.seq > seq
	h.onArrival(a)
}

// ShapeBucket holds the shape fields of the arrivals counted in it.
type ShapeBucket struct {
	layers [2]bucketLayer
}

type bucketLayer struct {
	reads, writes         int64
	readBytes, writeBytes int64
	first, last           int64
	any                   bool
	sizes                 map[int64]*sizeCount
	lastSize              sizeCache
	known, seq            int64
	depths                []int64 // arrivals seen at each depth
	arrivals              int64
	idle                  int64 // ns
}

// Add counts an arrival in its layer.
func (b *ShapeBucket) Add(a *Arrival) { b.layers[a.Layer].add(a) }

func (b *bucketLayer) add(a *Arrival) {
	if a.Op == event.Read {
		b.reads++
		b.readBytes += a.Bytes
	} else {
		b.writes++
		b.writeBytes += a.Bytes
	}
	if !b.any || a.Start < b.first {
		b.first = a.Start
	}
	if !b.any || a.End > b.last {
		b.last = a.End
	}
	b.any = true
	if b.sizes == nil {
		b.sizes = map[int64]*sizeCount{}
	}
	countSize(b.sizes, &b.lastSize, a.Size)
	if a.seqKnown {
		b.known++
		if a.seq {
			b.seq++
		}
	}
	if a.depth > 0 {
		for a.depth >= len(b.depths) {
			b.depths = append(b.depths, 0)
		}
		b.depths[a.depth]++
		b.arrivals++
		b.idle += a.idle
	}
}

func (b *bucketLayer) merge(o *bucketLayer) {
	b.reads += o.reads
	b.writes += o.writes
	b.readBytes += o.readBytes
	b.writeBytes += o.writeBytes
	if o.any {
		if !b.any || o.first < b.first {
			b.first = o.first
		}
		if !b.any || o.last > b.last {
			b.last = o.last
		}
		b.any = true
	}
	if b.sizes == nil && len(o.sizes) > 0 {
		b.sizes = map[int64]*sizeCount{}
	}
	mergeSizes(b.sizes, o.sizes)
	b.known += o.known
	b.seq += o.seq
	for len(b.depths) < len(o.depths) {
		b.depths = append(b.depths, 0)
	}
	for d, c := range o.depths {
		b.depths[d] += c
	}
	b.arrivals += o.arrivals
	b.idle += o.idle
}

// Merge adds o's arrivals to b.
func (b *ShapeBucket) Merge(o *ShapeBucket) {
	for l := range b.layers {
		b.layers[l].merge(&o.layers[l])
	}
}

// IOs is how many data I/Os of a layer the bucket holds.
func (b *ShapeBucket) IOs(l event.Layer) int64 { return b.layers[l].reads + b.layers[l].writes }

// Profile is the bucket as a profile holding the shape fields only: each
// layer's I/O counts and bytes, span, sizes, sequential share, queue depth
// and idle time.
func (b *ShapeBucket) Profile(syscallPartial bool) *Profile {
	return &Profile{Block: b.layers[event.Block].layer(), Syscall: b.layers[event.Syscall].layer(), SyscallPartial: syscallPartial}
}

func (b *bucketLayer) layer() *Layer {
	l := &Layer{Reads: b.reads, Writes: b.writes, ReadBytes: b.readBytes, WriteBytes: b.writeBytes, IOs: b.reads + b.writes}
	if l.IOs == 0 {
		return nil
	}
	l.ReadFraction = round3(float64(b.reads) / float64(l.IOs))
	if tb := b.readBytes + b.writeBytes; tb > 0 {
		l.ReadFractionByBytes = round3(float64(b.readBytes) / float64(tb))
	}
	if span := b.last - b.first; span > 0 {
		l.SpanS = round3(float64(span) / 1e9)
		l.IOPS = round3(float64(l.IOs) / (float64(span) / 1e9))
		l.ThroughputMBs = round3(float64(b.readBytes+b.writeBytes) / (float64(span) / 1e3))
	}
	l.SizeBytes = (&layerAgg{sizes: b.sizes}).sizeStats()
	l.QueueDepth = (&depthSweep{depths: b.depths, n: b.arrivals}).stats()
	l.IdleS = round3(float64(b.idle) / 1e9)
	if b.known > 0 {
		l.SequentialFraction = round3(float64(b.seq) / float64(b.known))
	}
	return l
}
