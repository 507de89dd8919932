package order

import "sort"

// Queue holds values in order of their keys, for values that come nearly
// in order: a value usually goes at the end or a few before it; otherwise
// a binary search finds its place; the (short) tail shifts. Values leave from the
// front.
type Queue[T any] struct {
	keys []int64
	vals []T
	head int
}

// Len is how many values the queue holds.
func (q *Queue[T]) Len() int { return len(q.keys) - q.head }

// MinKey is the front's key; the queue must not be empty.
func (q *Queue[T]) MinKey() int64 { return q.keys[q.head] }

// Front is the value with the smallest key, in place until Drop; the queue
// must not be empty.
func (q *Queue[T]) Front() *T { return &q.vals[q.head] }

// nearTail is how many of the last keys Push scans before it searches.
const nearTail = 8

// Push adds a copy of *v with key k, after those with the same key.
func (q *Queue[T]) Push(k int64, v *T) {
	n := len(q.keys)
	if n == q.head || q.keys[n-1] <= k {
		q.keys = append(q.keys, k)
		q.vals = append(q.vals, *v)
		return
	}
	// Its place is the first key greater than k, most often among the last
	// few: look there first, then search the rest.
	var i int
	if near := max(q.head, n-nearTail); q.keys[near] <= k {
		for i = n; q.keys[i-1] > k; i-- {
		}
	} else {
		i = q.head + sort.Search(near-q.head, func(j int) bool { return q.keys[q.head+j] > k })
	}
	var zero T
	q.keys = append(q.keys, 0)
	q.vals = append(q.vals, zero)
	copy(q.keys[i+1:], q.keys[i:n])
	copy(q.vals[i+1:], q.vals[i:n])
	q.keys[i], q.vals[i] = k, *v
}

// Drop removes the front. The slots it leaves keep their values until the
// live ones move to the front, once they are the smaller part: memory is
// that of the most held at once.
func (q *Queue[T]) Drop() {
	q.head++
	switch {
	case q.head == len(q.keys):
		q.keys, q.vals, q.head = q.keys[:0], q.vals[:0], 0
	case q.head >= 1024 && q.head >= len(q.keys)/2:
		n := copy(q.keys, q.keys[q.head:])
		copy(q.vals, q.vals[q.head:])
		q.keys, q.vals, q.head = q.keys[:n], q.vals[:n], 0
	}
}
