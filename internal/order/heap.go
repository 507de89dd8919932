package order

// Heap is a binary min-heap of values by key.
type Heap[T any] struct {
	keys []int64
	vals []T
}

// Len is how many values the heap holds.
func (h *Heap[T]) Len() int { return len(h.keys) }

// MinKey is the smallest key; the heap must not be empty.
func (h *Heap[T]) MinKey() int64 { return h.keys[0] }

// Push adds v with key k.
func (h *Heap[T]) Push(k int64, v T) {
	h.keys = append(h.keys, k)
	h.vals = append(h.vals, v)
	i := len(h.keys) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.keys[p] <= k {
			break
		}
		h.keys[i], h.vals[i] = h.keys[p], h.vals[p]
		i = p
	}
	h.keys[i], h.vals[i] = k, v
}

// Pop removes the value with the smallest key and returns both; the heap
// must not be empty.
func (h *Heap[T]) Pop() (int64, T) {
	k0, v0 := h.keys[0], h.vals[0]
	n := len(h.keys) - 1
	k, v := h.keys[n], h.vals[n]
	h.keys, h.vals = h.keys[:n], h.vals[:n]
	if n > 0 {
		i := 0
		for {
			c := 2*i + 1
			if c >= n {
				break
			}
			if c+1 < n && h.keys[c+1] < h.keys[c] {
				c++
			}
			if k <= h.keys[c] {
				break
			}
			h.keys[i], h.vals[i] = h.keys[c], h.vals[c]
			i = c
		}
		h.keys[i], h.vals[i] = k, v
	}
	return k0, v0
}

// Clone is a heap of the same values that shares nothing with h.
func (h *Heap[T]) Clone() Heap[T] {
	return Heap[T]{keys: append([]int64(nil), h.keys...), vals: append([]T(nil), h.vals...)}
}
