package profile

import (
	"fmt"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
)

// Per-device and per-process detail is bounded, so that memory does not
// grow with how many devices or processes a trace names (a crafted trace
// can name millions). The busiest keep their own statistics; when a new
// one comes and the table is full, the quietest so far is folded into
// "other". Nothing is lost from the whole-layer figures, which merge every
// device's, "other" included.
const (
	maxDevices   = 64  // per layer
	maxProcesses = 256 // processes with their own row
	maxOffsetMap = 16  // devices whose offsets over time are kept (the report plots 4)
)

// otherDev is the device number the folded devices share.
var otherDev = event.Dev{Major: 1<<32 - 1, Minor: 1<<32 - 1}

// otherPid is the process the folded processes share.
const otherPid = 1<<32 - 1

// ios is how much an aggregate has seen, to rank it.
func (a *layerAgg) ios() int64 { return a.reads + a.writes + a.flushes + a.discards + a.others }

// absorb folds another device's aggregate into this one: its counts and
// per-event statistics. Depth over time cannot be merged across devices:
// "other" reports none.
func (a *layerAgg) absorb(d *layerAgg) {
	a.mergeCounts(d)
	a.reads += d.reads
	a.writes += d.writes
	a.flushes += d.flushes
	a.clones += d.clones
	a.discards += d.discards
	a.others += d.others
	a.errors += d.errors
	a.readBytes += d.readBytes
	a.writeBytes += d.writeBytes
	if d.any {
		if !a.any || d.first < a.first {
			a.first = d.first
		}
		a.last = max(a.last, d.last)
		a.any = true
	}
}

// makeRoomForDevice, when the layer's table is full, folds its quieter half
// into "other" at once: one sort per maxDevices/2 new devices, however
// many devices a trace names.
func (h *layerHalf) makeRoomForDevice() {
	if h.devCount < maxDevices {
		return
	}
	devs := make([]event.Dev, 0, maxDevices)
	for d := range h.devs {
		if d != otherDev {
			devs = append(devs, d)
		}
	}
	sort.Slice(devs, func(i, j int) bool {
		a, c := h.devs[devs[i]].ios(), h.devs[devs[j]].ios()
		return a < c || a == c && devKey{h.layer, devs[i]}.less(devKey{h.layer, devs[j]})
	})
	other := h.devs[otherDev]
	if other == nil {
		other = newLayerAgg(h.layer == event.Block, false)
		h.devs[otherDev] = other
	}
	for _, d := range devs[:len(devs)/2] {
		other.absorb(h.devs[d])
		delete(h.devs, d)
		h.devCount--
		h.folded++
	}
	clear(h.recent[:])
}

// makeRoomForProcess, when the table is full, folds the half that moved
// the fewest bytes into "other".
func (b *Builder) makeRoomForProcess() {
	own := len(b.procs)
	if b.procs[otherPid] != nil {
		own--
	}
	if own < maxProcesses {
		return
	}
	procs := make([]*Process, 0, own)
	for pid, p := range b.procs {
		if pid != otherPid {
			procs = append(procs, p)
		}
	}
	sort.Slice(procs, func(i, j int) bool {
		a, c := procs[i].bytes(), procs[j].bytes()
		return a < c || a == c && procs[i].Pid < procs[j].Pid
	})
	other := b.procs[otherPid]
	if other == nil {
		other = &Process{Pid: otherPid, Comm: "other"}
		b.procs[otherPid] = other
	}
	for _, q := range procs[:len(procs)/2] {
		other.Add(*q)
		delete(b.procs, q.Pid)
		b.foldedProcs++
	}
	clear(b.recentProc[:])
}

func (p *Process) bytes() int64 {
	return p.SyscallReadBytes + p.SyscallWriteBytes + p.BlockReadBytes + p.BlockWriteBytes
}

// foldedWarnings say what was folded, for the user.
func (b *Builder) foldedWarnings() []string {
	var w []string
	for _, h := range b.halves {
		if h.folded > 0 {
			w = append(w, fmt.Sprintf("%s layer: %d devices beyond the %d busiest are summed as \"other\" (without their queue depth)", h.layer, h.folded, maxDevices))
		}
	}
	if b.foldedProcs > 0 {
		w = append(w, fmt.Sprintf("%d processes beyond the %d busiest are summed as \"other\"", b.foldedProcs, maxProcesses))
	}
	return w
}
