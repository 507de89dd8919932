package parse

import (
	"github.com/ioshape/ioshape/internal/event"
)

// blkAction is one blktrace event, read from blkparse's text or from a
// binary blk_io_trace record.
type blkAction struct {
	dev     event.Dev
	time    int64 // ns
	pid     uint32
	comm    string
	action  byte // blkparse's letter: Q M F G I D C R X …
	op      event.Op
	flags   event.Flags
	sector  int64 // −1: none (a flush)
	sectors int64
	split   int64 // X: the sector where the second part starts
	errno   int32
	// A: the device and sector the bio had before the remap (a partition
	// onto its disk, a dm or md device onto the one below).
	fromDev    event.Dev
	fromSector int64
}

type blkKey struct {
	dev    event.Dev
	sector int64
}

// blkQueued is a bio waiting to become (part of) a request.
type blkQueued struct {
	time     int64
	pid      uint32
	comm     string
	remapped bool // came from a device above: its own queueing there counts
}

// blkIssued is a request handed to the device, waiting for completion.
type blkIssued struct {
	blkQueued
	dispatch int64
	op       event.Op
	flags    event.Flags
	sectors  int64 // as dispatched
	left     int64 // sectors not yet completed (completions may come in parts)
	start    int64 // the dispatched sector
}

// maxTracked bounds the bios and requests held while waiting for their
// next event; past it the oldest state is dropped (and counted), so that
// a capture with lost events cannot grow memory without end.
const maxTracked = 1 << 20

// blkRequests rebuilds requests from blktrace's per-bio and per-request
// events: a request starts when its first bio was queued (Q), is
// dispatched to the device (D) with the size the device was sent, and
// ends at completion (C). Merges (M, F) fold bios into requests, splits
// (X) make two, requeues (R) send a request back. A capture of completions
// only becomes events with no latency (the reader says so).
type blkRequests struct {
	queued map[blkKey]blkQueued
	issued map[blkKey]*blkIssued
	// sectorless requests (flushes) in dispatch order, per device
	flushes map[event.Dev][]*blkIssued

	sawDispatch      bool
	merges, splits   int64 // bios merged into requests (M, F), requests split (X)
	requeues, remaps int64 // requests sent back (R), bios remapped to the device below (A)
	// remappedFrom are the bios above a remap: their completion there is
	// the request's below, not one of its own.
	remappedFrom      map[blkKey]bool
	endedUnfinished   int64 // left in flight by runs before this one
	completionOnly    int64 // events made from a completion alone
	unmatched         int64 // completions of no dispatched request
	dropped           int64 // state dropped at maxTracked
	queuedWithoutBios int64 // dispatches whose queueing was not seen

	// what is left of the last completion's range, for moreCovered
	pendingCover blkKey
	coverEnd     int64
	coverAction  blkAction
}

func newBlkRequests() *blkRequests {
	return &blkRequests{queued: map[blkKey]blkQueued{}, issued: map[blkKey]*blkIssued{}, flushes: map[event.Dev][]*blkIssued{},
		remappedFrom: map[blkKey]bool{}}
}

// add takes one action; it fills e and returns true when a request completed.
func (b *blkRequests) add(a *blkAction, e *event.Event) bool {
	if a.sectors == 0 && a.flags&event.FlagPreflush != 0 {
		a.op = event.Flush // "FWS" with no data: an empty preflush
	}
	k := blkKey{a.dev, a.sector}
	q := blkQueued{time: a.time, pid: a.pid, comm: a.comm}
	switch a.action {
	case 'Q':
		if old, ok := b.queued[k]; ok && old.remapped {
			// Queued again below a remap: the request began above.
			old.remapped = false
			b.queued[k] = old
			return false
		}
		b.track(k, q)
	case 'A':
		b.remaps++
		from := blkKey{a.fromDev, a.fromSector}
		if old, ok := b.queued[from]; ok {
			delete(b.queued, from)
			q = old
		}
		q.remapped = true
		b.track(k, q)
		if len(b.remappedFrom) >= maxTracked {
			clear(b.remappedFrom)
		}
		b.remappedFrom[from] = true
	case 'G', 'I':
		// Captures made without queue events start requests here.
		if _, ok := b.queued[k]; !ok {
			b.track(k, q)
		}
	case 'M':
		// A back merge: the bio joined a request that starts before it.
		b.merges++
		delete(b.queued, k)
	case 'F':
		// A front merge: the request now starts at this bio; it keeps the
		// earlier queueing of the request it joined.
		b.merges++
		next := blkKey{a.dev, a.sector + a.sectors}
		if old, ok := b.queued[next]; ok {
			delete(b.queued, next)
			if old.time < q.time {
				q = old
			}
		}
		b.track(k, q)
	case 'X':
		b.splits++
		if old, ok := b.queued[k]; ok {
			b.track(blkKey{a.dev, a.split}, old)
		}
	case 'D':
		b.sawDispatch = true
		is := &blkIssued{blkQueued: q, dispatch: a.time, op: a.op, flags: a.flags, sectors: a.sectors, left: a.sectors, start: a.sector}
		if old, ok := b.queued[k]; ok {
			is.blkQueued = old
			delete(b.queued, k)
		} else {
			b.queuedWithoutBios++
		}
		if a.sector < 0 || a.sectors == 0 {
			b.flushes[a.dev] = append(b.flushes[a.dev], is)
			return false
		}
		if len(b.issued) >= maxTracked {
			b.dropped += int64(len(b.issued))
			clear(b.issued)
		}
		b.issued[k] = is
	case 'R':
		b.requeues++
		if is, ok := b.issued[k]; ok {
			delete(b.issued, k)
			b.track(k, is.blkQueued)
		}
	case 'C':
		return b.complete(a, e)
	}
	return false
}

