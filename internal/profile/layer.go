package profile

import (
	"math/bits"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
)

// maxDistinctSizes bounds the exact size table; past it, new sizes are
// rounded to 4 KiB so memory stays bounded on pathological traces.
const maxDistinctSizes = 1 << 16

type sizeCount struct{ count, bytes int64 }

// sizeCache holds the counts of recently seen sizes, direct-mapped by a
// hash of the size: a workload has a handful of sizes, and most I/Os find
// theirs here without the map.
type sizeCache [32]struct {
	sc  *sizeCount
	key int64
}

// countSize counts an I/O of size bytes in sizes.
func countSize(sizes map[int64]*sizeCount, cache *sizeCache, size int64) {
	slot := &cache[(uint64(size)*0x9E3779B97F4A7C15)>>59]
	if slot.sc != nil && slot.key == size {
		slot.sc.count++
		slot.sc.bytes += size
		return
	}
	key := size
	sc := sizes[key]
	if sc == nil {
		if len(sizes) >= maxDistinctSizes {
			key = (key + 4095) &^ 4095
			sc = sizes[key]
		}
		if sc == nil {
			sc = &sizeCount{}
			sizes[key] = sc
		}
	}
	if key == size { // a rounded size is not the key a later lookup brings
		slot.sc, slot.key = sc, key
	}
	sc.count++
	sc.bytes += size
}

// mergeSizes adds src's size counts to dst's.
func mergeSizes(dst, src map[int64]*sizeCount) {
	for k, c := range src {
		sc := dst[k]
		if sc == nil {
			sc = &sizeCount{}
			dst[k] = sc
		}
		sc.count += c.count
		sc.bytes += c.bytes
	}
}

// layerAgg accumulates one layer (optionally one device of it) from events
// delivered in arrival order.
//
// A whole layer's aggregate is "cross-device": it keeps only what depends
// on the order of I/O across devices (queue depth, inter-arrival, idle
// gaps) and merges the rest — sizes, latency, sequentiality, the fit — from
// its devices' aggregates when the profile is built, so no per-event work
// is done twice.
type layerAgg struct {
	cross                                            bool
	reads, writes, flushes, discards, others, errors int64
	clones                                           int64 // copy-on-write clones: a copy with no data I/O
	readBytes, writeBytes                            int64
	first, last                                      int64
	any                                              bool
	sizes                                            map[int64]*sizeCount
	lat, inter                                       logHist
	prevArrival                                      int64
	depth                                            *depthSweep
	device                                           *depthSweep // block only: depth at the device, in dispatch order (deviceSweeps)
	seq                                              *seqTracker
	fit                                              *fitSampler
	lastSize                                         sizeCache
	// sizeSum is the exact total of sizes when the sizes map holds
	// histogram buckets (a summary trace), 0 otherwise.
	sizeSum int64
}

func newLayerAgg(block, cross bool) *layerAgg {
	a := &layerAgg{cross: cross, sizes: map[int64]*sizeCount{}, depth: newDepthSweep(), seq: newSeqTracker(), fit: newFitSampler()}
	if block {
		a.device = newDepthSweep()
	}
	return a
}

func (a *layerAgg) add(e *event.Event) {
	if e.Errno != 0 {
		a.errors++
	}
	switch e.Op {
	case event.Read:
		a.reads++
		a.readBytes += e.Bytes
	case event.Write:
		a.writes++
		a.writeBytes += e.Bytes
	case event.Flush:
		a.flushes++
		return
	case event.Discard:
		a.discards++
		return
	default:
		a.others++
		if e.Call == event.CallClone {
			a.clones++
		}
		return
	}
	if !a.any || e.Start < a.first {
		a.first = e.Start
	}
	if !a.any || e.End > a.last {
		a.last = e.End
	}
	if a.any {
		a.inter.add(e.Start - a.prevArrival)
	}
	a.prevArrival, a.any = e.Start, true
	if a.cross {
		return
	}
	countSize(a.sizes, &a.lastSize, e.Size)
	a.lat.add(e.End - e.Start)
	a.seq.add(e)
	if e.Size > 0 && e.Errno == 0 {
		a.fit.add(e.Size, e.End-e.Start)
	}
}

