package profile

import (
	"math"
	"reflect"
	"sort"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	summarizer "github.com/ioshape/ioshape/internal/summarize"
)

// summarize keeps of events what record --summary's programs keep: a row
// per second of completion, process, device, layer and direction, with the
// depth each arrival saw on its device's queue (the syscall layer's across
// devices), the idle gap before it, and whether it continued one of its
// stream's last eight sequences.
// It stands in for the kernel to check that a profile reads the rows as
// the kernel means them; the kernel's side is checked against fio in the
// e2e tests.
func summarize(evs []event.Event) []event.Summary {
	type queueKey struct {
		layer event.Layer
		dev   event.Dev
	}
	type queue struct {
		ends      []int64 // completions of those in flight
		idleSince int64
		busySince int64
	}
	order := make([]int, len(evs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return evs[order[a]].Start < evs[order[b]].Start })
	type noted struct {
		depth, gap int64
		seq, loc   bool
	}
	notes := make([]noted, len(evs))
	queues := map[queueKey]*queue{}
	seq := newSeqTracker()
	for _, i := range order {
		e := &evs[i]
		if !e.Op.IsData() {
			continue
		}
		k := queueKey{e.Layer, e.Dev}
		if e.Layer == event.Syscall {
			k.dev = event.Dev{}
		}
		q := queues[k]
		if q == nil {
			q = &queue{idleSince: -1}
			queues[k] = q
		}
		// Completions up to this arrival leave the queue.
		kept := q.ends[:0]
		for _, end := range q.ends {
			if end > e.Start {
				kept = append(kept, end)
			} else if len(q.ends) == 1 || end > q.idleSince {
				q.idleSince = max(q.idleSince, end)
			}
		}
		q.ends = kept
		n := &notes[i]
		if len(q.ends) == 0 {
			if q.idleSince >= 0 {
				n.gap = e.Start - q.idleSince
			}
			q.busySince = e.Start
		}
		q.ends = append(q.ends, e.End)
		n.depth = int64(len(q.ends))
		if e.Offset >= 0 && e.Size > 0 {
			// The kernel keeps the same heads per stream as seqTracker.
			before := seq.seq
			seq.add(e)
			n.loc, n.seq = true, seq.seq > before
		}
	}
	type rowKey struct {
		second int64
		layer  event.Layer
		op     event.Op
		pid    uint32
		dev    event.Dev
	}
	rows := map[rowKey]*event.Summary{}
	hist := map[rowKey]*[4]map[int]int64{}
	var keys []rowKey
	for i := range evs {
		e := &evs[i]
		k := rowKey{e.End / 1e9, e.Layer, e.Op, e.Pid, e.Dev}
		r := rows[k]
		if r == nil {
			r = &event.Summary{Start: k.second * 1e9, Layer: e.Layer, Op: e.Op, Dev: e.Dev, Pid: e.Pid, Comm: e.Comm, First: e.Start}
			rows[k] = r
			hist[k] = &[4]map[int]int64{{}, {}, {}, {}}
			keys = append(keys, k)
		}
		h := hist[k]
		r.Count++
		r.Bytes += e.Bytes
		r.SizeSum += e.Size
		r.First, r.Last = min(r.First, e.Start), max(r.Last, e.End)
		r.LatencyNs += e.End - e.Start
		h[0][event.HistBucket(e.Size)]++
		h[1][event.HistBucket(e.End-e.Start)]++
		n := notes[i]
		if n.depth > 0 {
			h[3][event.HistBucket(n.depth)]++
		}
		if n.gap > 0 {
			h[2][event.HistBucket(n.gap)]++
			r.IdleNs += n.gap
		}
		if n.loc {
			r.Located++
			if n.seq {
				r.Sequential++
			}
		}
	}
	sparse := func(m map[int]int64) []event.HistCount {
		var out []event.HistCount
		for b, c := range m {
			out = append(out, event.HistCount{int64(b), c})
		}
		sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
		return out
	}
	// Busy time: each queue's busy periods, credited to the row of the
	// I/O that ended them; here simply to the queue's first row.
	busy := map[queueKey]int64{}
	type span struct{ a, c int64 }
	byQueue := map[queueKey][]span{}
	for i := range evs {
		e := &evs[i]
		if !e.Op.IsData() {
			continue
		}
		k := queueKey{e.Layer, e.Dev}
		if e.Layer == event.Syscall {
			k.dev = event.Dev{}
		}
		byQueue[k] = append(byQueue[k], span{e.Start, e.End})
	}
	for k, ss := range byQueue {
		sort.Slice(ss, func(i, j int) bool { return ss[i].a < ss[j].a })
		var end int64 = math.MinInt64
		for _, s := range ss {
			if s.a >= end {
				busy[k] += s.c - s.a
				end = s.c
			} else if s.c > end {
				busy[k] += s.c - end
				end = s.c
			}
		}
	}
	var out []event.Summary
	credited := map[queueKey]bool{}
	for _, k := range keys {
		r, h := rows[k], hist[k]
		r.Size, r.Lat, r.Gap, r.Depth = sparse(h[0]), sparse(h[1]), sparse(h[2]), sparse(h[3])
		qk := queueKey{k.layer, k.dev}
		if k.layer == event.Syscall {
			qk.dev = event.Dev{}
		}
		if !credited[qk] && r.Op.IsData() {
			r.BusyNs, credited[qk] = busy[qk], true
		}
		out = append(out, *r)
	}
	return out
}

