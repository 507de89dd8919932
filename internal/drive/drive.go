package drive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/interp"
	"gonum.org/v1/gonum/stat"
)

// Spec is a drive as `ioshape bench` measured it: how it serves each
// shape of request — read or write, sequential or random, a size, a
// number of requests in flight. Documented in docs/drive-profile.md.
type Spec struct {
	Name   string `json:"name"`
	Host   string `json:"host,omitempty"`
	Dir    string `json:"dir,omitempty"`    // where it was measured
	Device string `json:"device,omitempty"` // the block device under Dir
	FSType string `json:"fstype,omitempty"`
	// FSBytes is the size of the file system under Dir: no request on it
	// lies farther than that from the last, so no seek is longer (0:
	// unknown).
	FSBytes int64 `json:"fs_bytes,omitempty"`
	// Cgroup is the cgroup whose I/O limits the bench ran under (blkio or
	// io; empty: the root).
	Cgroup string `json:"cgroup,omitempty"`
	// CgroupV1: Cgroup is cgroup v1's blkio controller, whose limits do
	// not reach buffered writeback (the flusher threads write from the
	// root cgroup).
	CgroupV1 bool `json:"cgroup_v1,omitempty"`
	// ReadaheadKB is the disk's readahead window (read_ahead_kb) and
	// MaxRequestKB the largest request it takes (max_sectors_kb); 0 if
	// unknown. A buffered sequential read reaches another drive in that
	// drive's chunks, window/request of them in flight, not the
	// recording's.
	ReadaheadKB  int `json:"readahead_kb,omitempty"`
	MaxRequestKB int `json:"max_request_kb,omitempty"`
	// CacheReadCPU is the CPU time (µs per MiB) a buffered sequential read
	// from a cold cache spends: the page cache's work and the copy, which a
	// throttled or slow drive makes several times a fast one's (the copy
	// after each wait starts cold). Nil: not measured.
	CacheReadCPU *float64 `json:"cache_read_cpu_us_per_mib,omitempty"`
	// WaitUs is what waiting for one read costs beside the drive's own
	// time: fio's latency for a random 4 KiB read at queue depth 1 less
	// the device's (its sysfs counters) — the submission, the sleep, the
	// wake-up. A trace's block requests show the device's time; the
	// profile's latencies hold this too. Nil: not measured.
	WaitUs *float64 `json:"wait_us,omitempty"`
	// WakeUs is the computation each wait adds to the waiter (µs per
	// read the device served): small files read from a cold cache keep
	// their reader on a CPU, or runnable, this much longer than from a
	// warm one (a bio-based device's own time not counted) — it runs cold
	// after each wait, and a drive whose driver keeps the CPUs busy (a USB
	// bridge, a disk) makes it colder. Nil: not measured.
	WakeUs *float64 `json:"wake_us,omitempty"`
	// IdleWake is what the host's computation costs after its CPUs idled
	// (a process started right after a wait for a disk: the CPUs' caches
	// and idle states, a virtual machine's halted CPUs). A property of the
	// machine bench ran on, not of the drive — but a slow drive is what
	// idles them. Nil: not measured.
	IdleWake *IdleWake `json:"idle_wake,omitempty"`
	// SyncWrite is 4 KiB direct writes one after another, each followed
	// by fdatasync, as a journal commits (nil: not measured). FlushUs is
	// the fdatasync's latency — the drive's cache flush with nothing left
	// to write; WriteUs the write's, which comes after a pause where the
	// last one ended: a disk without a write cache has to wait for the
	// sector to come round again.
	SyncWrite *SyncWrite `json:"sync_write,omitempty"`
	// Content is what data that compresses costs the drive beyond random
	// bytes: zram compresses each page it stores (nil: no difference
	// measured, or not measured).
	Content *ContentCost `json:"content,omitempty"`
	// Synchronous: a bio-based device (zram, brd, pmem) serves each request
	// on the submitter's CPU, so nothing of its time runs alongside the
	// reader's computation.
	Synchronous bool      `json:"synchronous,omitempty"`
	Date        time.Time `json:"date"`
	Tool        string    `json:"tool"` // "fio-3.33", or where coarse numbers came from
	// Buffered: the file system refused O_DIRECT, so the tests ran buffered
	// with the page cache dropped before each.
	Buffered bool `json:"buffered,omitempty"`
	// Coarse: a few headline numbers, not a grid (AmorphousDiskMark's four).
	Coarse bool    `json:"coarse,omitempty"`
	Points []Point `json:"points"`
	// Spans are random 4 KiB reads, one at a time, within regions of
	// several sizes: how the latency grows with the distance the drive
	// moves between requests (a disk's seek: short-stroke against full
	// stroke). SpanBytes is the region the grid's random tests covered.
	// Empty: not measured (the latency taken as independent of position).
	Spans     []Span `json:"spans,omitempty"`
	SpanBytes int64  `json:"span_bytes,omitempty"`
	// WriteSpans are the same for random 4 KiB writes: a disk's read cache
	// serves reads near the last one, never a write, which waits for its
	// sector to come round.
	WriteSpans []Span `json:"write_spans,omitempty"`
	// Provenance is where a profile built from published figures came
	// from (nil: measured by bench).
	Provenance *Provenance `json:"provenance,omitempty"`
}

