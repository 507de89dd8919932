package profile

import (
	"math"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/order"
)

// Series is what a report plots over time, at a bounded size whatever the
// trace's length: time bins whose width doubles (adjacent bins merged) when
// there would be more than maxBins, and per-device offset maps whose cells
// grow when there would be more than maxCells. Built only with
// Options.Series.
type Series struct {
	// OriginNs is time zero: the earliest arrival in the trace (the same
	// origin classify's phases use).
	OriginNs int64 `json:"origin_ns"`
	// BinS is the width of a time bin; FirstBinS where the first begins.
	BinS      float64 `json:"bin_s"`
	FirstBinS float64 `json:"first_bin_s"`
	// Block and Syscall hold one value per bin.
	Block   *LayerSeries `json:"block,omitempty"`
	Syscall *LayerSeries `json:"syscall,omitempty"`
	// Offsets is where on each block device I/O went over time.
	Offsets []OffsetMap `json:"offsets,omitempty"`
}

// LayerSeries is one layer over time.
type LayerSeries struct {
	IOs []int64 `json:"ios"` // I/Os arriving in the bin
	// ReadBytes and WriteBytes are the bytes moved in the bin, each I/O's
	// spread over the time it took.
	ReadBytes  []int64 `json:"read_bytes"`
	WriteBytes []int64 `json:"write_bytes"`
	// InFlight is the mean number of I/Os in flight during the bin.
	InFlight []float64 `json:"in_flight"`
	// Latency is the latency histogram, four buckets per power of two.
	Latency []LatencyBucket `json:"latency"`
}

// LatencyBucket counts I/Os whose latency is in [FromUs, ToUs).
type LatencyBucket struct {
	FromUs float64 `json:"from_us"`
	ToUs   float64 `json:"to_us"`
	Count  int64   `json:"count"`
}

// OffsetMap is a seekwatcher-style map of one block device: I/Os counted in
// cells of CellS seconds by CellBytes bytes of device offset.
type OffsetMap struct {
	Device    string       `json:"device"`
	Major     uint32       `json:"major"`
	Minor     uint32       `json:"minor"`
	CellS     float64      `json:"cell_s"`
	CellBytes int64        `json:"cell_bytes"`
	Cells     []OffsetCell `json:"cells"`
	IOs       int64        `json:"ios"`
}

// OffsetCell is one cell: its start time (from the origin), start offset,
// and the reads and writes in it.
type OffsetCell struct {
	S      float64 `json:"s"`
	Offset int64   `json:"offset"`
	Reads  int64   `json:"reads"`
	Writes int64   `json:"writes"`
}

const (
	maxBins       = 1000
	maxCells      = 12000
	maxOffsetRows = 128
	firstBinNs    = int64(1e6) // 1 ms, doubled as needed
)

// bins accumulates columns of values over time bins of a width that is
// firstBinNs times a power of two. Bin k covers [k*width, (k+1)*width) in
// absolute time, so doubling the width merges bins 2j and 2j+1 exactly.
type bins struct {
	width int64
	base  int64 // absolute index of cols[c][0]
	cols  [][]float64
	empty bool
	last  binCache
}

// binCache is the bin found last: I/Os arrive in time order, and most land
// in the bin the one before did, found without a division.
type binCache struct {
	k, lo, width int64
}

// of is the bin of width that t is in.
func (c *binCache) of(t, width int64) int64 {
	if c.width != width || t < c.lo || t-c.lo >= width {
		c.k = order.FloorDiv(t, width)
		c.lo, c.width = c.k*width, width
	}
	return c.k
}

func newBins(columns int) *bins {
	return &bins{width: firstBinNs, cols: make([][]float64, columns), empty: true}
}

