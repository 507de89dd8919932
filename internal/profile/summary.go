package profile

import (
	"github.com/ioshape/ioshape/internal/event"
)

// AddSummary counts one row of a summary trace (record --summary): the
// profile then holds what the kernel's histograms hold — counts, bytes,
// sizes, latency, depth at arrival, idle gaps, the sequential share, per
// process and device — and nothing that needs each I/O on its own (see
// event.MetricDetail). Rows may come in any order; a Builder takes either
// events or summary rows, not both.
func (b *Builder) AddSummary(s *event.Summary) {
	b.seenEvents++
	if s.Layer > event.Syscall || s.Count == 0 {
		return
	}
	if s.Layer == event.Block && s.Kernel && s.Op.IsData() {
		b.wb.IOs += s.Count
		b.wb.Bytes += s.Bytes
		if b.opts.ExcludeWriteback {
			return
		}
	}
	b.countIOs(s.Pid, 0, s.Comm, s.Layer, s.Op, s.Kernel, s.Count, s.Bytes)
	h := b.halves[s.Layer]
	h.soloOff, h.summary = true, true
	h.agg.addSummary(s)
	h.devAgg(s.Dev).addSummary(s)
	if h.series != nil {
		h.series.addSummary(s)
	}
}

// addSummary is add for a summary row. The whole layer's aggregate takes
// what depends on order across devices — here the depth and gaps the
// kernel saw per device, summed — and the devices' the rest.
func (a *layerAgg) addSummary(s *event.Summary) {
	a.errors += s.Errors
	switch s.Op {
	case event.Read:
		a.reads += s.Count
		a.readBytes += s.Bytes
	case event.Write:
		a.writes += s.Count
		a.writeBytes += s.Bytes
	case event.Flush:
		a.flushes += s.Count
		return
	case event.Discard:
		a.discards += s.Count
		return
	default:
		a.others += s.Count
		return
	}
	a.device = nil // no dispatch times: the device's own depth is unknown
	if !a.any || s.First < a.first {
		a.first = s.First
	}
	if !a.any || s.Last > a.last {
		a.last = s.Last
	}
	a.any = true
	if !s.CopySource {
		d := a.depth
		for _, c := range s.Depth {
			depth := int(event.HistFloor(int(c[0])))
			for depth >= len(d.depths) {
				d.depths = append(d.depths, 0)
			}
			d.depths[depth] += c[1]
			d.n += c[1]
		}
		d.latSum += float64(s.LatencyNs) // the integral of depth over time
		d.busy += s.BusyNs
		d.gaps.addBuckets(s.Gap, s.IdleNs)
	}
	if a.cross {
		return
	}
	for _, c := range s.Size {
		size := event.HistFloor(int(c[0]))
		sc := a.sizes[size]
		if sc == nil {
			sc = &sizeCount{}
			a.sizes[size] = sc
		}
		sc.count += c[1]
		sc.bytes += size * c[1]
	}
	a.sizeSum += s.SizeSum
	a.lat.addBuckets(s.Lat, s.LatencyNs)
	a.seq.known += s.Located
	a.seq.seq += s.Sequential
}

// addBuckets counts a summary histogram's buckets at their middles; sum is
// the values' exact total.
func (h *logHist) addBuckets(buckets []event.HistCount, sum int64) {
	var n int64
	for _, c := range buckets {
		v := event.HistMid(int(c[0]))
		i := bucketOf(int64(v))
		if i >= len(h.counts) {
			grown := make([]int64, i+1+16)
			copy(grown, h.counts)
			h.counts = grown
		}
		h.counts[i] += c[1]
		if h.n+n == 0 || int64(v) < h.min {
			h.min = event.HistFloor(int(c[0]))
		}
		h.max = max(h.max, event.HistFloor(int(c[0]+1))-1)
		n += c[1]
	}
	h.n += n
	h.sum += float64(sum)
}

// addSummary spreads a row over the second it covers, from its first
// arrival to its last completion within it: the kernel kept no finer time.
func (s *seriesBuilder) addSummary(r *event.Summary) {
	if !s.started || r.First < s.origin {
		s.origin, s.started = r.First, true
	}
	if !r.Op.IsData() {
		return
	}
	lo, hi := max(r.First, r.Start), min(r.Last, r.Start+event.SummarySeconds)
	if hi <= lo {
		hi = lo + 1
	}
	base := int(r.Layer) * colsPerLayer
	col := colRead
	if r.Op == event.Write {
		col = colWrite
	}
	s.bins.spreadValue(base+colIOs, lo, hi, float64(r.Count))
	s.bins.spreadValue(base+col, lo, hi, float64(r.Bytes))
	// By Little's law, the mean number in flight is the latency summed
	// over the time.
	s.bins.spreadValue(base+colBusy, lo, hi, float64(r.LatencyNs))
}