// IdleWake is the extra time a short task (a process started and
// waited for: TaskUs when the machine was busy) takes after the machine
// idled for each of several lengths (Spec.IdleWake); and a longer one
// (LongTaskUs: a shell starting three: 0 if not measured), whose extra
// says how the extra grows with the computation that runs cold.
type IdleWake struct {
	TaskUs     float64     `json:"task_us"`
	LongTaskUs float64     `json:"long_task_us,omitempty"`
	Points     []IdlePoint `json:"points"`
}

// IdlePoint is each task's extra time after an idle of IdleUs.
type IdlePoint struct {
	IdleUs      float64 `json:"idle_us"`
	ExtraUs     float64 `json:"extra_us"`
	LongExtraUs float64 `json:"long_extra_us,omitempty"`
}

// Extra is the short task's extra time after an idle of idleUs: linear
// between the points (none after no idle), the longest's beyond it.
func (w *IdleWake) Extra(idleUs float64) float64 {
	return w.interpolate(idleUs, func(pt IdlePoint) float64 { return pt.ExtraUs })
}

func (w *IdleWake) interpolate(idleUs float64, extra func(IdlePoint) float64) float64 {
	if w == nil || !(idleUs > 0) || len(w.Points) == 0 {
		return 0
	}
	lastUs, lastExtra := 0.0, 0.0
	for _, pt := range w.Points { // by idle, ascending (Validate)
		if idleUs <= pt.IdleUs {
			return lastExtra + (extra(pt)-lastExtra)*(idleUs-lastUs)/(pt.IdleUs-lastUs)
		}
		lastUs, lastExtra = pt.IdleUs, extra(pt)
	}
	return lastExtra
}

// ExtraFor is the extra time of stretchUs of computation (as it runs
// warm) after an idle of idleUs. Up to the short task's length, its share
// of the short task's extra. Beyond it the extra grows as the two tasks'
// extras say, by a power of the length between 0 (no more: what the
// short task paid is all there is) and 1 (in proportion), up to
// longReach times the long task: a shell starting a program after 57 ms
// idle paid 0.77 ms where true alone paid 0.57, three trues 1.15, ten
// 1.49 (on this project's VM). Without the long task, the short task's
// extra for any longer stretch.
func (w *IdleWake) ExtraFor(idleUs, stretchUs float64) float64 {
	short := w.Extra(idleUs)
	if short <= 0 || !(stretchUs > 0) {
		return 0
	}
	if stretchUs <= w.TaskUs {
		return short * stretchUs / w.TaskUs
	}
	long := w.interpolate(idleUs, func(pt IdlePoint) float64 { return pt.LongExtraUs })
	if !(w.LongTaskUs > w.TaskUs) || long <= short {
		return short
	}
	k := min(1, math.Log(long/short)/math.Log(w.LongTaskUs/w.TaskUs))
	return short * math.Pow(min(stretchUs, longReach*w.LongTaskUs)/w.TaskUs, k)
}

// longReach is how far past the long task ExtraFor lets the extra grow.
const longReach = 4

func (w *IdleWake) validate() error {
	if !(w.TaskUs > 0 && w.TaskUs < 1e9) {
		return errors.New("drive profile: the idle wake-up's task has no time")
	}
	if !(w.LongTaskUs >= 0 && w.LongTaskUs < 1e9) {
		return errors.New("drive profile: the idle wake-up's long task is out of range")
	}
	last := 0.0
	for _, pt := range w.Points {
		if !(pt.IdleUs > last && pt.IdleUs < 1e9 && pt.ExtraUs >= 0 && pt.ExtraUs < 1e9 && pt.LongExtraUs >= 0 && pt.LongExtraUs < 1e9) {
			return errors.New("drive profile: the idle wake-up's points are not by idle, ascending, or out of range")
		}
		last = pt.IdleUs
	}
	return nil
}

