package profile

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// Options changes what a profile counts.
type Options struct {
	// ExcludeWriteback leaves out block I/O issued by kernel threads
	// (writeback, journal) on behalf of processes.
	ExcludeWriteback bool
	// Window is how far out of time order events may arrive (default 10s: a
	// tracer on a busy machine can be seconds behind on one CPU).
	Window time.Duration
	// Devices names device numbers.
	Devices []event.Device
	// Series also builds the time series and offset maps a report plots.
	Series bool
	// SyscallPartial says the syscall layer covers only part of the
	// trace (the tracer was degraded to the block layer).
	SyscallPartial bool
	// Parallel aggregates each layer on a goroutine of its own, leaving
	// the caller's to decode and count processes. The profile is the same
	// byte for byte.
	Parallel bool
	// OnArrival, if set, is given each layer's data I/O in arrival order,
	// with the depth, idle time and stream the layer's sweep found: each
	// layer's on the goroutine that aggregates it. The Arrival is reused
	// after the call.
	OnArrival [2]func(*Arrival)
}

// Profile is the result.
type Profile struct {
	Block     *Layer          `json:"block"`
	Syscall   *Layer          `json:"syscall"`
	Devices   []DeviceProfile `json:"devices"`
	Processes []Process       `json:"processes"`
	PageCache PageCache       `json:"page_cache"`
	Writeback Writeback       `json:"writeback"`
	// LateEvents arrived further out of order than the window; their queue
	// depth is approximate.
	LateEvents int64 `json:"late_events"`
	// Events is how many events were read.
	Events   int64    `json:"-"`
	Series   *Series  `json:"series,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// SyscallPartial: the syscall layer covers only the trace's start
	// (Options.SyscallPartial).
	SyscallPartial bool `json:"syscall_partial,omitempty"`
	// Waits counts the traced threads' uninterruptible sleeps outside
	// any traced call (a page fault, sync(2), an open reading metadata),
	// and WaitedS sums them: the drive's work a program waited for that
	// no call of the syscall layer shows.
	Waits   int64   `json:"waits,omitempty"`
	WaitedS float64 `json:"waited_s,omitempty"`
}

// DeviceProfile is one device's share. For the syscall layer the device is
// the file system's (a partition), for the block layer the disk's.
type DeviceProfile struct {
	Device  string `json:"device"`
	Major   uint32 `json:"major"`
	Minor   uint32 `json:"minor"`
	Mount   string `json:"mount,omitempty"`
	Block   *Layer `json:"block,omitempty"`
	Syscall *Layer `json:"syscall,omitempty"`
	// Folded, on the "other" device, is how many devices it sums.
	Folded int `json:"folded_devices,omitempty"`
	// Content is what samples of the data its calls moved say of how far
	// it compresses (nil: none sampled).
	Content *event.Content `json:"content,omitempty"`
}

// Process is one process's I/O.
type Process struct {
	Pid               uint32 `json:"pid"`
	Comm              string `json:"comm"`
	SyscallIOs        int64  `json:"syscall_ios"`
	SyscallReadBytes  int64  `json:"syscall_read_bytes"`
	SyscallWriteBytes int64  `json:"syscall_write_bytes"`
	BlockIOs          int64  `json:"block_ios"`
	BlockReadBytes    int64  `json:"block_read_bytes"`
	BlockWriteBytes   int64  `json:"block_write_bytes"`
	Kernel            bool   `json:"kernel,omitempty"`
	// Threads are other names its threads gave themselves, as detail: the
	// process goes by its main thread's (event.ProcessNames).
	Threads []string `json:"threads,omitempty"`
	name    event.ProcessName
}

// maxThreadNames bounds the thread names kept per process.
const maxThreadNames = 4

// MarshalJSON writes the pid as null for a process known only by its name
// (and for the row that sums many): a made-up number would name another.
func (p Process) MarshalJSON() ([]byte, error) {
	type plain Process
	return json.Marshal(struct {
		plain
		Pid *uint32 `json:"pid"`
	}{plain(p), event.OptionalPid(p.Pid)})
}

// UnmarshalJSON reads what MarshalJSON writes; a null pid stays unknown.
func (p *Process) UnmarshalJSON(b []byte) error {
	type plain Process
	var v struct {
		plain
		Pid *uint32 `json:"pid"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Process(v.plain)
	p.Pid = event.PseudoPidBase
	if v.Pid != nil {
		p.Pid = *v.Pid
	}
	return nil
}

// Add sums another process's I/O into p (for rows that stand for many).
func (p *Process) Add(o Process) {
	p.SyscallIOs += o.SyscallIOs
	p.SyscallReadBytes += o.SyscallReadBytes
	p.SyscallWriteBytes += o.SyscallWriteBytes
	p.BlockIOs += o.BlockIOs
	p.BlockReadBytes += o.BlockReadBytes
	p.BlockWriteBytes += o.BlockWriteBytes
}

