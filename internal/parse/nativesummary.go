package parse

import (
	"fmt"

	"github.com/ioshape/ioshape/internal/event"
)

// NativeSummary is one entry of the eBPF programs' summary map (struct
// sum_key and struct sum_val in dscripts/ebpf/ioshape.bpf.c), its per-CPU
// values summed.
type NativeSummary struct {
	Sec                          uint32 // CLOCK_MONOTONIC seconds
	Pid, Dev                     uint32
	Layer, Op, Role, Kthread     uint8
	Count, Bytes, Errors         uint64
	Located, Sequential          uint64
	LatNs, GapNs, BusyNs, DepthN uint64
	SizeSum, First, Last         uint64 // First and Last: ns, 0 for none
	Size, Lat, Gap, Depth        []uint64
}

// DecodeNativeSummary turns a summary map entry into a summary row whose
// Start is on the programs' clock (ns).
func DecodeNativeSummary(n *NativeSummary, comm string) (event.Summary, error) {
	s := event.Summary{
		Start: int64(n.Sec) * event.SummarySeconds, Dev: event.DevFromKernel(uint64(n.Dev)), Pid: n.Pid, Comm: comm,
		Count: int64(n.Count), Bytes: int64(n.Bytes), Errors: int64(n.Errors),
		Located: int64(n.Located), Sequential: int64(n.Sequential),
		LatencyNs: int64(n.LatNs), IdleNs: int64(n.GapNs), BusyNs: int64(n.BusyNs), SizeSum: int64(n.SizeSum),
		First: int64(n.First), Last: int64(n.Last),
		Size: sparse(n.Size), Lat: sparse(n.Lat), Gap: sparse(n.Gap), Depth: sparse(n.Depth),
	}
	switch n.Layer {
	case 0:
		s.Layer = event.Block
		s.Kernel = n.Kthread != 0
		s.Op = nativeBlockOp(n.Op)
	case 1:
		s.Layer = event.Syscall
		s.Call = event.Call(n.Op)
		if !s.Call.Valid() {
			return s, fmt.Errorf("native summary: unknown call %d", n.Op)
		}
		s.Op = CallOp(s.Call)
		switch n.Role {
		case 1:
			s.Op, s.CopySource = event.Read, true
		case 3:
			s.Op = event.Read
		case 2:
			s.Op = event.Write
		}
	default:
		return s, fmt.Errorf("native summary: unknown layer %d", n.Layer)
	}
	return s, nil
}

func sparse(counts []uint64) []event.HistCount {
	var out []event.HistCount
	for i, c := range counts {
		if c != 0 {
			out = append(out, event.HistCount{int64(i), int64(c)})
		}
	}
	return out
}