// SyncWrite is a drive's write-and-flush cycle (Spec.SyncWrite).
type SyncWrite struct {
	WriteUs float64 `json:"write_us"`
	FlushUs float64 `json:"flush_us"`
}

// Span is the mean latency of random reads within a region of Bytes.
type Span struct {
	Bytes int64   `json:"bytes"`
	LatUs float64 `json:"lat_mean_us"`
	// LatLowUs and LatHighUs bound a latency the figures leave open (0:
	// measured).
	LatLowUs  float64 `json:"lat_low_us,omitempty"`
	LatHighUs float64 `json:"lat_high_us,omitempty"`
}

// Point is one measured shape.
type Point struct {
	Op        string  `json:"op"`     // read or write
	Access    string  `json:"access"` // seq or rand
	SizeBytes int64   `json:"size_bytes"`
	Depth     int     `json:"depth"` // requests in flight per job
	Jobs      int     `json:"jobs"`
	IOPS      float64 `json:"iops"`
	MBs       float64 `json:"mb_s"`        // 10⁶ bytes per second
	LatUs     float64 `json:"lat_mean_us"` // submission to completion, mean
	LatP99Us  float64 `json:"lat_p99_us,omitempty"`
	// LatLowUs and LatHighUs bound a latency a coarse profile's figures
	// leave open (0: measured; Bound takes BenchUncertainty).
	LatLowUs  float64 `json:"lat_low_us,omitempty"`
	LatHighUs float64 `json:"lat_high_us,omitempty"`
}

// InFlight is how many requests the point kept outstanding.
func (p Point) InFlight() int { return p.Depth * max(p.Jobs, 1) }

// Read reads a profile (JSON), checking it is usable.
func Read(r io.Reader) (*Spec, error) {
	var p Spec
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not a drive profile: %w", err)
	}
	return &p, p.Validate()
}

// Validate reports a profile that cannot predict anything.
func (p *Spec) Validate() error {
	if len(p.Points) == 0 {
		return errors.New("the drive profile has no measurements")
	}
	for _, pt := range p.Points {
		switch {
		case pt.Op != "read" && pt.Op != "write", pt.Access != "seq" && pt.Access != "rand":
			return fmt.Errorf("drive profile: a point is %s %s (want read or write, seq or rand)", pt.Op, pt.Access)
		case pt.SizeBytes <= 0, pt.Depth <= 0, !(pt.LatUs > 0), math.IsInf(pt.LatUs, 0):
			return fmt.Errorf("drive profile: a %s %s point has no size, depth or latency", pt.Op, pt.Access)
		}
	}
	for _, v := range []*float64{p.WaitUs, p.WakeUs, p.CacheReadCPU} {
		if v != nil && !(*v >= 0 && *v < 1e9) {
			return errors.New("drive profile: a wait or CPU cost is negative or out of range")
		}
	}
	if c := p.Content; c != nil {
		if !(c.TextSaved > 0 && c.TextSaved <= 1) || !(math.Abs(c.ReadUsPerMiB) < 1e9) || !(math.Abs(c.WriteUsPerMiB) < 1e9) {
			return errors.New("drive profile: the content cost is out of range")
		}
	}
	if p.IdleWake != nil {
		return p.IdleWake.validate()
	}
	return nil
}

// ContentCost is what bench's text-like data (package content: about half
// of it saved by compression) took beyond random bytes of the same size,
// written and read back direct in 128 KiB requests, in µs per MiB —
// negative where the drive is faster for it (a controller that stores
// less).
type ContentCost struct {
	TextSaved     float64 `json:"text_saved"` // the share of the text compression saves
	ReadUsPerMiB  float64 `json:"read_us_per_mib"`
	WriteUsPerMiB float64 `json:"write_us_per_mib"`
}

// ExtraUs is what data of which compression saves the share saved costs
// the drive beyond random bytes, for size bytes: in proportion to the
// share, up to the text's (data that compresses further is no slower to
// compress).
func (c *ContentCost) ExtraUs(write bool, size int64, saved float64) float64 {
	if c == nil || saved <= 0 || c.TextSaved <= 0 {
		return 0
	}
	per := c.ReadUsPerMiB
	if write {
		per = c.WriteUsPerMiB
	}
	return per * float64(size) / (1 << 20) * min(saved/c.TextSaved, 1)
}

