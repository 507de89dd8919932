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

// makeRoomForDevice, when a layer's table is full, folds its quieter half
// into "other" at once: one sort per maxDevices/2 new devices, however
// many devices a trace names.
func (b *Builder) makeRoomForDevice(layer event.Layer) {
	if b.devCount[layer] < maxDevices {
		return
	}
	keys := make([]devKey, 0, maxDevices)
	for k := range b.devs {
		if k.layer == layer && k.dev != otherDev {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, c := b.devs[keys[i]].ios(), b.devs[keys[j]].ios()
		return a < c || a == c && keys[i].less(keys[j])
	})
	ok := devKey{layer, otherDev}
	other := b.devs[ok]
	if other == nil {
		other = newLayerAgg(layer == event.Block, false)
		b.devs[ok] = other
	}
	for _, k := range keys[:len(keys)/2] {
		other.absorb(b.devs[k])
		delete(b.devs, k)
		b.devCount[layer]--
		b.folded[layer]++
	}
	b.lastAgg = nil
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
	b.lastProc = nil
}

func (p *Process) bytes() int64 {
	return p.SyscallReadBytes + p.SyscallWriteBytes + p.BlockReadBytes + p.BlockWriteBytes
}

// foldedWarnings say what was folded, for the user.
func (b *Builder) foldedWarnings() []string {
	var w []string
	for layer, n := range b.folded {
		if n > 0 {
			w = append(w, fmt.Sprintf("%s layer: %d devices beyond the %d busiest are summed as \"other\" (without their queue depth)", event.Layer(layer), n, maxDevices))
		}
	}
	if b.foldedProcs > 0 {
		w = append(w, fmt.Sprintf("%d processes beyond the %d busiest are summed as \"other\"", b.foldedProcs, maxProcesses))
	}
	return w
}