// cover makes bins for times lo..hi, coarsening if the span is too long.
func (b *bins) cover(lo, hi int64) {
	if !b.empty && lo >= b.base*b.width && hi < (b.base+int64(len(b.cols[0])))*b.width {
		return // covered already
	}
	for {
		first, last := order.FloorDiv(lo, b.width), order.FloorDiv(hi, b.width)
		if b.empty {
			b.base, b.empty = first, false
			for c := range b.cols {
				b.cols[c] = make([]float64, last-first+1)
			}
			if last-first < maxBins {
				return
			}
		}
		n := int64(len(b.cols[0]))
		newFirst, newLast := min(first, b.base), max(last, b.base+n-1)
		if newLast-newFirst < maxBins {
			if newFirst < b.base {
				pad := b.base - newFirst
				for c := range b.cols {
					b.cols[c] = append(make([]float64, pad, pad+n), b.cols[c]...)
				}
				b.base = newFirst
			}
			if newLast >= b.base+int64(len(b.cols[0])) {
				grow := newLast - (b.base + int64(len(b.cols[0]))) + 1
				for c := range b.cols {
					b.cols[c] = append(b.cols[c], make([]float64, grow)...)
				}
			}
			return
		}
		b.coarsen()
	}
}

func (b *bins) coarsen() {
	newBase := order.FloorDiv(b.base, 2)
	n := int64(len(b.cols[0]))
	newLen := order.FloorDiv(b.base+n-1, 2) - newBase + 1
	for c, col := range b.cols {
		merged := make([]float64, newLen)
		for i, v := range col {
			merged[order.FloorDiv(b.base+int64(i), 2)-newBase] += v
		}
		b.cols[c] = merged
	}
	b.base = newBase
	b.width *= 2
}

// absorb adds o's bins to b's (o is coarsened to b's width, or b to o's,
// and the two spans covered): as if b had been given what o was given.
// The width is the one both would have reached together: the narrowest
// that holds the span of both.
func (b *bins) absorb(o *bins) {
	if o.empty {
		return
	}
	if b.empty {
		*b = *o
		return
	}
	for {
		for b.width < o.width {
			b.coarsen()
		}
		for o.width < b.width {
			o.coarsen()
		}
		b.cover(o.base*o.width, (o.base+int64(len(o.cols[0])))*o.width-1)
		if b.width == o.width {
			break
		}
	}
	for c, col := range o.cols {
		for i, v := range col {
			b.cols[c][o.base+int64(i)-b.base] += v
		}
	}
}

func (b *bins) add(col int, t int64, v float64) {
	b.cover(t, t)
	b.cols[col][b.last.of(t, b.width)-b.base] += v
}

// spread adds the time [a, c) overlaps each bin to col, in nanoseconds.
func (b *bins) spread(col int, a, c int64) {
	if c <= a {
		return
	}
	b.cover(a, c)
	for k := b.last.of(a, b.width); k*b.width < c; k++ {
		lo, hi := max(a, k*b.width), min(c, (k+1)*b.width)
		if hi > lo {
			b.cols[col][k-b.base] += float64(hi - lo)
		}
	}
}

// spreadValue adds v to col, shared among the bins [a, c) overlaps in
// proportion to the overlap.
func (b *bins) spreadValue(col int, a, c int64, v float64) {
	b.cover(a, c)
	d := float64(c - a)
	for k := b.last.of(a, b.width); k*b.width < c; k++ {
		lo, hi := max(a, k*b.width), min(c, (k+1)*b.width)
		if hi > lo {
			b.cols[col][k-b.base] += v * float64(hi-lo) / d
		}
	}
}

// addWithin is add, spreadValue and spread for an I/O [a, c) that falls in
// one bin — almost every I/O: one count to ios, v to val, its time to
// busy, with the same arithmetic. It does nothing and returns false for an
// I/O that spans bins or takes no time.
func (b *bins) addWithin(ios, val, busy int, a, c int64, v float64) bool {
	if c <= a {
		return false
	}
	b.cover(a, c)
	k := b.last.of(a, b.width)
	if c > (k+1)*b.width {
		return false
	}
	i, d := k-b.base, float64(c-a)
	b.cols[ios][i]++
	b.cols[val][i] += v * d / d
	b.cols[busy][i] += d
	return true
}

// Columns of a layer's bins.
const (
	colIOs = iota
	colRead
	colWrite
	colBusy
	colsPerLayer
)

type cellKey struct {
	t, row int64
}