// Coarse builds a profile from AmorphousDiskMark's four numbers (MB/s for
// SEQ1M QD8, SEQ1M QD1, RND4K QD64, RND4K QD1), for reads and, if given,
// writes, by Build's rules.
func Coarse(name string, read, write []float64) (*Spec, error) {
	prov := Provenance{Tool: "AmorphousDiskMark", TestSize: "1 GiB", TestBytes: 1 << 30}
	shapes := []struct {
		access string
		size   int64
		depth  int
	}{{"seq", 1 << 20, 8}, {"seq", 1 << 20, 1}, {"rand", 4096, 64}, {"rand", 4096, 1}}
	for k, vals := range [][]float64{read, write} {
		if len(vals) == 0 {
			continue
		}
		if len(vals) != 4 {
			return nil, errors.New("give the four AmorphousDiskMark numbers in MB/s: SEQ1M QD8, SEQ1M QD1, RND4K QD64, RND4K QD1")
		}
		for i, v := range vals {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, errors.New("AmorphousDiskMark numbers must be positive MB/s figures")
			}
			s := shapes[i]
			prov.Tests = append(prov.Tests, Test{Op: []string{"read", "write"}[k], Access: s.access, SizeBytes: s.size, Depth: s.depth, Threads: 1, MBs: v})
		}
	}
	return Build(name, prov)
}

// ServiceUs is how long the drive takes to complete one request of this
// shape when inflight requests are outstanding (the request's own
// included): the measured mean latency, interpolated piecewise linearly on
// size, and its log on log₂ in-flight count. Beyond the largest depth measured,
// the drive is taken as saturated (latency grows with the queue, by
// Little's law); below the grid's sizes, as at its smallest.
func (p *Spec) ServiceUs(op, access string, size int64, inflight float64) float64 {
	pts := p.shape(op, access)
	if len(pts) == 0 {
		return math.NaN()
	}
	inflight = math.Max(inflight, 1)
	// Latency at each measured depth, at this size.
	byDepth := map[int][]Point{}
	for _, pt := range pts {
		byDepth[pt.InFlight()] = append(byDepth[pt.InFlight()], pt)
	}
	depths := make([]int, 0, len(byDepth))
	for d := range byDepth {
		depths = append(depths, d)
	}
	sort.Ints(depths)
	// Between measured depths the latency goes as a power of the depth:
	// constant where the drive has room (IOPS grow with the depth),
	// proportional where it is saturated (Little's law) — a straight
	// line between the logs. Linear in the latency, 1 MiB reads eight at
	// a time behind a 40 MB/s throttle came out at 24.5 MB/s between 43.6
	// at four and 40 at 32.
	xs, ys := make([]float64, 0, len(depths)), make([]float64, 0, len(depths))
	for _, d := range depths {
		xs = append(xs, math.Log2(float64(d)))
		ys = append(ys, math.Log(latAtSize(byDepth[d], size)))
	}
	top := depths[len(depths)-1]
	if inflight > float64(top) {
		return math.Exp(ys[len(ys)-1]) * inflight / float64(top)
	}
	return math.Exp(along(xs, ys, math.Log2(inflight)))
}

// StreamUs is the wall time a buffered sequential read of size bytes
// takes on this drive, read through a readahead window of window bytes
// (0: the drive's own, ReadaheadKB; ReadWindow says a reader's): readahead
// fetches a stream in chunks of the window or the largest request,
// whichever is smaller, with two windows' chunks in flight, so the bytes
// go at that shape's rate. NaN if the profile does not say its readahead.
func (p *Spec) StreamUs(size, window int64) float64 {
	if window <= 0 {
		window = int64(p.ReadaheadKB) << 10
	}
	chunk := window
	if p.MaxRequestKB > 0 && int64(p.MaxRequestKB)<<10 < chunk {
		chunk = int64(p.MaxRequestKB) << 10
	}
	if chunk <= 0 {
		return math.NaN()
	}
	// Two windows in flight: the kernel issues the next window when the
	// reader reaches the current one, whose requests are still at the
	// drive on a slow one (cat, dd and cp of 128 MiB on the USB model at
	// 128 and 512 KiB readahead: 1.96–1.98 requests in flight, from the
	// device's own counters).
	inflight := float64(2 * max(window/chunk, 1))
	return p.ServiceUs("read", "seq", chunk, inflight) / inflight * float64(size) / float64(chunk)
}

