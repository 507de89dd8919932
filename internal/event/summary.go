package event

import "math/bits"

// MetricDetail is what a summary trace (record --summary) cannot show:
// each I/O on its own — the time between arrivals, seek distances, the
// size–latency fit, the device's own queue, offsets over time, waits.
const MetricDetail = "per_io_detail"

// Summary is one second of one process's I/O in one direction on one
// device and layer, as `record --summary` keeps it: counts and histograms
// made in the kernel, no I/O of its own. The histograms are sparse lists
// of {bucket, count} in HistBucket's buckets.
type Summary struct {
	// Start is the second's beginning, ns from the recording's start (the
	// first second may begin before it). The I/Os completed in it.
	Start  int64  `json:"start"`
	Layer  Layer  `json:"layer"`
	Op     Op     `json:"op"`
	Call   Call   `json:"call,omitempty"`
	Dev    Dev    `json:"dev"`
	Pid    uint32 `json:"pid"`
	Comm   string `json:"comm"`
	Kernel bool   `json:"kernel,omitempty"` // block I/O a kernel thread issued
	// CopySource marks the read half of a copy (as FlagCopySource).
	CopySource bool `json:"copy_source,omitempty"`
	// First is the earliest arrival and Last the latest completion of the
	// row's I/O (ns, as Start).
	First   int64 `json:"first"`
	Last    int64 `json:"last"`
	Count   int64 `json:"count"`
	Bytes   int64 `json:"bytes"`    // transferred
	SizeSum int64 `json:"size_sum"` // asked for
	Errors  int64 `json:"errors,omitempty"`
	// Located I/Os had a known offset; Sequential of them started where
	// their stream's previous I/O ended.
	Located    int64 `json:"located,omitempty"`
	Sequential int64 `json:"sequential,omitempty"`
	LatencyNs  int64 `json:"latency_ns"`
	// IdleNs sums the idle gaps (nothing in flight on the device's layer)
	// these I/Os arrived after; BusyNs the busy periods they ended.
	IdleNs int64       `json:"idle_ns,omitempty"`
	BusyNs int64       `json:"busy_ns,omitempty"`
	Size   []HistCount `json:"size,omitempty"`    // bytes asked for
	Lat    []HistCount `json:"latency,omitempty"` // ns
	Gap    []HistCount `json:"gap,omitempty"`     // ns
	// Depth is the depth each arrival saw on its device's layer, itself
	// included (a copy's read half is not counted).
	Depth []HistCount `json:"depth,omitempty"`
}

// SummarySeconds is the length of a summary row.
const SummarySeconds = 1e9

// HistCount is a histogram bucket's index and count.
type HistCount [2]int64

// HistBucket is the bucket of v in the summaries' log-linear histograms:
// exact below 8, then four buckets per power of two, so that 4 KiB, 12 KiB
// and 1 MiB each start one.
func HistBucket(v int64) int {
	if v < 8 {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 3
	return 4*e + int(uint64(v)>>uint(e))
}

// HistFloor is the least value of bucket i.
func HistFloor(i int) int64 {
	if i < 8 {
		return int64(i)
	}
	return int64(4+i%4) << uint(i/4-1)
}

// HistMid is a value representative of bucket i: the middle of its range.
func HistMid(i int) float64 {
	lo, hi := HistFloor(i), HistFloor(i+1)
	if hi-lo <= 1 {
		return float64(lo)
	}
	return float64(lo) + float64(hi-1-lo)/2
}