// Layer is the profile of one layer (or one device within it).
type Layer struct {
	IOs     int64 `json:"ios"`
	Reads   int64 `json:"reads"`
	Writes  int64 `json:"writes"`
	Flushes int64 `json:"flushes"`
	// Clones counts copy-on-write clones (macOS clonefile): files copied
	// without moving their data, so a copy can show almost no I/O.
	Clones              int64   `json:"clones,omitempty"`
	Discards            int64   `json:"discards"`
	Errors              int64   `json:"errors"`
	ReadBytes           int64   `json:"read_bytes"`
	WriteBytes          int64   `json:"write_bytes"`
	ReadFraction        float64 `json:"read_fraction"`
	ReadFractionByBytes float64 `json:"read_fraction_by_bytes"`
	SpanS               float64 `json:"span_s"`
	IOPS                float64 `json:"iops"`
	ThroughputMBs       float64 `json:"throughput_mb_s"`

	SizeBytes        SizeStats   `json:"size_bytes"`
	QueueDepth       DepthStats  `json:"queue_depth"`
	DeviceQueueDepth *DepthStats `json:"device_queue_depth,omitempty"`
	LatencyUs        Dist        `json:"latency_us"`
	InterarrivalUs   Dist        `json:"interarrival_us"`
	IdleGapUs        Dist        `json:"idle_gap_us"`
	IdleS            float64     `json:"idle_s"`
	// SteadyIdleFraction is the median, over runs of 64 arrivals, of the
	// share of time with nothing in flight: the idle share of the
	// workload's rhythm without its long pauses or a stretch of a busy CPU
	// (IdleS over SpanS where the trace is too short for three runs).
	SteadyIdleFraction float64   `json:"steady_idle_fraction"`
	SequentialFraction float64   `json:"sequential_fraction"`
	SeekDistanceBytes  SeekStats `json:"seek_distance_bytes"`
	ServiceFit         *Fit      `json:"service_fit,omitempty"`
	// Unavailable names the metrics the capture cannot show (see
	// MarkUnavailable); their fields are null in JSON.
	Unavailable []string `json:"unavailable,omitempty"`
}

// SizeStats is the distribution of I/O sizes in bytes, by count and by
// bytes moved (P50ByBytes: half of all bytes moved in I/Os of at most this
// size).
type SizeStats struct {
	Min        int64        `json:"min"`
	Mean       float64      `json:"mean"`
	P50        int64        `json:"p50"`
	P90        int64        `json:"p90"`
	P99        int64        `json:"p99"`
	Max        int64        `json:"max"`
	P50ByBytes int64        `json:"p50_by_bytes"`
	Histogram  []SizeBucket `json:"histogram"`
}

