package classify

import (
	"fmt"
	"math"
	"sort"

	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/units"
)

// Shape is what a workload looks like, in the terms benchmarks use.
type Shape struct {
	// Access is sequential (≥ 80% of I/Os continue a stream), random
	// (≤ 20%), or mixed.
	Access             string  `json:"access"`
	SequentialFraction float64 `json:"sequential_fraction"`
	// BlockSizeBytes is the byte-weighted median size: half of the bytes
	// moved in I/Os of at most this size.
	BlockSizeBytes int64 `json:"block_size_bytes"`
	// QueueDepth is the median requested depth at arrival (the syscall
	// layer: what a benchmark's "QD" means); DeviceQueueDepth the block
	// layer's achieved depth beside it.
	QueueDepth       float64 `json:"queue_depth"`
	DeviceQueueDepth float64 `json:"device_queue_depth"`
	// ReadFraction is reads' share of the bytes moved.
	ReadFraction float64 `json:"read_fraction"`
	// IdleFraction is the share of the span with nothing in flight at the
	// classified layer: think time and gaps between I/Os.
	IdleFraction float64 `json:"idle_fraction"`
	// SteadyIdleFraction is the idle share of the workload's rhythm: the
	// median over runs of 64 I/Os, which a long pause or a stretch of a
	// busy CPU does not move. Patterns are compared on it; IdleFraction is
	// the time the trace really spent idle.
	SteadyIdleFraction float64 `json:"steady_idle_fraction"`
	IOs                int64   `json:"ios"`
	Bytes              int64   `json:"bytes"`
	SpanS              float64 `json:"span_s"`
	// Layer is the layer sizes and access come from, LayerReason why. A
	// benchmark's parameters are what it asks for, so this is the syscall
	// layer, unless the drive's work is elsewhere: the requests are giant
	// (a copy_file_range of a whole file), the page cache absorbed them
	// (the drive saw under a quarter of the bytes), the drive moved several
	// times what the calls asked for (page faults of mapped files and the
	// readahead around them, metadata: an application's start), or the
	// drive was busy far longer than the calls waited. Then it is the block
	// layer.
	Layer       string `json:"layer"`
	LayerReason string `json:"layer_reason"`
}

// Thresholds of the layer rule (ShapeOf).
const (
	// longerAtDrive: the drive was busy this many times as long as the
	// calls were in flight (with at least half their bytes): the drive's
	// time was spent outside the calls. Bytes alone do not decide: a
	// benchmark's parent process pages in its binary, moving more bytes
	// than the job's small reads, in a fraction of the time.
	longerAtDrive = 3
	// moreAtDrive: the drive moved this many times the bytes asked for
	// (said as such).
	moreAtDrive = 2
)

// maxRequestBytes: larger "requests" are whole-file copies, not I/O sizes.
const maxRequestBytes = 16 << 20

// ShapeOf reads a profile's shape.
func ShapeOf(p *profile.Profile) (Shape, bool) {
	sys, blk := p.Syscall, p.Block
	data := func(l *profile.Layer) bool { return l != nil && l.IOs > 0 }
	if !data(sys) && !data(blk) {
		return Shape{}, false
	}
	l, name, why := sys, "syscall", "what the calls asked for: a benchmark's parameters are requests"
	switch {
	case !data(sys):
		l, name, why = blk, "block", "the trace has no calls, only the drive's requests"
	case p.SyscallPartial && data(blk):
		// The syscall layer stops early (a degraded tracer): sizes and
		// access from the drive's view; the depth asked for still from
		// what the syscall layer saw.
		l, name, why = blk, "block", "the calls were traced for the start only (the tracer was degraded)"
	case data(blk) && blk.IOs >= 8:
		sysBytes, blkBytes := sys.ReadBytes+sys.WriteBytes, blk.ReadBytes+blk.WriteBytes
		// The program's own waiting outside its calls counts with them:
		// sync(2) after tar -x waits for the writeback it started, a
		// program's faults for the pages it maps (summed over threads: a
		// bound from above, where they overlap).
		sysBusy, blkBusy := sys.QueueDepth.BusyS+p.WaitedS, blk.QueueDepth.BusyS
		amp := amplification(p)
		switch {
		case sys.SizeBytes.P50ByBytes > maxRequestBytes:
			l, name, why = blk, "block", fmt.Sprintf("the calls are whole-file copies (%s each): their size says nothing of the drive's requests", sizeText(sys.SizeBytes.P50ByBytes))
		case 4*blkBytes < sysBytes:
			l, name, why = blk, "block", fmt.Sprintf("the page cache absorbed the calls: the drive moved %s of the %s asked for", units.Bytes(blkBytes), units.Bytes(sysBytes))
		case amp >= moreAtDrive:
			l, name, why = blk, "block", fmt.Sprintf("the drive moved %s for the %s the calls asked for (%.1f× for the processes that made them): readahead around their reads, page faults of mapped files, metadata",
				units.Bytes(blkBytes), units.Bytes(sysBytes), amp)
		case blkBusy >= longerAtDrive*sysBusy && 2*blkBytes >= sysBytes:
			l, name, why = blk, "block", fmt.Sprintf("the drive was busy %.2f s, the calls in flight and the waits outside them only %.2f s: its work was done while the program ran on", blkBusy, sysBusy)
		}
	}
	return layerShape(p, l, name, why), true
}

