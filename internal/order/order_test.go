package order

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// The heap and the queue give back what they were given, in key order;
// the queue keeps values of one key in the order they came, whether they
// come in order, nearly (as a tracer's completions) or shuffled.
func TestInKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spread := range []int64{0, 50, 1 << 40} {
		type kv struct{ k, v int64 }
		var in []kv
		for i := range int64(5000) {
			in = append(in, kv{i + rng.Int64N(spread+1) - spread/2, i})
		}
		want := append([]kv(nil), in...)
		sort.SliceStable(want, func(i, j int) bool { return want[i].k < want[j].k })
		var h Heap[int64]
		var q Queue[int64]
		for i, x := range in {
			h.Push(x.k, x.v)
			q.Push(x.k, &in[i].v)
			if i%7 == 6 { // take some out along the way
				k, v := h.Pop()
				h.Push(k, v)
			}
		}
		c := h.Clone()
		for i, w := range want {
			k, _ := h.Pop()
			ck, _ := c.Pop()
			if k != w.k || ck != w.k || q.MinKey() != w.k || *q.Front() != w.v {
				t.Fatalf("spread %d, #%d: heap %d, clone %d, queue %d %d; want %d %d", spread, i, k, ck, q.MinKey(), *q.Front(), w.k, w.v)
			}
			q.Drop()
		}
		if h.Len() != 0 || c.Len() != 0 || q.Len() != 0 {
			t.Fatalf("left: %d %d %d", h.Len(), c.Len(), q.Len())
		}
	}
}

// FloorDiv rounds towards minus infinity, either sign.
func TestFloorDiv(t *testing.T) {
	for _, c := range [][3]int64{{7, 2, 3}, {-7, 2, -4}, {-8, 2, -4}, {0, 5, 0}, {-1, 5, -1}, {7, -2, -4}, {-7, -2, 3}} {
		if got := FloorDiv(c[0], c[1]); got != c[2] {
			t.Errorf("FloorDiv(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
