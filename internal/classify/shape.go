package classify

import (
	"github.com/ioshape/ioshape/internal/profile"
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
	// IdleFraction is the share of the span with nothing in flight: think
	// time and gaps between I/Os.
	IdleFraction float64 `json:"idle_fraction"`
	IOs          int64   `json:"ios"`
	Bytes        int64   `json:"bytes"`
	SpanS        float64 `json:"span_s"`
	// Layer is the layer sizes and access come from. A benchmark's
	// parameters are what it asks for, so this is the syscall layer, unless
	// that view says little about the drive: the requests are giant (a
	// copy_file_range of a whole file) or the page cache absorbed them (the
	// drive saw under a quarter of the bytes). Then it is the block layer.
	Layer string `json:"layer"`
}

// maxRequestBytes: larger "requests" are whole-file copies, not I/O sizes.
const maxRequestBytes = 16 << 20

// ShapeOf reads a profile's shape.
func ShapeOf(p *profile.Profile) (Shape, bool) {
	sys, blk := p.Syscall, p.Block
	data := func(l *profile.Layer) bool { return l != nil && l.IOs > 0 }
	if !data(sys) && !data(blk) {
		return Shape{}, false
	}
	l, name := sys, "syscall"
	switch {
	case !data(sys):
		l, name = blk, "block"
	case p.SyscallPartial && data(blk):
		// The syscall layer stops early (a degraded tracer): sizes and
		// access from the drive's view; the depth asked for still from
		// what the syscall layer saw.
		l, name = blk, "block"
	case data(blk) && blk.IOs >= 8:
		sysBytes, blkBytes := sys.ReadBytes+sys.WriteBytes, blk.ReadBytes+blk.WriteBytes
		if sys.SizeBytes.P50ByBytes > maxRequestBytes || 4*blkBytes < sysBytes {
			l, name = blk, "block"
		}
	}
	s := Shape{
		Layer: name, IOs: l.IOs, Bytes: l.ReadBytes + l.WriteBytes, SpanS: l.SpanS,
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
	if req.SpanS > 0 {
		s.IdleFraction = round3(min(1, req.IdleS/req.SpanS))
	}
	if data(blk) {
		s.DeviceQueueDepth = blk.QueueDepth.P50
	}
	return s, true
}
