package profile

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestLogHistBuckets(t *testing.T) {
	prev := -1
	for v := int64(0); v < 1<<22; v += 1 + v/97 {
		b := bucketOf(v)
		if b < prev {
			t.Fatalf("bucketOf(%d) = %d < previous %d", v, b, prev)
		}
		prev = b
		mid := bucketMid(b)
		if math.Abs(mid-float64(v)) > float64(v)*0.016+0.5 {
			t.Fatalf("bucketMid(bucketOf(%d)) = %v: error over 1.6%%", v, mid)
		}
	}
}

func TestLogHistQuantiles(t *testing.T) {
	var h logHist
	for v := int64(1); v <= 10000; v++ {
		h.add(v * 1000)
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 5e6}, {0.9, 9e6}, {0.99, 9.9e6}} {
		got := h.quantile(c.q)
		if math.Abs(got-c.want)/c.want > 0.016 {
			t.Errorf("quantile(%v) = %v, want %v ±1.6%%", c.q, got, c.want)
		}
	}
	if h.quantile(1) != 1e7 || h.min != 1000 {
		t.Errorf("max/min: %v %v", h.quantile(1), h.min)
	}
	var one logHist
	one.add(4096)
	if one.quantile(0.5) != 4096 {
		t.Errorf("single value: %v", one.quantile(0.5))
	}
}

// median selects what sorting and taking the empirical median gives, on
// sizes odd and even, with ties, and on sorted and reversed input.
func TestMedianSelectsAsSortDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n < 400; n += 7 {
		for _, kind := range []string{"random", "ties", "sorted", "reversed"} {
			x := make([]float64, n)
			for i := range x {
				switch kind {
				case "random":
					x[i] = rng.NormFloat64() * 1e6
				case "ties":
					x[i] = float64(rng.IntN(5))
				case "sorted":
					x[i] = float64(i)
				case "reversed":
					x[i] = float64(n - i)
				}
			}
			sorted := append([]float64(nil), x...)
			sort.Float64s(sorted)
			want := stat.Quantile(0.5, stat.Empirical, sorted, nil)
			if got := median(x); got != want {
				t.Fatalf("n=%d %s: median %v, want %v", n, kind, got, want)
			}
		}
	}
}