// PageCache compares what was asked for with what reached the drive.
type PageCache struct {
	SyscallReadBytes  int64 `json:"syscall_read_bytes"`
	BlockReadBytes    int64 `json:"block_read_bytes"`
	SyscallWriteBytes int64 `json:"syscall_write_bytes"`
	BlockWriteBytes   int64 `json:"block_write_bytes"`
	// ReadsFromCache is the share of syscall read bytes that did not reach
	// the drive (negative if the drive read more, e.g. readahead).
	ReadsFromCache float64 `json:"reads_from_cache"`
}

// Writeback is the block I/O kernel threads issued.
type Writeback struct {
	Included bool  `json:"included"`
	IOs      int64 `json:"ios"`
	Bytes    int64 `json:"bytes"`
}

type devKey struct {
	layer event.Layer
	dev   event.Dev
}

func (k devKey) less(o devKey) bool {
	if k.layer != o.layer {
		return k.layer < o.layer
	}
	if k.dev.Major != o.dev.Major {
		return k.dev.Major < o.dev.Major
	}
	return k.dev.Minor < o.dev.Minor
}

// Builder accumulates a profile from events in any order.
type Builder struct {
	opts       Options
	halves     [2]*layerHalf // by event.Layer
	par        *Split        // nil: the halves run on the caller's goroutine
	recentProc [16]*Process  // processes counted lately, direct-mapped by pid
	procs      map[uint32]*Process
	wb         Writeback
	waits      int64
	waitedNs   int64
	devByNum   map[event.Dev]event.Device
	seenEvents int64
	// Processes beyond the bounded table, folded into "other" (limits.go).
	foldedProcs int
}

// layerHalf is what one layer's events go through once counted: their
// re-sorting by arrival, the layer's and its devices' aggregates and time
// series, and for the block layer the re-sorting by dispatch. The two
// halves share nothing, so they can run on two goroutines; their time
// series merge exactly when the profile is built.
type layerHalf struct {
	layer    event.Layer
	arrival  *reorder[event.Event]
	dispatch *deviceSweeps // block only
	agg      *layerAgg     // the whole layer: what depends on order across devices
	devs     map[event.Dev]*layerAgg
	series   *seriesBuilder
	recent   recentDevs[layerAgg]
	// solo is the layer's one device while it has only one (most traces):
	// the layer's sweep in arrival order is then the device's, so agg is
	// left alone until a second device comes and takes a copy of it.
	// Summary rows (which feed agg themselves) turn it off.
	solo    *layerAgg
	soloOff bool
	// summary: built from summary rows, whose idle gaps are per device.
	summary bool
	// onArrival is Options.OnArrival for this layer, scratch what it is
	// handed.
	onArrival func(*Arrival)
	scratch   Arrival
	// Bounded detail (limits.go): devices with their own aggregate, and
	// how many were folded into "other".
	devCount int
	folded   int
}

// NewBuilder returns an empty Builder.
func NewBuilder(opts Options) *Builder {
	if opts.Window == 0 {
		opts.Window = defaultWindow
	}
	b := &Builder{
		opts:     opts,
		procs:    map[uint32]*Process{},
		devByNum: map[event.Dev]event.Device{},
	}
	b.wb.Included = !opts.ExcludeWriteback
	for _, d := range opts.Devices {
		b.devByNum[event.Dev{Major: d.Major, Minor: d.Minor}] = d
	}
	for l := range b.halves {
		h := &layerHalf{layer: event.Layer(l), agg: newLayerAgg(l == int(event.Block), true), devs: map[event.Dev]*layerAgg{}, onArrival: opts.OnArrival[l]}
		if opts.Series {
			h.series = newSeriesBuilder()
		}
		h.arrival = newReorder(int64(opts.Window), h.emitArrival)
		if h.layer == event.Block {
			h.dispatch = newDeviceSweeps(int64(opts.Window))
		}
		b.halves[l] = h
	}
	if opts.Parallel {
		b.par = startParallel(b.halves)
	}
	return b
}

// Add counts one event. The event is copied; the caller may reuse it.
func (b *Builder) Add(e *event.Event) {
	if e.Layer == event.Syscall && e.Call == event.CallWait {
		b.waits++
		b.waitedNs += max(e.End-e.Start, 0)
		return
	}
	if e.Layer > event.Syscall || !e.IsIO() {
		return
	}
	b.seenEvents++
	if e.Layer == event.Block && e.Flags&event.FlagKernel != 0 && e.Op.IsData() {
		b.wb.IOs++
		b.wb.Bytes += e.Bytes
		if b.opts.ExcludeWriteback {
			return
		}
	}
	b.countProcess(e)
	if b.par != nil {
		b.par.Add(int(e.Layer), e)
		return
	}
	b.halves[e.Layer].add(e)
}