// ReadWindow is the readahead window (bytes) of a reader on this drive
// whose calls read call bytes each (0: unknown, or a copy's splice, which
// reads in pages), through a file advised as read sequentially
// (POSIX_FADV_SEQUENTIAL, as cp and cat give: twice the drive's window).
// A read larger than the window widens it up to the largest request, as
// Linux's readahead does. On the USB model (128 KiB readahead, 1,280 KiB
// requests), 64 MiB read cold: head -c, dd bs=64K and sendfile 128 KiB
// requests; cp and cat 256 KiB; dd bs=256K 256 KiB, bs=1M 993 KiB; at 512
// KiB readahead, cat 978 KiB, dd bs=256K 508 KiB.
func (p *Spec) ReadWindow(call int64, sequential bool) int64 {
	window := int64(p.ReadaheadKB) << 10
	if sequential {
		window *= 2
	}
	if p.MaxRequestKB > 0 && call > window {
		window = max(window, min(call, int64(p.MaxRequestKB)<<10))
	}
	return window
}

// FaultReadRate is the most bytes a second this drive reads in random
// requests of size bytes (a window read around a fault), at whichever
// depth measured gives the most; 0 if the profile lacks random reads.
func (p *Spec) FaultReadRate(size int64) float64 {
	var best float64
	for _, pt := range p.shape("read", "rand") {
		if r := p.MBs("read", "rand", size, float64(pt.InFlight())); r > best && !math.IsInf(r, 0) {
			best = r
		}
	}
	return best * 1e6 // MBs: bytes a µs
}

// WritebackUs is the wall time sequential writeback of size bytes takes
// on this drive: the flushers queue many requests, which the block layer
// merges up to the largest the disk takes, so the bytes go at the rate of
// that size at the deepest queue measured. NaN if the profile lacks
// writes.
func (p *Spec) WritebackUs(size int64) float64 {
	chunk := int64(1 << 20)
	if p.MaxRequestKB > 0 {
		chunk = int64(p.MaxRequestKB) << 10
	}
	deepest := 1
	for _, pt := range p.shape("write", "seq") {
		deepest = max(deepest, pt.InFlight())
	}
	return p.ServiceUs("write", "seq", chunk, float64(deepest)) / float64(deepest) * float64(size) / float64(chunk)
}

// WritebackEachUs is the wall time a sequential writeback request of
// size bytes takes on this drive when the block layer does not merge it
// further: its share of the deepest queue measured at that size, a
// command's cost and all (the HDD model's 45 KiB writes of small files
// went at 118 a second, not at 41 MB/s), and never less than
// WritebackUs. NaN if the profile lacks writes.
//
// A profile that measured no sequential write as small (a benchmark's
// few numbers, the grid between them modelled: CrystalDiskMark's 1 MiB
// alone) cannot say what a command costs a small one: its bytes go at
// the merged rate.
func (p *Spec) WritebackEachUs(size int64) float64 {
	deepest, smallest := 1, int64(math.MaxInt64)
	for _, pt := range p.shape("write", "seq") {
		deepest, smallest = max(deepest, pt.InFlight()), min(smallest, pt.SizeBytes)
	}
	merged := p.WritebackUs(size)
	if p.Coarse || smallest > size {
		return merged
	}
	return math.Max(p.ServiceUs("write", "seq", size, float64(deepest))/float64(deepest), merged)
}

// shape is the points for an op and access. A coarse profile lacks sizes
// for some: the other access's points stand in, as the nearest measure.
func (p *Spec) shape(op, access string) []Point {
	var same, other []Point
	for _, pt := range p.Points {
		switch {
		case pt.Op != op:
		case pt.Access == access:
			same = append(same, pt)
		default:
			other = append(other, pt)
		}
	}
	if len(same) == 0 {
		return other
	}
	return same
}