func buildSummary(rows []event.Summary, opts Options) *Profile {
	b := NewBuilder(opts)
	for i := range rows {
		b.AddSummary(&rows[i])
	}
	return b.Finish()
}

// A profile built from summary rows says what one built from the same
// I/Os does, to the histograms' resolution.
func TestSummaryProfileMatchesEvents(t *testing.T) {
	for _, c := range []struct {
		name             string
		evs              []event.Event
		sequential       bool
		depth            float64
		sizeP50, sizeMax int64
	}{
		{"random 4k QD1 with think time", gen(3000, 1, 4096, 100_000, 400_000, false, event.Read), false, 1, 4096, 4096},
		{"random 4k QD8", gen(20000, 8, 4096, 200_000, 0, false, event.Read), false, 8, 4096, 4096},
		{"sequential 1M writes QD2", gen(4000, 2, 1<<20, 2_000_000, 10_000, true, event.Write), true, 2, 1 << 20, 1 << 20},
	} {
		for _, by := range []struct {
			name string
			rows func([]event.Event) []event.Summary
		}{{"kernel", summarize}, {"summarize", streamed}} {
			t.Run(c.name+", "+by.name, func(t *testing.T) {
				want := build(c.evs, Options{})
				got := buildSummary(by.rows(c.evs), Options{})
				w, g := want.Block, got.Block
				if g.IOs != w.IOs || g.Reads != w.Reads || g.Writes != w.Writes || g.ReadBytes != w.ReadBytes || g.WriteBytes != w.WriteBytes {
					t.Errorf("counts: summary %d I/Os (%d/%d, %d/%d B), events %d (%d/%d, %d/%d B)",
						g.IOs, g.Reads, g.Writes, g.ReadBytes, g.WriteBytes, w.IOs, w.Reads, w.Writes, w.ReadBytes, w.WriteBytes)
				}
				if g.SpanS != w.SpanS || g.IOPS != w.IOPS {
					t.Errorf("span %v s at %v IOPS; events %v s at %v IOPS", g.SpanS, g.IOPS, w.SpanS, w.IOPS)
				}
				if g.SizeBytes.P50 != c.sizeP50 || g.SizeBytes.P50ByBytes != w.SizeBytes.P50ByBytes || g.SizeBytes.Max != c.sizeMax || g.SizeBytes.Mean != w.SizeBytes.Mean {
					t.Errorf("sizes: summary %+v, events %+v", g.SizeBytes, w.SizeBytes)
				}
				if g.QueueDepth.P50 != c.depth || w.QueueDepth.P50 != c.depth || g.QueueDepth.Max != w.QueueDepth.Max {
					t.Errorf("depth: summary p50 %v max %d, events p50 %v max %d, want %v", g.QueueDepth.P50, g.QueueDepth.Max, w.QueueDepth.P50, w.QueueDepth.Max, c.depth)
				}
				if math.Abs(g.QueueDepth.MeanTimeWeighted-w.QueueDepth.MeanTimeWeighted) > 0.01*w.QueueDepth.MeanTimeWeighted {
					t.Errorf("time-weighted depth: summary %v, events %v", g.QueueDepth.MeanTimeWeighted, w.QueueDepth.MeanTimeWeighted)
				}
				if (g.SequentialFraction >= 0.8) != c.sequential || math.Abs(g.SequentialFraction-w.SequentialFraction) > 0.01 {
					t.Errorf("sequential: summary %v, events %v", g.SequentialFraction, w.SequentialFraction)
				}
				if g.IdleGapUs.Count != w.IdleGapUs.Count || math.Abs(g.IdleS-w.IdleS) > 0.001 {
					t.Errorf("idle gaps: summary %d, %v s; events %d, %v s", g.IdleGapUs.Count, g.IdleS, w.IdleGapUs.Count, w.IdleS)
				}
				// Four buckets per power of two: within 12.5 % either way.
				if r := g.LatencyUs.P50 / w.LatencyUs.P50; r < 0.88 || r > 1.13 || g.LatencyUs.Mean != w.LatencyUs.Mean {
					t.Errorf("latency: summary %+v, events %+v", g.LatencyUs, w.LatencyUs)
				}
				if len(got.Processes) != len(want.Processes) || !reflect.DeepEqual(got.Processes[0], want.Processes[0]) {
					t.Errorf("processes: summary %+v, events %+v", got.Processes, want.Processes)
				}
				if g.DeviceQueueDepth != nil {
					t.Errorf("a summary has no dispatch times, but its device depth is %+v", g.DeviceQueueDepth)
				}
			})
		}
	}
}

