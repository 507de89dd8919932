package profile

import "github.com/ioshape/ioshape/internal/order"

// reorder re-sorts items by a time key. Tracers emit an I/O when it
// completes, and per-CPU buffers arrive out of time order; an item whose
// key is older than the newest completion seen minus the window can no
// longer be overtaken, so it is released. Anything later than that is
// released at once and counted.
//
// The window adapts: twice the largest lateness seen so far (how far an
// item's key trails the newest completion), at least minWindow and at most
// maxWindow. Memory is the items of one window.
type reorder[T any] struct {
	window    int64
	maxWindow int64
	watermark int64
	released  int64 // key of the last released item
	started   bool
	late      int64
	held      order.Queue[T]
	emit      func(*T)
}

const minWindow = int64(20e6) // 20 ms

// maxHeld bounds the items held by count as well as by time: a capture
// whose events share one timestamp (iosnoop without times prints 0;
// Tencent's times are whole seconds) never moves the watermark past them,
// and would otherwise be held whole. A tracer's items are late by
// milliseconds: this many is a third of a second of I/O at 200,000 IOPS.
const maxHeld = 1 << 16

func newReorder[T any](maxWindow int64, emit func(*T)) *reorder[T] {
	return &reorder[T]{window: min(minWindow, maxWindow), maxWindow: maxWindow, emit: emit}
}

// push adds an item with its key and the completion time it proves has
// passed.
func (r *reorder[T]) push(key, end int64, v *T) {
	if lateness := r.watermark - key; 2*lateness > r.window && r.window < r.maxWindow {
		r.window = min(2*lateness, r.maxWindow)
	}
	if r.started && key < r.released {
		r.late++
		r.emit(v)
		return
	}
	r.held.Push(key, v)
	if end > r.watermark {
		r.watermark = end
	}
	limit := r.watermark - r.window
	for r.held.Len() > 0 && (r.held.MinKey() < limit || r.held.Len() > maxHeld) {
		r.pop()
	}
}

func (r *reorder[T]) pop() {
	r.released, r.started = r.held.MinKey(), true
	r.emit(r.held.Front())
	r.held.Drop()
}

func (r *reorder[T]) flush() {
	for r.held.Len() > 0 {
		r.pop()
	}
}
