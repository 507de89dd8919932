package profile

import (
	"container/heap"

	"github.com/ioshape/ioshape/internal/event"
)

// reorder re-sorts events by a time key. Tracers emit an I/O when it
// completes, and per-CPU buffers arrive out of time order; an event whose
// key is older than the newest completion seen minus the window can no
// longer be overtaken, so it is released. Memory is the events of one
// window. Anything later than that is released at once and counted.
type reorder struct {
	key       func(*event.Event) int64
	window    int64
	watermark int64
	released  int64 // key of the last released event
	started   bool
	late      int64
	h         keyHeap
	slab      []event.Event
	free      []int32
	emit      func(*event.Event)
}

func newReorder(window int64, key func(*event.Event) int64, emit func(*event.Event)) *reorder {
	return &reorder{key: key, window: window, emit: emit}
}

func (r *reorder) push(e *event.Event) {
	k := r.key(e)
	if r.started && k < r.released {
		r.late++
		r.emit(e)
		return
	}
	var i int32
	if n := len(r.free); n > 0 {
		i = r.free[n-1]
		r.free = r.free[:n-1]
		r.slab[i] = *e
	} else {
		i = int32(len(r.slab))
		r.slab = append(r.slab, *e)
	}
	heap.Push(&r.h, keyed{k, i})
	if e.End > r.watermark {
		r.watermark = e.End
	}
	for len(r.h) > 0 && r.h[0].key < r.watermark-r.window {
		r.pop()
	}
}

func (r *reorder) pop() {
	top := heap.Pop(&r.h).(keyed)
	r.released, r.started = top.key, true
	r.emit(&r.slab[top.idx])
	r.slab[top.idx].Comm = ""
	r.free = append(r.free, top.idx)
}

func (r *reorder) flush() {
	for len(r.h) > 0 {
		r.pop()
	}
}

type keyed struct {
	key int64
	idx int32
}

type keyHeap []keyed

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i].key < h[j].key }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(keyed)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