func (b *Builder) countProcess(e *event.Event) {
	b.countIOs(e.Pid, e.Tid, e.Comm, e.Layer, e.Op, e.Flags&event.FlagKernel != 0, 1, e.Bytes)
}

// countIOs counts n I/Os of one process, layer and direction moving
// bytes.
func (b *Builder) countIOs(pid, tid uint32, comm string, layer event.Layer, op event.Op, kernel bool, n, bytes int64) {
	slot := &b.recentProc[pid%uint32(len(b.recentProc))]
	p := *slot
	if p == nil || p.Pid != pid {
		p = b.procs[pid]
		if p == nil {
			b.makeRoomForProcess()
			p = &Process{Pid: pid}
			b.procs[pid] = p
		}
		*slot = p
	}
	p.Comm = p.name.See(pid, tid, comm)
	if comm != p.Comm && len(p.Threads) < maxThreadNames && !slices.Contains(p.Threads, comm) {
		p.Threads = append(p.Threads, comm)
	}
	read, write := &p.SyscallReadBytes, &p.SyscallWriteBytes
	if layer == event.Block {
		p.Kernel = kernel
		read, write = &p.BlockReadBytes, &p.BlockWriteBytes
	}
	// I/Os are reads and writes, as the layers count them: a flush is
	// counted among the layer's flushes, not here.
	switch op {
	case event.Read:
		*read += bytes
	case event.Write:
		*write += bytes
	default:
		return
	}
	if layer == event.Block {
		p.BlockIOs += n
	} else {
		p.SyscallIOs += n
	}
}

// add takes one of the layer's events, in file order.
func (h *layerHalf) add(e *event.Event) {
	h.arrival.push(e.Start, e.End, e)
	if h.dispatch != nil && e.Op.IsData() {
		h.dispatch.add(e.DeviceTime(), e.End, e.Dev)
	}
}

func (h *layerHalf) emitArrival(e *event.Event) {
	dev := h.devAgg(e.Dev)
	cross := h.cross()
	gaps, known, seq := cross.depth.gaps.sum, dev.seq.known, dev.seq.seq
	if cross != dev {
		cross.add(e)
	}
	dev.add(e)
	// Queue depth counts reads and writes, and the read half of a copy is
	// the same call as its write half: the call counts once.
	if e.Op.IsData() && e.Flags&event.FlagCopySource == 0 {
		cross.depth.arriveWith(e.Start, e.End, dev.depth)
	}
	if h.onArrival != nil && e.Op.IsData() {
		h.report(e, gaps, known, seq, dev)
	}
	if h.series != nil {
		h.series.add(e)
	}
}

// cross is the aggregate that sweeps the whole layer in arrival order: the
// one device's while there is only one.
func (h *layerHalf) cross() *layerAgg {
	if h.solo != nil {
		return h.solo
	}
	return h.agg
}

func (h *layerHalf) devAgg(dev event.Dev) *layerAgg {
	slot := h.recent.slot(dev)
	if slot.v != nil && slot.dev == dev {
		return slot.v
	}
	d := h.devs[dev]
	if d == nil {
		h.makeRoomForDevice()
		d = newLayerAgg(h.layer == event.Block, false)
		switch {
		case h.solo != nil: // a second device: the layer's sweep goes on from the first's
			h.agg.takeCross(h.solo)
			h.solo = nil
		case len(h.devs) == 0 && !h.soloOff:
			h.solo = d
		}
		h.devs[dev] = d
		h.devCount++
	}
	slot.dev, slot.v = dev, d
	return d
}

// finish releases what the re-sorting still holds and merges the devices'
// aggregates into the layer's.
func (h *layerHalf) finish() {
	h.arrival.flush()
	if h.solo != nil {
		h.agg.takeCross(h.solo)
		h.solo = nil
	}
	if h.dispatch != nil {
		h.dispatch.finish()
		for dev, agg := range h.devs {
			if agg.device != nil {
				agg.device = h.dispatch.of(dev)
			}
		}
		if h.agg.device != nil {
			h.agg.device = h.dispatch.layer
		}
	}
	devs := make([]event.Dev, 0, len(h.devs))
	for d := range h.devs {
		devs = append(devs, d)
	}
	// Merge order fixes the fit's sample.
	sort.Slice(devs, func(i, j int) bool { return devKey{h.layer, devs[i]}.less(devKey{h.layer, devs[j]}) })
	for _, d := range devs {
		h.agg.merge(h.devs[d])
	}
	if h.summary && len(devs) > 1 {
		// Summary rows count idle gaps per device: summed, two devices
		// idle at once would count twice (more idle than the span). The
		// layer's gaps are its busiest device's.
		var busiest *layerAgg
		for _, d := range devs {
			if a := h.devs[d]; busiest == nil || a.depth.busy > busiest.depth.busy {
				busiest = a
			}
		}
		h.agg.depth.gaps = busiest.depth.gaps.clone()
	}
}

