package profile

// minHeap is a binary min-heap on an int64 key with a payload, written out
// rather than through container/heap: the profile pushes and pops every
// event, and interface calls there cost more than the comparisons.
type minHeap[T any] struct {
	keys []int64
	vals []T
}

func (h *minHeap[T]) len() int { return len(h.keys) }

func (h *minHeap[T]) minKey() int64 { return h.keys[0] }

func (h *minHeap[T]) push(k int64, v T) {
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

func (h *minHeap[T]) pop() (int64, T) {
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