// latAtSize interpolates latency on size among points of one depth:
// linearly, as a request's fixed cost plus its bytes at a rate is (on
// log₂ size a bridge's 1 ms + 40 MB/s came out at 9.2 ms for 256 KiB
// between 128 and 512 KiB, not its 7.6, and cp streaming through it 22 %
// slow).
func latAtSize(pts []Point, size int64) float64 {
	sort.Slice(pts, func(i, j int) bool { return pts[i].SizeBytes < pts[j].SizeBytes })
	var xs, ys []float64
	for _, pt := range pts {
		x := float64(pt.SizeBytes)
		if len(xs) > 0 && x == xs[len(xs)-1] {
			ys[len(ys)-1] = (ys[len(ys)-1] + pt.LatUs) / 2
			continue
		}
		xs, ys = append(xs, x), append(ys, pt.LatUs)
	}
	x := float64(max(size, 1))
	if x > xs[len(xs)-1] && len(xs) == 1 {
		// One size measured: beyond it, transfer time grows with size.
		return ys[0] * float64(size) / float64(pts[0].SizeBytes)
	}
	if x > xs[len(xs)-1] {
		// Larger than measured: extend the last segment's transfer rate.
		last := len(xs) - 1
		bytesPerUs := (xs[last] - xs[last-1]) / math.Max(ys[last]-ys[last-1], 1e-9)
		return ys[last] + (x-xs[last])/bytesPerUs
	}
	return along(xs, ys, x)
}

// along interpolates piecewise linearly, clamped at the ends.
func along(xs, ys []float64, x float64) float64 {
	switch {
	case len(xs) == 1 || x <= xs[0]:
		return ys[0]
	case x >= xs[len(xs)-1]:
		return ys[len(ys)-1]
	}
	var pl interp.PiecewiseLinear
	if err := pl.Fit(xs, ys); err != nil {
		return ys[0]
	}
	return pl.Predict(x)
}

// Limits are the most requests and bytes a second the drive took in one
// direction (op), over every shape measured: behind a cgroup's throttle,
// its limits (throttleLimits). A point's own count of requests a second
// is the measure where it has one: the requests in flight over their
// mean latency overstate it where jobs start and stop apart (16 jobs
// behind a 1,500 IOPS throttle: 1,567 counted, 1,856 from the latency).
// 0, 0 if the profile lacks the direction.
func (p *Spec) Limits(op string) (ios, bytes float64) {
	var rates []pointRate
	for _, pt := range p.Points {
		if pt.Op != op || pt.LatUs <= 0 {
			continue
		}
		r := float64(pt.InFlight()) * 1e6 / pt.LatUs
		if pt.IOPS > 0 {
			r = pt.IOPS
		}
		rates = append(rates, pointRate{r, float64(pt.SizeBytes)})
		ios, bytes = max(ios, r), max(bytes, r*float64(pt.SizeBytes))
	}
	if p.Cgroup == "" || ios <= 0 || bytes <= 0 {
		return ios, bytes
	}
	return throttleLimits(rates, ios, bytes)
}

type pointRate struct{ ios, size float64 }

// throttleLimits are a throttle's two limits read from its points, given
// the most any counted (maxIOs, maxBytes): the median requests a second
// of the points small enough that the requests' limit held them, and the
// median bytes a second of those large enough that the bytes' limit did
// (half and twice the size where the two meet). Not the most: a point's
// short run past a throttle counts a slice's burst over the limit (40
// MB/s behind cgroup v1: 39–41 at most depths and sizes, 46–54 at four 512
// KiB–1 MiB requests in flight), and a program's longer work gets the
// limit. A point at under half the most counted was held by the drive
// behind the throttle, not by it, and is left out.
func throttleLimits(rates []pointRate, maxIOs, maxBytes float64) (ios, bytes float64) {
	meet := maxBytes / maxIOs
	var small, large []float64
	for _, r := range rates {
		switch {
		case 2*r.size <= meet && r.ios >= maxIOs/2:
			small = append(small, r.ios)
		case r.size >= 2*meet && r.ios*r.size >= maxBytes/2:
			large = append(large, r.ios*r.size)
		}
	}
	return medianOr(small, maxIOs), medianOr(large, maxBytes)
}

// medianOr is the median of xs (the mean of the middle two), or def if
// there are none. It sorts xs in place.
func medianOr(xs []float64, def float64) float64 {
	if len(xs) == 0 {
		return def
	}
	sort.Float64s(xs)
	return stat.Quantile(0.5, stat.LinInterp, xs, nil)
}

// MBs is the throughput a shape gets at an in-flight count.
func (p *Spec) MBs(op, access string, size int64, inflight float64) float64 {
	return float64(size) * math.Max(inflight, 1) / p.ServiceUs(op, access, size, inflight)
}