// late is how many events came too far out of order, and window the
// widest re-sorting window used.
func (h *layerHalf) late() (late, window int64) {
	late, window = h.arrival.late, h.arrival.window
	if h.dispatch != nil {
		late += h.dispatch.order.late
		window = max(window, h.dispatch.order.window)
	}
	return late, window
}

// Finish computes the profile. The Builder cannot be used afterwards.
func (b *Builder) Finish() *Profile {
	if b.par != nil {
		b.par.Wait()
	}
	for _, h := range b.halves {
		h.finish()
	}
	blk, sys := b.halves[event.Block], b.halves[event.Syscall]
	blkLate, blkWindow := blk.late()
	sysLate, sysWindow := sys.late()
	p := &Profile{
		Block:          blk.agg.result(),
		Syscall:        sys.agg.result(),
		Writeback:      b.wb,
		LateEvents:     blkLate + sysLate,
		Events:         b.seenEvents,
		SyscallPartial: b.opts.SyscallPartial,
		Waits:          b.waits,
		WaitedS:        float64(b.waitedNs) / 1e9,
	}
	p.Devices = b.deviceProfiles()
	if b.opts.Series {
		names := map[event.Dev]string{}
		for n, d := range b.devByNum {
			names[n] = d.Name
		}
		blk.series.merge(sys.series)
		p.Series = blk.series.result([2]*logHist{&blk.agg.lat, &sys.agg.lat}, names)
	}
	for _, pr := range b.procs {
		p.Processes = append(p.Processes, *pr)
	}
	sort.Slice(p.Processes, func(i, j int) bool {
		a, c := p.Processes[i], p.Processes[j]
		ta := a.SyscallReadBytes + a.SyscallWriteBytes + a.BlockReadBytes + a.BlockWriteBytes
		tc := c.SyscallReadBytes + c.SyscallWriteBytes + c.BlockReadBytes + c.BlockWriteBytes
		if ta != tc {
			return ta > tc
		}
		return a.Pid < c.Pid
	})
	if p.Syscall != nil {
		p.PageCache.SyscallReadBytes, p.PageCache.SyscallWriteBytes = p.Syscall.ReadBytes, p.Syscall.WriteBytes
	}
	if p.Block != nil {
		p.PageCache.BlockReadBytes, p.PageCache.BlockWriteBytes = p.Block.ReadBytes, p.Block.WriteBytes
	}
	if p.PageCache.SyscallReadBytes > 0 {
		// The drive reading more than was asked (page faults, readahead)
		// serves nothing from the cache: 0, not a negative share.
		p.PageCache.ReadsFromCache = round3(max(0, 1-float64(p.PageCache.BlockReadBytes)/float64(p.PageCache.SyscallReadBytes)))
	}
	p.Warnings = append(p.Warnings, b.foldedWarnings()...)
	if p.LateEvents > 0 {
		// The re-sorting window grows with the lateness seen, so the
		// first events that late are the ones that fall outside it.
		window := max(blkWindow, sysWindow)
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d events arrived further out of time order than the re-sorting window (%v by the end, at most %v); queue depth around them is approximate",
			p.LateEvents, time.Duration(window).Round(time.Millisecond), b.opts.Window))
	}
	return p
}

func (b *Builder) deviceProfiles() []DeviceProfile {
	byDev := map[event.Dev]*DeviceProfile{}
	for _, h := range b.halves {
		for dev, agg := range h.devs {
			dp := byDev[dev]
			if dp == nil {
				dp = &DeviceProfile{Major: dev.Major, Minor: dev.Minor, Device: dev.String()}
				if d, ok := b.devByNum[dev]; ok {
					dp.Device, dp.Mount, dp.Content = d.Name, d.Mount, d.Content
				}
				if dev == otherDev {
					dp.Device = "other"
				}
				byDev[dev] = dp
			}
			if dev == otherDev {
				dp.Folded = max(dp.Folded, h.folded)
			}
			if h.layer == event.Block {
				dp.Block = agg.result()
			} else {
				dp.Syscall = agg.result()
			}
		}
	}
	out := make([]DeviceProfile, 0, len(byDev))
	for _, dp := range byDev {
		if dp.Block == nil && dp.Syscall == nil {
			continue
		}
		out = append(out, *dp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Major != out[j].Major {
			return out[i].Major < out[j].Major
		}
		return out[i].Minor < out[j].Minor
	})
	return out
}
