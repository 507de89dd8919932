package profile

import (
	"math"
	"testing"
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
