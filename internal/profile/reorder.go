package profile

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
	// keys and items, sorted by key from head on. Tracer output is nearly
	// sorted, so an item usually goes at the end; otherwise a binary search
	// finds its place and the (short) tail shifts.
	keys  []int64
	items []T
	head  int
	emit  func(*T)
}

const minWindow = int64(20e6) // 20 ms

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
	n := len(r.keys)
	if n == r.head || r.keys[n-1] <= key {
		r.keys = append(r.keys, key)
		r.items = append(r.items, *v)
	} else {
		lo, hi := r.head, n // first index with a key greater than key
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if r.keys[m] <= key {
				lo = m + 1
			} else {
				hi = m
			}
		}
		var zero T
		r.keys = append(r.keys, 0)
		r.items = append(r.items, zero)
		copy(r.keys[lo+1:], r.keys[lo:n])
		copy(r.items[lo+1:], r.items[lo:n])
		r.keys[lo], r.items[lo] = key, *v
	}
	if end > r.watermark {
		r.watermark = end
	}
	limit := r.watermark - r.window
	for r.head < len(r.keys) && r.keys[r.head] < limit {
		r.pop()
	}
	r.compact()
}

func (r *reorder[T]) pop() {
	r.released, r.started = r.keys[r.head], true
	r.emit(&r.items[r.head])
	r.head++ // the slot keeps its item until overwritten: memory stays one window's
}

// compact moves the live items to the front once the released ones are
// the larger part, so memory stays that of one window.
func (r *reorder[T]) compact() {
	if r.head < 1024 || r.head < len(r.keys)/2 {
		return
	}
	n := copy(r.keys, r.keys[r.head:])
	copy(r.items, r.items[r.head:])
	r.keys, r.items, r.head = r.keys[:n], r.items[:n], 0
}

func (r *reorder[T]) flush() {
	for r.head < len(r.keys) {
		r.pop()
	}
	r.keys, r.items, r.head = r.keys[:0], r.items[:0], 0
}
