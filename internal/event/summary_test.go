package event

import "testing"

// Every value falls in the bucket whose floor is at most it and whose
// successor's floor is above it, and the sizes benchmarks use start a
// bucket of their own.
func TestHistBuckets(t *testing.T) {
	for v := int64(0); v < 1<<20; v += 1 + v/97 {
		i := HistBucket(v)
		if HistFloor(i) > v || HistFloor(i+1) <= v {
			t.Fatalf("%d in bucket %d [%d, %d)", v, i, HistFloor(i), HistFloor(i+1))
		}
		if m := HistMid(i); m < float64(HistFloor(i)) || m >= float64(HistFloor(i+1)) {
			t.Fatalf("bucket %d: middle %v outside [%d, %d)", i, m, HistFloor(i), HistFloor(i+1))
		}
	}
	for _, v := range []int64{1, 4096, 8192, 12288, 16384, 65536, 131072, 524288, 1 << 20, 1 << 30} {
		if f := HistFloor(HistBucket(v)); f != v {
			t.Errorf("%d falls in the bucket of %d", v, f)
		}
	}
	// The kernel's arrays: sizes up to 4 GiB in 128 buckets, times up to
	// 18 minutes in 160, depths up to 65535 in 64.
	for _, c := range []struct {
		v int64
		n int
	}{{1<<32 - 1, 128}, {1100e9, 160}, {65535, 64}} {
		if b := HistBucket(c.v); b >= c.n {
			t.Errorf("%d needs bucket %d, beyond the kernel's %d", c.v, b, c.n)
		}
	}
}