// offsetGrid counts I/Os in (time, offset) cells, coarsening when the
// cells would exceed maxCells or the rows maxOffsetRows.
type offsetGrid struct {
	width int64
	shift uint
	last  binCache
	cells map[cellKey]*[2]int64
	ios   int64
	// cache holds recently counted cells, direct-mapped by a hash of the
	// key: the cells an I/O lands in repeat.
	cache [16]struct {
		key  cellKey
		cell *[2]int64
	}
}

func newOffsetGrid() *offsetGrid {
	return &offsetGrid{width: firstBinNs, shift: 12, cells: map[cellKey]*[2]int64{}}
}

func (g *offsetGrid) add(t, offset int64, write bool) {
	offset = max(offset, 0)
	for offset>>g.shift >= maxOffsetRows {
		g.rekey(g.width, g.shift+1)
	}
	k := cellKey{g.last.of(t, g.width), offset >> g.shift}
	slot := &g.cache[(uint64(k.t)*0x9E3779B97F4A7C15^uint64(k.row)*0xC2B2AE3D27D4EB4F)>>60]
	c := slot.cell
	if c == nil || slot.key != k {
		c = g.cells[k]
	}
	if c == nil {
		if len(g.cells) >= maxCells {
			g.rekey(g.width*2, g.shift)
			g.add(t, offset, write)
			return
		}
		c = &[2]int64{}
		g.cells[k] = c
	}
	slot.key, slot.cell = k, c
	if write {
		c[1]++
	} else {
		c[0]++
	}
	g.ios++
}

func (g *offsetGrid) rekey(width int64, shift uint) {
	old := g.cells
	g.cells = make(map[cellKey]*[2]int64, len(old))
	clear(g.cache[:])
	for k, v := range old {
		nk := cellKey{order.FloorDiv(k.t*g.width, width), (k.row << g.shift) >> shift}
		c := g.cells[nk]
		if c == nil {
			c = &[2]int64{}
			g.cells[nk] = c
		}
		c[0] += v[0]
		c[1] += v[1]
	}
	g.width, g.shift = width, shift
}

// seriesBuilder collects a Series from events in arrival order.
type seriesBuilder struct {
	bins    *bins
	origin  int64
	started bool
	grids   map[event.Dev]*offsetGrid
	// The grid of the last block request's device.
	lastDev  event.Dev
	lastGrid *offsetGrid
}

func newSeriesBuilder() *seriesBuilder {
	return &seriesBuilder{bins: newBins(2 * colsPerLayer), grids: map[event.Dev]*offsetGrid{}}
}

func (s *seriesBuilder) add(e *event.Event) {
	if !s.started || e.Start < s.origin {
		s.origin, s.started = e.Start, true
	}
	if !e.Op.IsData() {
		return
	}
	base := int(e.Layer) * colsPerLayer
	col := colRead
	if e.Op == event.Write {
		col = colWrite
	}
	if s.bins.addWithin(base+colIOs, base+col, base+colBusy, e.Start, e.End, float64(e.Bytes)) {
		s.addOffset(e)
		return
	}
	s.bins.add(base+colIOs, e.Start, 1)
	// Bytes are spread over the time the I/O took: a 512 MiB
	// copy_file_range is not 512 MiB in one bin.
	if e.End > e.Start {
		s.bins.spreadValue(base+col, e.Start, e.End, float64(e.Bytes))
	} else {
		s.bins.add(base+col, e.Start, float64(e.Bytes))
	}
	s.bins.spread(base+colBusy, e.Start, e.End)
	s.addOffset(e)
}

// addOffset puts a block request in its device's offset map.
func (s *seriesBuilder) addOffset(e *event.Event) {
	if e.Layer != event.Block {
		return
	}
	g := s.lastGrid
	if g == nil || s.lastDev != e.Dev {
		g = s.grids[e.Dev]
		if g == nil {
			s.makeRoomForGrid()
			g = newOffsetGrid()
			s.grids[e.Dev] = g
		}
		s.lastDev, s.lastGrid = e.Dev, g
	}
	g.add(e.Start, e.Offset, e.Op == event.Write)
}

