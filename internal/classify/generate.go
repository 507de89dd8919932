package classify

import (
	"hash/fnv"
	"math/rand/v2"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

// The simulated device: a fixed per-I/O overhead plus a transfer rate, with
// a little jitter. Only relative timing matters to a shape (sizes, depth,
// order, read share and the share of idle time are what is compared), so
// one plausible SSD serves every pattern.
const (
	simOverheadNs = 25_000
	simBytesPerNs = 2.0 // 2 GB/s
	simIOs        = 4000
	simRegion     = 1 << 30 // each thread's file
)

// Generate simulates a pattern's I/O stream, as the syscall layer (what the
// benchmark asks for) and the block layer (what a drive would see) would
// record it.
func Generate(p *Pattern) []event.Event {
	h := fnv.New64a()
	h.Write([]byte(p.ID))
	rng := rand.New(rand.NewPCG(h.Sum64(), 1))
	threads, depth := max(1, p.Threads), max(1, p.QueueDepth)
	slots := threads * depth
	n := p.IOs
	if n == 0 {
		n = max(simIOs, 20*slots) // enough for every slot to be busy most of the time
	}
	next := make([]int64, slots) // when each slot issues its next I/O
	for s := range next {
		next[s] = int64(s) * 1000 // staggered starts
	}
	offset := make([]int64, threads) // each thread's sequential position
	var cum []float64
	for i := range p.Sizes {
		w := 1.0
		if len(p.SizeWeights) > 0 {
			w = p.SizeWeights[i]
		}
		if i > 0 {
			w += cum[i-1]
		}
		cum = append(cum, w)
	}
	out := make([]event.Event, 0, 2*n)
	var burstStart int64
	for i := 0; i < n; i++ {
		s := 0
		for k := range next {
			if next[k] < next[s] {
				s = k
			}
		}
		th := s / depth
		t := next[s]
		size := p.Sizes[pickSize(p, cum, i, n, rng)]
		var off int64
		if p.Access == "mixed" && rng.Float64() >= p.SequentialFraction {
			offset[th] = rng.Int64N(simRegion/4096) * 4096 // a jump; the stream goes on from here
		}
		if p.Access == "sequential" || p.Access == "mixed" {
			off = int64(th)*simRegion + offset[th]%simRegion
			offset[th] += size
		} else {
			off = int64(th)*simRegion + rng.Int64N(simRegion/4096)*4096
		}
		op, call := event.Read, event.CallPread64
		if rng.Float64() >= p.ReadFraction {
			op, call = event.Write, event.CallPwrite64
		}
		flags := event.FlagDirect
		if depth > 1 {
			flags |= event.FlagAsync
			if op == event.Read {
				call = event.CallAioRead
			} else {
				call = event.CallAioWrite
			}
		}
		lat := simOverheadNs + int64(float64(size)/simBytesPerNs)
		lat += int64(float64(lat) * 0.1 * rng.Float64())
		sys := event.Event{
			Layer: event.Syscall, Op: op, Call: call, Flags: flags, Start: t, End: t + lat,
			Dev: event.Dev{Major: 254}, Inode: uint64(th + 1), Offset: off - int64(th)*simRegion,
			Size: size, Bytes: size, Pid: 1000, Tid: uint32(1000 + th), Comm: "pattern",
		}
		blk := sys
		blk.Layer, blk.Call, blk.Inode, blk.Offset = event.Block, event.NoCall, 0, off
		blk.Flags = event.FlagDispatched
		blk.Dispatch = t
		out = append(out, sys, blk)
		next[s] = t + lat
		if len(p.GapUs) == 2 {
			next[s] += int64(1000 * (p.GapUs[0] + rng.Float64()*(p.GapUs[1]-p.GapUs[0])))
		}
		// Bursts: after 64 I/Os, rest so that the busy share is Duty.
		if p.Duty > 0 && i%64 == 63 {
			busy := next[s] - burstStart
			rest := int64(float64(busy) * (1/p.Duty - 1))
			for k := range next {
				next[k] = max(next[k], next[s]) + rest
			}
			burstStart = next[s]
		}
	}
	return out
}

// pickSize cycles through the sizes in order for a sweep, else draws by
// weight.
func pickSize(p *Pattern, cum []float64, i, n int, rng *rand.Rand) int {
	if len(p.Sizes) == 1 {
		return 0
	}
	if len(p.SizeWeights) == 0 {
		return min(len(p.Sizes)-1, i*len(p.Sizes)/n) // a sweep, in order
	}
	x := rng.Float64() * cum[len(cum)-1]
	for k, c := range cum {
		if x < c {
			return k
		}
	}
	return len(cum) - 1
}

// ExpectedProfile runs a pattern's simulated stream through the profiler.
func ExpectedProfile(p *Pattern) *profile.Profile {
	b := profile.NewBuilder(profile.Options{})
	evs := Generate(p)
	for i := range evs {
		b.Add(&evs[i])
	}
	return b.Finish()
}