// Headline is the number a drive is sold by: SEQ1M at 8 in flight (Q8T1).
func (p *Spec) Headline(op string) float64 { return p.MBs(op, "seq", 1<<20, 8) }

// How much a drive's latency must grow from its shortest span to its
// longest to be taken as depending on position: an SSD's (or zram's)
// spans differ by noise — a few percent, or a microsecond that is a third
// of a RAM disk's latency — a disk's by milliseconds of seek.
const (
	positional   = 1.5
	positionalUs = 200
)

// Positional says whether the drive's latency depends on where its last
// request was (a disk): its spans differ by positional× and positionalUs.
func (p *Spec) Positional() bool {
	if len(p.Spans) < 2 || p.SpanBytes <= 0 {
		return false
	}
	lo, hi := p.Spans[0].LatUs, p.Spans[0].LatUs
	for _, s := range p.Spans {
		lo, hi = math.Min(lo, s.LatUs), math.Max(hi, s.LatUs)
	}
	return lo > 0 && hi >= positional*lo && hi-lo >= positionalUs
}

// ReadAheadBytes is how far past a read a disk keeps reading into its
// cache: a read landing within it, with no request between, is served
// from the cache. 2 MiB, a
// segment of the 32–256 MiB caches portable disks carry; the drives'
// makers do not publish it.
const ReadAheadBytes = 2 << 20

// DistanceFactor is how a random request's latency at distance (bytes from
// where the last request ended) compares with the grid's random latency,
// measured over SpanBytes: the ratio of the span latencies there,
// interpolated on log₂ distance, held below the shortest span and grown as
// the square root of distance past the longest. 1 for a
// drive whose latency does not depend on position (or whose spans were not
// measured), so such a drive gives the answers it gave without them.
func (p *Spec) DistanceFactor(distance int64) float64 {
	return p.distanceFactor(p.Spans, distance)
}

// WriteDistanceFactor is DistanceFactor for a random write, from the
// write spans where they were measured.
func (p *Spec) WriteDistanceFactor(distance int64) float64 {
	if len(p.WriteSpans) < 2 {
		return p.DistanceFactor(distance)
	}
	return p.distanceFactor(p.WriteSpans, distance)
}

func (p *Spec) distanceFactor(spans []Span, distance int64) float64 {
	if !p.Positional() {
		return 1
	}
	sp := append([]Span(nil), spans...)
	sort.Slice(sp, func(i, j int) bool { return sp[i].Bytes < sp[j].Bytes })
	xs, ys := make([]float64, len(sp)), make([]float64, len(sp))
	for i, s := range sp {
		// A random request within a span of S lands about S/3 from the
		// last: the span's latency is that distance's.
		xs[i], ys[i] = math.Log2(math.Max(float64(s.Bytes)/3, 1)), s.LatUs
	}
	// Past the longest distance benched (a third of the longest span) a
	// seek keeps growing: as the square root of its distance, as a disk's
	// arm does on all but its longest strokes, at the rate between the two
	// longest spans. Held flat there instead, the HDD model's 1.8 GB seeks
	// between a file and the journal came out 4 ms (a fifth) short.
	last, rate := 0.0, 0.0
	if k := len(sp); k >= 2 {
		d1, d2 := float64(sp[k-2].Bytes)/3, float64(sp[k-1].Bytes)/3
		last, rate = d2, max((ys[k-1]-ys[k-2])/(math.Sqrt(d2)-math.Sqrt(d1)), 0)
	}
	at := func(d float64) float64 {
		if rate > 0 && d > last {
			return ys[len(ys)-1] + rate*(math.Sqrt(d)-math.Sqrt(last))
		}
		return along(xs, ys, math.Log2(math.Max(d, 1)))
	}
	// Against the mean over the distances random requests within the
	// grid's span have (|X − Y| of two uniform places: density 2(S−x)/S²),
	// not the latency at their mean distance: a seek grows less than in
	// proportion, so the mean of the latencies is the smaller, and a
	// workload as random as the grid's must average a factor of 1.
	s := float64(p.SpanBytes)
	const n = 64
	var mean float64
	for k := range n {
		x := (float64(k) + 0.5) * s / n
		mean += at(x) * 2 * (s - x) / (s * s) * s / n
	}
	d := max(distance, 1)
	if p.FSBytes > 0 {
		// A recording on a larger file system moves farther than any
		// request on this one can.
		d = min(d, p.FSBytes)
	}
	return at(float64(d)) / mean
}