// merge takes in another layer's series (the two layers' builders touch
// different columns, and only the block layer's keeps offset maps).
func (s *seriesBuilder) merge(o *seriesBuilder) {
	if !o.started {
		return
	}
	if !s.started || o.origin < s.origin {
		s.origin, s.started = o.origin, true
	}
	s.bins.absorb(o.bins)
	for dev, g := range o.grids {
		s.grids[dev] = g
	}
}

// makeRoomForGrid drops the offset map of the quietest device when the
// table is full: only the busiest are ever plotted.
func (s *seriesBuilder) makeRoomForGrid() {
	if len(s.grids) < maxOffsetMap {
		return
	}
	var quietest event.Dev
	var fewest int64 = -1
	for d, g := range s.grids {
		if fewest < 0 || g.ios < fewest || g.ios == fewest && (d.Major < quietest.Major || d.Major == quietest.Major && d.Minor < quietest.Minor) {
			quietest, fewest = d, g.ios
		}
	}
	delete(s.grids, quietest)
	s.lastGrid = nil
}

func (s *seriesBuilder) result(lat [2]*logHist, names map[event.Dev]string) *Series {
	if !s.started {
		return nil
	}
	b := s.bins
	out := &Series{
		OriginNs:  s.origin,
		BinS:      float64(b.width) / 1e9,
		FirstBinS: float64(b.base*b.width-s.origin) / 1e9,
	}
	layer := func(l event.Layer) *LayerSeries {
		base := int(l) * colsPerLayer
		ls := &LayerSeries{}
		var seen bool
		for i := range b.cols[base] {
			ls.IOs = append(ls.IOs, int64(math.Round(b.cols[base+colIOs][i])))
			ls.ReadBytes = append(ls.ReadBytes, int64(math.Round(b.cols[base+colRead][i])))
			ls.WriteBytes = append(ls.WriteBytes, int64(math.Round(b.cols[base+colWrite][i])))
			ls.InFlight = append(ls.InFlight, round3(b.cols[base+colBusy][i]/float64(b.width)))
			seen = seen || b.cols[base+colIOs][i] > 0
		}
		if !seen {
			return nil
		}
		ls.Latency = latencyBuckets(lat[l])
		return ls
	}
	out.Block, out.Syscall = layer(event.Block), layer(event.Syscall)
	for dev, g := range s.grids {
		m := OffsetMap{Device: dev.String(), Major: dev.Major, Minor: dev.Minor, CellS: float64(g.width) / 1e9, CellBytes: 1 << g.shift, IOs: g.ios}
		if n, ok := names[dev]; ok {
			m.Device = n
		}
		for k, v := range g.cells {
			m.Cells = append(m.Cells, OffsetCell{S: round3(float64(k.t*g.width-s.origin) / 1e9), Offset: k.row << g.shift, Reads: v[0], Writes: v[1]})
		}
		sort.Slice(m.Cells, func(i, j int) bool {
			if m.Cells[i].S != m.Cells[j].S {
				return m.Cells[i].S < m.Cells[j].S
			}
			return m.Cells[i].Offset < m.Cells[j].Offset
		})
		out.Offsets = append(out.Offsets, m)
	}
	sort.Slice(out.Offsets, func(i, j int) bool {
		a, c := out.Offsets[i], out.Offsets[j]
		if a.Major != c.Major {
			return a.Major < c.Major
		}
		return a.Minor < c.Minor
	})
	return out
}

// latencyBuckets regroups a latency histogram (ns) into four buckets per
// power of two, in µs.
func latencyBuckets(h *logHist) []LatencyBucket {
	if h == nil || h.n == 0 {
		return nil
	}
	byQuarter := map[int]int64{}
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		q := int(math.Floor(4 * math.Log2(math.Max(bucketMid(i), 1))))
		byQuarter[q] += c
	}
	keys := make([]int, 0, len(byQuarter))
	for k := range byQuarter {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var out []LatencyBucket
	for k := keys[0]; k <= keys[len(keys)-1]; k++ {
		out = append(out, LatencyBucket{
			FromUs: round3(math.Exp2(float64(k)/4) / 1e3),
			ToUs:   round3(math.Exp2(float64(k+1)/4) / 1e3),
			Count:  byQuarter[k],
		})
	}
	return out
}