func (b *blkRequests) track(k blkKey, q blkQueued) {
	if len(b.queued) >= maxTracked {
		b.dropped += int64(len(b.queued))
		clear(b.queued)
	}
	b.queued[k] = q
}

// complete ends the request a completion names. A completion can cover
// part of a request (it stays in flight for the rest) or several merged
// ones (each ends): what counts is what was dispatched.
func (b *blkRequests) complete(a *blkAction, e *event.Event) bool {
	if a.sector < 0 || a.sectors == 0 {
		if fl := b.flushes[a.dev]; len(fl) > 0 {
			b.flushes[a.dev] = fl[1:]
			b.fill(e, fl[0], a)
			return true
		}
	} else if is, ok := b.issued[blkKey{a.dev, a.sector}]; ok {
		delete(b.issued, blkKey{a.dev, a.sector})
		if a.sectors < is.left {
			// Partial: the rest completes later, from where this ended.
			is.left -= a.sectors
			b.issued[blkKey{a.dev, a.sector + a.sectors}] = is
			return false
		}
		// Requests merged into this one's completion range end with it:
		// moreCovered hands them out.
		b.fill(e, is, a)
		b.pendingCover = blkKey{a.dev, a.sector + is.left}
		b.coverEnd = a.sector + a.sectors
		b.coverAction = *a
		return true
	}
	if k := (blkKey{a.dev, a.sector}); b.remappedFrom[k] {
		// The bio above a remap completes when the request below did.
		delete(b.remappedFrom, k)
		return false
	}
	if !b.sawDispatch {
		// A capture of completions only: the request is what completed.
		b.completionOnly++
		*e = event.Event{
			Layer: event.Block, Op: a.op, Flags: a.flags, Start: a.time, End: a.time, Dev: a.dev,
			Offset: a.sector * 512, Size: a.sectors * 512, Bytes: a.sectors * 512, Errno: a.errno,
		}
		if a.op != event.Read && a.op != event.Write {
			e.Offset = -1
		}
		return true
	}
	b.unmatched++
	return false
}

// moreCovered returns, one at a time, the further requests the last
// completion's range covered.
func (b *blkRequests) moreCovered(e *event.Event) bool {
	if b.pendingCover.sector < b.coverEnd {
		k := b.pendingCover
		is, ok := b.issued[k]
		if !ok {
			b.pendingCover.sector = b.coverEnd
			return false
		}
		delete(b.issued, k)
		b.pendingCover.sector += is.left
		b.fill(e, is, &b.coverAction)
		return true
	}
	return false
}

func (b *blkRequests) fill(e *event.Event, is *blkIssued, c *blkAction) {
	*e = event.Event{
		Layer: event.Block, Op: is.op, Flags: is.flags | event.FlagDispatched,
		Start: min(is.time, is.dispatch), Dispatch: is.dispatch, End: c.time, Dev: c.dev,
		Offset: is.start * 512, Size: is.sectors * 512, Bytes: is.sectors * 512, Errno: c.errno,
		Pid: is.pid, Tid: is.pid, Comm: is.comm,
	}
	if c.errno != 0 {
		e.Bytes = 0
	}
	if is.start < 0 || !is.op.IsData() {
		e.Offset = -1
	}
	if isLinuxKernelThread(is.comm) {
		e.Flags |= event.FlagKernel
	}
}

// covered hands out, into rec, the further requests the last completion
// covered (see moreCovered) while *pending; false once there are none.
func (b *blkRequests) covered(rec *Record, pending *bool) bool {
	if !*pending {
		return false
	}
	*rec = Record{}
	if b.moreCovered(&rec.Event) {
		rec.Kind = KindEvent
		return true
	}
	*pending = false
	return false
}

// unfinished is how many dispatched requests never completed.
func (b *blkRequests) unfinished() int64 {
	n := int64(len(b.issued)) + b.endedUnfinished
	for _, fl := range b.flushes {
		n += int64(len(fl))
	}
	return n
}

// endRun closes a run of a capture holding several: what it left queued or
// in flight is counted unfinished, and its state is dropped, so that the
// next run's requests (at the same sectors, from time zero) are not taken
// for its.
func (b *blkRequests) endRun() {
	b.endedUnfinished += int64(len(b.issued))
	for _, fl := range b.flushes {
		b.endedUnfinished += int64(len(fl))
	}
	clear(b.queued)
	clear(b.issued)
	clear(b.flushes)
	clear(b.remappedFrom)
	b.pendingCover.sector = b.coverEnd
}
