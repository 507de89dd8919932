package profile

import (
	"fmt"
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
	arrival    [2]*reorder[event.Event]
	dispatch   *reorder[dispatched]
	lastKey    devKey
	lastAgg    *layerAgg
	lastProc   *Process
	layers     [2]*layerAgg
	devs       map[devKey]*layerAgg
	procs      map[uint32]*Process
	wb         Writeback
	devByNum   map[event.Dev]event.Device
	seenEvents int64
	series     *seriesBuilder
	// Bounded detail (limits.go): devices with their own aggregate per
	// layer, and how many were folded into "other".
	devCount    [2]int
	folded      [2]int
	foldedProcs int
}

// NewBuilder returns an empty Builder.
func NewBuilder(opts Options) *Builder {
	if opts.Window == 0 {
		opts.Window = 10 * time.Second
	}
	b := &Builder{
		opts:     opts,
		layers:   [2]*layerAgg{newLayerAgg(true, true), newLayerAgg(false, true)},
		devs:     map[devKey]*layerAgg{},
		procs:    map[uint32]*Process{},
		devByNum: map[event.Dev]event.Device{},
	}
	b.wb.Included = !opts.ExcludeWriteback
	if opts.Series {
		b.series = newSeriesBuilder()
	}
	for _, d := range opts.Devices {
		b.devByNum[event.Dev{Major: d.Major, Minor: d.Minor}] = d
	}
	w := int64(opts.Window)
	for l := range b.arrival {
		b.arrival[l] = newReorder(w, b.emitArrival)
	}
	b.dispatch = newReorder(w, b.emitDispatch)
	return b
}

// Add counts one event. The event is copied; the caller may reuse it.
func (b *Builder) Add(e *event.Event) {
	if e.Layer > event.Syscall || e.IsWait() {
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
	b.arrival[e.Layer].push(e.Start, e.End, e)
	if e.Layer == event.Block && e.Op.IsData() {
		d := dispatched{at: e.DeviceTime(), end: e.End, dev: e.Dev}
		b.dispatch.push(d.at, d.end, &d)
	}
}

func (b *Builder) countProcess(e *event.Event) {
	p := b.lastProc
	if p == nil || p.Pid != e.Pid {
		p = b.procs[e.Pid]
		if p == nil {
			b.makeRoomForProcess()
			p = &Process{Pid: e.Pid}
			b.procs[e.Pid] = p
		}
		b.lastProc = p
	}
	p.Comm = e.Comm
	read, write := &p.SyscallReadBytes, &p.SyscallWriteBytes
	if e.Layer == event.Block {
		p.Kernel = e.Flags&event.FlagKernel != 0
		p.BlockIOs++
		read, write = &p.BlockReadBytes, &p.BlockWriteBytes
	} else {
		p.SyscallIOs++
	}
	switch e.Op {
	case event.Read:
		*read += e.Bytes
	case event.Write:
		*write += e.Bytes
	}
}

func (b *Builder) emitArrival(e *event.Event) {
	b.layers[e.Layer].add(e)
	b.devAgg(devKey{e.Layer, e.Dev}).add(e)
	if b.series != nil {
		b.series.add(e)
	}
}

// dispatched is what the device-depth sweep needs of a block request.
type dispatched struct {
	at, end int64
	dev     event.Dev
}

func (b *Builder) emitDispatch(d *dispatched) {
	b.layers[event.Block].device.arrive(d.at, d.end)
	b.devAgg(devKey{event.Block, d.dev}).device.arrive(d.at, d.end)
}

func (b *Builder) devAgg(k devKey) *layerAgg {
	if b.lastAgg != nil && b.lastKey == k {
		return b.lastAgg
	}
	d := b.devs[k]
	if d == nil {
		b.makeRoomForDevice(k.layer)
		d = newLayerAgg(k.layer == event.Block, false)
		b.devs[k] = d
		b.devCount[k.layer]++
	}
	b.lastKey, b.lastAgg = k, d
	return d
}

// Finish computes the profile. The Builder cannot be used afterwards.
func (b *Builder) Finish() *Profile {
	for _, r := range b.arrival {
		r.flush()
	}
	b.dispatch.flush()
	keys := make([]devKey, 0, len(b.devs))
	for k := range b.devs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) }) // merge order fixes the fit's sample
	for _, k := range keys {
		b.layers[k.layer].merge(b.devs[k])
	}
	p := &Profile{
		Block:          b.layers[event.Block].result(),
		Syscall:        b.layers[event.Syscall].result(),
		Writeback:      b.wb,
		LateEvents:     b.arrival[0].late + b.arrival[1].late + b.dispatch.late,
		Events:         b.seenEvents,
		SyscallPartial: b.opts.SyscallPartial,
	}
	p.Devices = b.deviceProfiles()
	if b.series != nil {
		names := map[event.Dev]string{}
		for n, d := range b.devByNum {
			names[n] = d.Name
		}
		p.Series = b.series.result([2]*logHist{&b.layers[event.Block].lat, &b.layers[event.Syscall].lat}, names)
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
		p.PageCache.ReadsFromCache = round3(1 - float64(p.PageCache.BlockReadBytes)/float64(p.PageCache.SyscallReadBytes))
	}
	p.Warnings = append(p.Warnings, b.foldedWarnings()...)
	if p.LateEvents > 0 {
		// The re-sorting window grows with the lateness seen, so the
		// first events that late are the ones that fall outside it.
		window := max(b.arrival[0].window, b.arrival[1].window, b.dispatch.window)
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d events arrived further out of time order than the re-sorting window (%v by the end, at most %v); queue depth around them is approximate",
			p.LateEvents, time.Duration(window).Round(time.Millisecond), b.opts.Window))
	}
	return p
}

func (b *Builder) deviceProfiles() []DeviceProfile {
	byDev := map[event.Dev]*DeviceProfile{}
	for k, agg := range b.devs {
		dp := byDev[k.dev]
		if dp == nil {
			dp = &DeviceProfile{Major: k.dev.Major, Minor: k.dev.Minor, Device: k.dev.String()}
			if d, ok := b.devByNum[k.dev]; ok {
				dp.Device, dp.Mount = d.Name, d.Mount
			}
			if k.dev == otherDev {
				dp.Device = "other"
				dp.Folded = b.folded[k.layer]
			}
			byDev[k.dev] = dp
		}
		if k.layer == event.Block {
			dp.Block = agg.result()
		} else {
			dp.Syscall = agg.result()
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