// SizeBucket counts I/Os of at least From bytes and less than twice that
// (From 0 holds empty I/Os).
type SizeBucket struct {
	From  int64 `json:"from"`
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// takeCross makes a, a whole layer's aggregate, what it would be had it
// swept d's events: the layer's one device so far. From now on a's sweeps
// keep d's I/Os in flight.
func (a *layerAgg) takeCross(d *layerAgg) {
	a.reads, a.writes, a.flushes, a.discards, a.others, a.errors, a.clones = d.reads, d.writes, d.flushes, d.discards, d.others, d.errors, d.clones
	a.readBytes, a.writeBytes = d.readBytes, d.writeBytes
	a.first, a.last, a.any, a.prevArrival = d.first, d.last, d.any, d.prevArrival
	a.inter = d.inter.clone()
	a.depth = d.depth.clone()
	d.depth.passInflight()
}

// mergeCounts is merge for folding a device into "other", many times over:
// a fit sample that holds every I/O it saw is added point by point rather
// than re-thinned.
func (a *layerAgg) mergeCounts(d *layerAgg) {
	if d.fit.seen == int64(len(d.fit.x)) {
		fit := d.fit
		d.fit = newFitSampler()
		defer func() { d.fit = fit }()
		for i := range fit.x {
			a.fit.add(int64(fit.x[i]), int64(fit.y[i]))
		}
	}
	a.merge(d)
}

// merge takes in a device aggregate's per-event statistics.
func (a *layerAgg) merge(d *layerAgg) {
	mergeSizes(a.sizes, d.sizes)
	a.sizeSum += d.sizeSum
	a.lat.merge(&d.lat)
	a.seq.merge(d.seq)
	a.fit.merge(d.fit)
}

func (a *layerAgg) result() *Layer {
	a.depth.finish()
	l := &Layer{
		Reads: a.reads, Writes: a.writes, Flushes: a.flushes, Discards: a.discards, Errors: a.errors,
		ReadBytes: a.readBytes, WriteBytes: a.writeBytes, Clones: a.clones,
	}
	l.IOs = a.reads + a.writes
	if l.IOs == 0 && a.flushes == 0 && a.discards == 0 && a.others == 0 {
		return nil
	}
	if l.IOs > 0 {
		l.ReadFraction = round3(float64(a.reads) / float64(l.IOs))
	}
	if tb := a.readBytes + a.writeBytes; tb > 0 {
		l.ReadFractionByBytes = round3(float64(a.readBytes) / float64(tb))
	}
	if span := a.last - a.first; span > 0 {
		l.SpanS = round3(float64(span) / 1e9)
		l.IOPS = round3(float64(l.IOs) / (float64(span) / 1e9))
		l.ThroughputMBs = round3(float64(a.readBytes+a.writeBytes) / (float64(span) / 1e3))
	}
	l.SizeBytes = a.sizeStats()
	l.QueueDepth = a.depth.stats()
	if a.device != nil {
		a.device.finish()
		ds := a.device.stats()
		l.DeviceQueueDepth = &ds
	}
	l.LatencyUs = a.lat.dist(1e3)
	l.InterarrivalUs = a.inter.dist(1e3)
	l.IdleGapUs = a.depth.gaps.dist(1e3)
	l.IdleS = round3(a.depth.gaps.sum / 1e9)
	if f, ok := a.depth.steadyIdle(); ok {
		l.SteadyIdleFraction = f
	} else if l.SpanS > 0 {
		l.SteadyIdleFraction = round3(min(1, l.IdleS/l.SpanS))
	}
	l.SequentialFraction, l.SeekDistanceBytes = a.seq.stats()
	if l.IOs > 0 {
		l.ServiceFit = a.fit.fit()
	}
	return l
}

func (a *layerAgg) sizeStats() SizeStats {
	var s SizeStats
	keys := make([]int64, 0, len(a.sizes))
	var n, total int64
	for k, c := range a.sizes {
		keys = append(keys, k)
		n += c.count
		total += c.bytes
	}
	if n == 0 {
		return s
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	s.Min, s.Max = keys[0], keys[len(keys)-1]
	s.Mean = round3(float64(total) / float64(n))
	if a.sizeSum > 0 {
		s.Mean = round3(float64(a.sizeSum) / float64(n))
	}
	quant := func(p float64, weight func(*sizeCount) int64, of int64) int64 {
		rank := int64(p*float64(of) + 0.999999)
		var seen int64
		for _, k := range keys {
			seen += weight(a.sizes[k])
			if seen >= rank {
				return k
			}
		}
		return s.Max
	}
	byCount := func(c *sizeCount) int64 { return c.count }
	s.P50, s.P90, s.P99 = quant(0.5, byCount, n), quant(0.9, byCount, n), quant(0.99, byCount, n)
	if total > 0 {
		s.P50ByBytes = quant(0.5, func(c *sizeCount) int64 { return c.bytes }, total)
	}
	var buckets [65]SizeBucket
	for _, k := range keys {
		i := 0
		if k > 0 {
			i = bits.Len64(uint64(k))
		}
		c := a.sizes[k]
		buckets[i].Count += c.count
		buckets[i].Bytes += c.bytes
	}
	for i, b := range buckets {
		if b.Count == 0 {
			continue
		}
		if i > 0 {
			b.From = 1 << uint(i-1)
		}
		s.Histogram = append(s.Histogram, b)
	}
	return s
}