// streamed is what ioshape's summarizer (for the tracers that print each
// I/O) makes of events given in completion order, a CPU's buffer read a
// little late now and then.
func streamed(evs []event.Event) []event.Summary {
	in := append([]event.Event(nil), evs...)
	sort.SliceStable(in, func(i, j int) bool { return in[i].End < in[j].End })
	for i := 0; i+8 < len(in); i += 97 { // a few read out of order
		in[i], in[i+8] = in[i+8], in[i]
	}
	var rows []event.Summary
	sum := summarizer.New(func(r *event.Summary) error {
		rows = append(rows, *r)
		return nil
	})
	for i := range in {
		sum.Add(&in[i])
	}
	sum.Close()
	return rows
}

// Rows may come in any order, and a report's time series spreads each
// over its second.
func TestSummarySeries(t *testing.T) {
	rows := summarize(gen(30000, 4, 8192, 300_000, 0, false, event.Read))
	sorted := buildSummary(rows, Options{Series: true})
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	reversed := buildSummary(rows, Options{Series: true})
	if sorted.Block.IOs != reversed.Block.IOs || !reflect.DeepEqual(sorted.Block.QueueDepth, reversed.Block.QueueDepth) || sorted.Block.SizeBytes.P50 != reversed.Block.SizeBytes.P50 {
		t.Errorf("row order changed the profile: %+v vs %+v", sorted.Block, reversed.Block)
	}
	s := sorted.Series
	if s == nil || s.Block == nil {
		t.Fatal("no time series")
	}
	var ios int64
	for _, n := range s.Block.IOs {
		ios += n
	}
	if d := ios - sorted.Block.IOs; d < -int64(len(s.Block.IOs)) || d > int64(len(s.Block.IOs)) {
		t.Errorf("the series holds %d I/Os, the profile %d", ios, sorted.Block.IOs)
	}
	var peak float64
	for _, f := range s.Block.InFlight {
		peak = max(peak, f)
	}
	if peak < 3.5 || peak > 4.5 {
		t.Errorf("in flight peaks at %v; the workload keeps 4", peak)
	}
}

// Writeback excluded leaves out the kernel's rows.
func TestSummaryExcludeWriteback(t *testing.T) {
	rows := summarize(gen(1000, 1, 4096, 100_000, 0, false, event.Write))
	kernel := rows[0]
	kernel.Kernel, kernel.Pid, kernel.Comm = true, 7, "kworker/u8:1"
	rows = append(rows, kernel)
	all := buildSummary(rows, Options{})
	own := buildSummary(rows, Options{ExcludeWriteback: true})
	if own.Block.IOs != all.Block.IOs-kernel.Count || all.Writeback.IOs != kernel.Count || own.Writeback.IOs != kernel.Count {
		t.Errorf("with writeback %d I/Os, without %d; the kernel's row holds %d (writeback %+v)", all.Block.IOs, own.Block.IOs, kernel.Count, all.Writeback)
	}
}

// Idle time is per device in a summary: two devices idle at once are not
// twice as idle. Over two devices, the layer's idle time stays within its
// span and is its busiest device's.
func TestSummaryIdleNotSummedAcrossDevices(t *testing.T) {
	a := gen(2000, 1, 4096, 100_000, 900_000, false, event.Read) // busy 10 % of the time
	b := gen(2000, 1, 4096, 300_000, 700_000, false, event.Read) // busy 30 %
	for i := range b {
		b[i].Dev = event.Dev{Major: 8, Minor: 16}
	}
	evs := append(a, b...)
	sort.Slice(evs, func(i, j int) bool { return evs[i].End < evs[j].End })
	p := buildSummary(summarize(evs), Options{})
	if p.Block.IdleS > p.Block.SpanS {
		t.Fatalf("idle %v s in a span of %v s", p.Block.IdleS, p.Block.SpanS)
	}
	busiest := build(b, Options{}).Block
	if math.Abs(p.Block.IdleS-busiest.IdleS) > 0.01*busiest.IdleS {
		t.Errorf("layer idle %v s, the busiest device's %v s", p.Block.IdleS, busiest.IdleS)
	}
}
