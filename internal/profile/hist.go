package profile

import (
	"math"
	"math/bits"

	"gonum.org/v1/gonum/stat"
)

// logHist counts non-negative integers in log-linear buckets: exact below
// 128, then 64 sub-buckets per power of two (relative error under 1.6%).
// Memory is fixed; min and max are exact.
type logHist struct {
	counts   []int64
	n        int64
	sum      float64
	min, max int64
}

const subBits = 6

func bucketOf(v int64) int {
	if v < 1<<(subBits+1) {
		return int(v)
	}
	exp := bits.Len64(uint64(v)) - subBits - 1
	return (exp+1)<<subBits + int(uint64(v)>>uint(exp)) - 1<<subBits
}

// bucketMid is a representative value of bucket i.
func bucketMid(i int) float64 {
	if i < 1<<(subBits+1) {
		return float64(i)
	}
	exp := i>>subBits - 1
	lo := uint64(i-(exp+1)<<subBits+1<<subBits) << uint(exp)
	return float64(lo) + float64(uint64(1)<<uint(exp)-1)/2
}

func (h *logHist) add(v int64) {
	if v < 0 {
		v = 0
	}
	i := bucketOf(v)
	if i >= len(h.counts) {
		n := make([]int64, i+1+16)
		copy(n, h.counts)
		h.counts = n
	}
	h.counts[i]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

func (h logHist) clone() logHist {
	h.counts = append([]int64(nil), h.counts...)
	return h
}

func (h *logHist) merge(o *logHist) {
	if o.n == 0 {
		return
	}
	if len(o.counts) > len(h.counts) {
		n := make([]int64, len(o.counts))
		copy(n, h.counts)
		h.counts = n
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// quantile returns the q-quantile (0..1): the empirical quantile of the
// bucket midpoints weighted by their counts, clamped to the exact min and
// max.
func (h *logHist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	mids, counts := make([]float64, 0, len(h.counts)), make([]float64, 0, len(h.counts))
	for i, c := range h.counts {
		if c > 0 { // an empty first bucket would satisfy q = 0
			mids, counts = append(mids, bucketMid(i)), append(counts, float64(c))
		}
	}
	v := stat.Quantile(q, stat.Empirical, mids, counts)
	return math.Min(math.Max(v, float64(h.min)), float64(h.max))
}

func (h *logHist) mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Dist summarises a distribution. Units are in the field's name where it is
// used (latency_us, idle_gap_us, ...).
type Dist struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
}

func (h *logHist) dist(scale float64) Dist {
	if h.n == 0 {
		return Dist{}
	}
	return Dist{
		Count: h.n,
		Mean:  round3(h.mean() / scale),
		Min:   round3(float64(h.min) / scale),
		P50:   round3(h.quantile(0.50) / scale),
		P90:   round3(h.quantile(0.90) / scale),
		P99:   round3(h.quantile(0.99) / scale),
		P999:  round3(h.quantile(0.999) / scale),
		Max:   round3(float64(h.max) / scale),
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