// ShapeAt reads a profile's shape from the given layer (a window of a
// trace read from that layer); false if that layer has no data there.
func ShapeAt(p *profile.Profile, layer string) (Shape, bool) {
	l := p.Syscall
	if layer == "block" {
		l = p.Block
	}
	if l == nil || l.IOs == 0 {
		return Shape{}, false
	}
	return layerShape(p, l, layer, "the layer the whole trace is read from"), true
}

// amplification is how many bytes the drive moved for each byte the calls
// asked for, as the processes that made the calls saw it: the median of
// their own ratios, weighted by what each asked for. A process that made
// few calls but paged in its binary (a benchmark's parent) then weighs
// little beside the job making the calls; one whose reads the drive saw
// enlarged by readahead (a video player seeking) weighs what it asked.
// Without a process table, the layers' ratio.
func amplification(p *profile.Profile) float64 {
	sysBytes := p.Syscall.ReadBytes + p.Syscall.WriteBytes
	type part struct{ ratio, weight float64 }
	var parts []part
	var total float64
	for _, pr := range p.Processes {
		asked := pr.SyscallReadBytes + pr.SyscallWriteBytes
		if asked <= 0 || pr.Kernel {
			continue
		}
		parts = append(parts, part{float64(pr.BlockReadBytes+pr.BlockWriteBytes) / float64(asked), float64(asked)})
		total += float64(asked)
	}
	if len(parts) == 0 {
		return float64(p.Block.ReadBytes+p.Block.WriteBytes) / float64(max(sysBytes, 1))
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].ratio < parts[j].ratio })
	var acc float64
	for _, x := range parts {
		if acc += x.weight; acc >= total/2 {
			return x.ratio
		}
	}
	return parts[len(parts)-1].ratio
}

// OtherLayer is the shape of the layer s was not read from, when that
// layer has data and looks different (another access, sizes two doublings
// apart, or the read share a quarter apart): both views, side by side.
func OtherLayer(p *profile.Profile, s Shape) (Shape, bool) {
	l, name := p.Block, "block"
	if s.Layer == "block" {
		l, name = p.Syscall, "syscall"
	}
	if l == nil || l.IOs == 0 {
		return Shape{}, false
	}
	o := layerShape(p, l, name, "shown beside the classified layer")
	far := math.Abs(log2(float64(o.BlockSizeBytes))-log2(float64(s.BlockSizeBytes))) >= 2
	if o.Access == s.Access && !far && math.Abs(o.ReadFraction-s.ReadFraction) < 0.25 {
		return Shape{}, false
	}
	return o, true
}

// layerShape reads the shape of layer l of p.
func layerShape(p *profile.Profile, l *profile.Layer, name, why string) Shape {
	data := func(l *profile.Layer) bool { return l != nil && l.IOs > 0 }
	sys, blk := p.Syscall, p.Block
	s := Shape{
		Layer: name, LayerReason: why, IOs: l.IOs, Bytes: l.ReadBytes + l.WriteBytes, SpanS: l.SpanS,
		BlockSizeBytes:     l.SizeBytes.P50ByBytes,
		SequentialFraction: l.SequentialFraction,
		ReadFraction:       l.ReadFractionByBytes,
	}
	switch {
	case s.SequentialFraction >= 0.8:
		s.Access = "sequential"
	case s.SequentialFraction <= 0.2:
		s.Access = "random"
	default:
		s.Access = "mixed"
	}
	req := l
	if data(sys) {
		req = sys
	}
	s.QueueDepth = req.QueueDepth.P50
	// Idle time is the classified layer's: the drive's when its work is
	// what is read (an application's calls idle between page faults the
	// drive is busy with).
	if l.SpanS > 0 {
		s.IdleFraction = round3(min(1, l.IdleS/l.SpanS))
	}
	s.SteadyIdleFraction = l.SteadyIdleFraction
	if data(blk) {
		s.DeviceQueueDepth = blk.QueueDepth.P50
	}
	return s
}
