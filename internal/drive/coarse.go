package drive

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Test is one published benchmark figure: a shape and the rate a drive
// reached on it (and, where the tool printed it, the mean latency).
type Test struct {
	Op        string  `json:"op"`     // read or write
	Access    string  `json:"access"` // seq or rand
	SizeBytes int64   `json:"size_bytes"`
	Depth     int     `json:"depth"`   // queue depth per thread
	Threads   int     `json:"threads"` // threads (jobs)
	MBs       float64 `json:"mb_s"`
	LatUs     float64 `json:"lat_mean_us,omitempty"`
	// Line is where the figure was read in the imported file.
	Line int `json:"line,omitempty"`
}

// InFlight is how many requests the test kept outstanding.
func (t Test) InFlight() int { return max(t.Depth, 1) * max(t.Threads, 1) }

// Name is the test as CrystalDiskMark names it: "RND4K Q32T1 read".
func (t Test) Name() string {
	kind := "SEQ"
	if t.Access == "rand" {
		kind = "RND"
	}
	return fmt.Sprintf("%s%s Q%dT%d %s", kind, sizeName(t.SizeBytes), max(t.Depth, 1), max(t.Threads, 1), t.Op)
}

func sizeName(b int64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dK", b>>10)
	}
	return fmt.Sprintf("%dB", b)
}

// Provenance says where a profile's numbers came from: the tool, its
// version and settings, when, and the figures as given.
type Provenance struct {
	Tool      string `json:"tool"` // CrystalDiskMark, KDiskMark, AmorphousDiskMark, ATTO Disk Benchmark, fio, Blackmagic
	Version   string `json:"version,omitempty"`
	Profile   string `json:"profile,omitempty"`   // the tool's test profile (Default, Peak Performance, NVMe SSD)
	TestSize  string `json:"test_size,omitempty"` // as the tool said it: "1 GiB"
	TestBytes int64  `json:"test_bytes,omitempty"`
	Date      string `json:"date,omitempty"`   // as the tool wrote it
	Source    string `json:"source,omitempty"` // the file imported
	Device    string `json:"device,omitempty"` // the drive as the results name it (a comment, a model)
	Tests     []Test `json:"tests"`
}

// String is the provenance in a line: "CrystalDiskMark 8.0.4, Default
// profile, 1 GiB test, 2024/05/25 19:26:52".
func (p *Provenance) String() string {
	if p == nil {
		return ""
	}
	parts := []string{strings.TrimSpace(p.Tool + " " + p.Version)}
	if p.Profile != "" {
		parts = append(parts, p.Profile+" profile")
	}
	if p.TestSize != "" {
		parts = append(parts, p.TestSize+" test")
	}
	if p.Date != "" {
		parts = append(parts, p.Date)
	}
	return strings.Join(parts, ", ")
}

// How far a figure is trusted, and the rules' other stated numbers.
const (
	// figureError is a published figure's run-to-run spread (twice the
	// few percent a benchmark's passes differ by): a fixed cost read as a
	// figure's latency less its transfer time is known to within this
	// share of the figure's latency, a transfer rate to within this share
	// of itself.
	figureError = 0.10
	// BenchUncertainty is the range given a prediction from a full bench:
	// the median error of such predictions on the validation drives
	// (docs/predict.md).
	BenchUncertainty = 0.15
	// writeCacheFactor is how much slower writes may go than a published
	// figure says: a benchmark's test file (1 GiB by default) fits in
	// most drives' write caches, a long write may not.
	writeCacheFactor = 1.5
	// borrowedFactor widens the range where one direction's figures stand
	// in for the other's.
	borrowedFactor = 2
	// seekBoundUs: a drive whose 4 KiB random reads one at a time take
	// this long seeks (a disk); flash takes well under a millisecond.
	seekBoundUs = 2000
	// rotationShare is the share of a disk's random latency over the test
	// file taken as independent of distance (rotation, command overhead),
	// with its range: a seek within a 1 GiB file is short.
	rotationShare, rotationShareLow, rotationShareHigh = 0.75, 0.55, 0.9
	// diskCacheHitUs is a disk's cost for a request its read cache holds:
	// the command and the bus.
	diskCacheHitUs = 100
)

// The shapes a coarse profile answers for, beside the figures' own.
var (
	gridSizes    = []int64{4 << 10, 16 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 4 << 20}
	gridInFlight = []int{1, 2, 4, 8, 16, 32}
)

// band is a quantity known to lie between lo and hi, mid the best guess.
type band struct{ lo, mid, hi float64 }

// Build makes a profile from published figures by stated rules
// (docs/drive-profile.md, "From published figures"): per direction, a
// request one at a time takes a fixed cost plus its size at the drive's
// transfer rate (the fixed cost of each access from its figure one at a
// time, the rate from the fastest figure); deeper queues follow Little's
// law up to the deepest figure's rate, between a sharp knee (the low
// latency bound) and a gradual rise (the high); a drive whose random reads
// take milliseconds seeks, and its latency grows with distance. Each point
// keeps its range; Bound gives the profiles at either end.
func Build(name string, prov Provenance) (*Spec, error) {
	if len(prov.Tests) == 0 {
		return nil, errors.New("no benchmark figures")
	}
	for _, t := range prov.Tests {
		switch {
		case t.Op != "read" && t.Op != "write", t.Access != "seq" && t.Access != "rand":
			return nil, fmt.Errorf("a figure is %s %s (want read or write, seq or rand)", t.Op, t.Access)
		case t.SizeBytes <= 0 || t.Depth <= 0 || t.Threads <= 0:
			return nil, fmt.Errorf("%s: no size, queue depth or threads", t.Name())
		case !(t.MBs > 0) || math.IsInf(t.MBs, 0):
			return nil, fmt.Errorf("%s: the rate must be a positive figure", t.Name())
		}
	}
	p := &Spec{Name: name, Tool: strings.TrimSpace(prov.Tool + " " + prov.Version), Coarse: true, Date: time.Now().UTC()}
	for _, op := range []string{"read", "write"} {
		ts, borrowed := testsOf(prov.Tests, op), false
		if len(ts) == 0 {
			ts, borrowed = testsOf(prov.Tests, otherOp(op)), true
		}
		m := fit(ts)
		for _, access := range []string{"seq", "rand"} {
			sizes, inflights := shapesFor(ts, access)
			for _, s := range sizes {
				for _, d := range inflights {
					l := m.latency(access, s, d)
					if f, ok := figureAt(ts, op, access, s, d); ok && !borrowed {
						// The figure itself, where the rules only near it
						// (a second deep figure of one access).
						l.mid = latUs(f)
						l.lo, l.hi = math.Min(l.lo, l.mid*(1-figureError)), math.Max(l.hi, l.mid*(1+figureError))
					}
					if borrowed {
						l.lo, l.hi = l.lo/borrowedFactor, l.hi*borrowedFactor
					}
					if op == "write" {
						l.hi *= writeCacheFactor
					}
					pt := pointFromLatency(op, access, s, d, l.mid)
					pt.LatLowUs, pt.LatHighUs = l.lo, l.hi
					p.Points = append(p.Points, pt)
				}
			}
		}
		if op == "read" {
			p.Spans, p.SpanBytes = m.spans(prov.TestBytes)
		}
	}
	prov.Tests = append([]Test(nil), prov.Tests...)
	p.Provenance = &prov
	return p, p.Validate()
}

// figureAt is the figure of exactly this shape, if one was given.
func figureAt(ts []Test, op, access string, size int64, inflight int) (Test, bool) {
	for _, t := range ts {
		if t.Op == op && t.Access == access && t.SizeBytes == size && t.InFlight() == inflight {
			return t, true
		}
	}
	return Test{}, false
}

func testsOf(ts []Test, op string) []Test {
	var out []Test
	for _, t := range ts {
		if t.Op == op {
			out = append(out, t)
		}
	}
	return out
}

func otherOp(op string) string {
	if op == "read" {
		return "write"
	}
	return "read"
}

// shapesFor is the grid's sizes and in-flight counts with the figures'
// own for an access added, so the profile answers the figures exactly.
func shapesFor(ts []Test, access string) ([]int64, []int) {
	sizes, inflights := append([]int64(nil), gridSizes...), append([]int(nil), gridInFlight...)
	for _, t := range ts {
		if t.Access == access {
			sizes, inflights = append(sizes, t.SizeBytes), append(inflights, t.InFlight())
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	sort.Ints(inflights)
	return uniq(sizes), uniq(inflights)
}

func uniq[T comparable](xs []T) []T {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func pointFromLatency(op, access string, size int64, inflight int, latUs float64) Point {
	iops := float64(inflight) / latUs * 1e6
	return Point{Op: op, Access: access, SizeBytes: size, Depth: inflight, Jobs: 1, IOPS: iops,
		MBs: iops * float64(size) / 1e6, LatUs: latUs}
}

// opModel is one direction's figures read as a service-time model: a
// request one at a time costs a[access] + size/rate µs; at saturation,
// sat[access] + size/rate µs of the drive's time each, reached at deep
// requests in flight.
type opModel struct {
	rate band // bytes per µs (MB/s): the fastest figure, a saturated drive's
	// rate1 is the transfer rate one request at a time: on flash, the fit
	// through the smallest and the largest figures one at a time (a large
	// request alone does not reach the drive's full rate); else rate.
	rate1 band
	a     map[string]band
	sat   map[string]float64 // NaN: no deep figure
	deep  map[string]int
	// randUs is a 4 KiB random request's latency one at a time (0: no
	// random figure).
	randUs float64
}

// latUs is a figure's latency by Little's law: what the rate and the
// requests in flight imply (a tool's printed mean can include its own
// overhead; the rate is what it was sold on).
func latUs(t Test) float64 { return float64(t.InFlight()) * float64(t.SizeBytes) / t.MBs }

func fit(ts []Test) opModel {
	m := opModel{a: map[string]band{}, sat: map[string]float64{}, deep: map[string]int{}}
	var top float64
	for _, t := range ts {
		top = math.Max(top, t.MBs)
	}
	m.rate = band{top * (1 + figureError), top, top * (1 - figureError)}
	one := map[string]*Test{}
	deepest := map[string]*Test{}
	for i := range ts {
		t := &ts[i]
		if t.InFlight() == 1 && (one[t.Access] == nil || t.SizeBytes < one[t.Access].SizeBytes) {
			one[t.Access] = t
		}
		if t.InFlight() > 1 && (deepest[t.Access] == nil || t.InFlight() > deepest[t.Access].InFlight() ||
			t.InFlight() == deepest[t.Access].InFlight() && t.SizeBytes < deepest[t.Access].SizeBytes) {
			deepest[t.Access] = t
		}
	}
	fixed := func(t *Test) band {
		l := latUs(*t)
		a := math.Max(l-float64(t.SizeBytes)/m.rate.mid, 0.02*l)
		return band{math.Max(a-figureError*l, 0.02*l), a, a + figureError*l}
	}
	for _, access := range []string{"seq", "rand"} {
		switch {
		case one[access] != nil:
			m.a[access] = fixed(one[access])
		case deepest[access] != nil:
			// Only a deep figure: one at a time takes between its
			// latency ÷ in flight (the queue served perfectly in
			// parallel) and its latency (not at all).
			t := deepest[access]
			l := latUs(*t)
			x := float64(t.SizeBytes) / m.rate.mid
			lo, hi := math.Max(l/float64(t.InFlight())-x, 0.02*l), math.Max(l-x, 0.02*l)
			m.a[access] = band{lo, math.Sqrt(lo * hi), hi}
		}
		if t := deepest[access]; t != nil {
			m.sat[access] = math.Max(latUs(*t)/float64(t.InFlight())-float64(t.SizeBytes)/m.rate.mid, 0)
			m.deep[access] = t.InFlight()
		} else {
			m.sat[access] = math.NaN()
		}
	}
	m.rate1 = m.rate
	m.fitSizes(ts, top)
	// An access without figures: the other's stand in, with what is known
	// of the two. A sequential request costs at most a random one; a
	// random one at least a sequential one, by up to a disk's seek.
	seq, hasSeq := m.a["seq"]
	rnd, hasRand := m.a["rand"]
	switch {
	case !hasSeq:
		m.a["seq"] = band{rnd.lo / 10, rnd.mid / 3, rnd.hi}
	case !hasRand:
		m.a["rand"] = band{seq.lo, seq.mid * 3, math.Max(seq.hi*30, seekBoundUs*2)}
	default:
		// A sequential request costs no more than a random one (a fixed
		// cost read off a large figure can say more: SEQ1M Q1T1 below
		// SEQ1M Q8T1 is the queue's doing, not the request's).
		m.a["seq"] = band{math.Min(seq.lo, rnd.lo), math.Min(seq.mid, rnd.mid), math.Min(seq.hi, rnd.hi)}
	}
	if r := one["rand"]; r != nil && r.Op == "read" {
		m.randUs = m.a["rand"].mid + float64(4<<10)/m.rate.mid
	}
	if m.randUs >= seekBoundUs {
		// A disk reads ahead into its cache: a small request continuing
		// the last is served from it, at a cache hit's cost, unless the
		// platter must turn to it — as SEQ1M Q1T1's figure, one request
		// at a time, implies.
		a := m.a["seq"]
		m.a["seq"] = band{math.Min(a.lo, diskCacheHitUs), math.Sqrt(diskCacheHitUs * a.mid), math.Max(a.hi, a.mid)}
	}
	return m
}

// fitSizes fits a flash drive's requests one at a time across sizes: a
// fixed cost plus the size at rate1, through its smallest and largest
// figures one at a time (either access: flash has no seek), when they are
// 4× apart in size. A disk's random figure is a seek: it keeps its own.
func (m *opModel) fitSizes(ts []Test, top float64) {
	var small, large *Test
	for i := range ts {
		t := &ts[i]
		if t.InFlight() != 1 {
			continue
		}
		if small == nil || t.SizeBytes < small.SizeBytes {
			small = t
		}
		if large == nil || t.SizeBytes > large.SizeBytes {
			large = t
		}
	}
	if small == nil || large.SizeBytes < 4*small.SizeBytes {
		return
	}
	ls, ll := latUs(*small), latUs(*large)
	if ls >= seekBoundUs || ll <= ls {
		return
	}
	b1 := math.Min(float64(large.SizeBytes-small.SizeBytes)/(ll-ls), 2*top)
	a := math.Max(ls-float64(small.SizeBytes)/b1, 0.02*ls)
	m.rate1 = band{b1 * (1 + figureError), b1, b1 * (1 - figureError)}
	fixed := band{math.Max(a-figureError*ls, 0.02*ls), a, a + figureError*ls}
	m.a["seq"], m.a["rand"] = fixed, fixed
}

// latency is a shape's latency band at inflight requests outstanding.
func (m opModel) latency(access string, size int64, inflight int) band {
	a := m.a[access]
	sat, deep := m.sat[access], m.deep[access]
	if math.IsNaN(sat) {
		// No deep figure for this access: the other's saturation where
		// known, else the transfer rate alone.
		other := "rand"
		if access == "rand" {
			other = "seq"
		}
		sat, deep = m.sat[other], m.deep[other]
		if math.IsNaN(sat) {
			sat, deep = 0, 32
		}
	}
	at := func(fixed, rate1, rate float64, knee bool) float64 {
		one := fixed + float64(size)/rate1
		each := math.Min(sat+float64(size)/rate, one) // a request's share of the drive's time, saturated
		d := float64(inflight)
		if d <= 1 {
			return one
		}
		if knee || d >= float64(deep) {
			return math.Max(one, d*each)
		}
		// Throughput rises from one request's to saturation's
		// geometrically in log in-flight.
		x1, xs := 1/one, 1/each
		f := math.Log(d) / math.Log(float64(max(deep, 2)))
		x := x1 * math.Pow(xs/x1, f)
		return d / x
	}
	lo := at(a.lo, m.rate1.lo, m.rate.lo, true)
	hi := at(a.hi, m.rate1.hi, m.rate.hi, false)
	mid := math.Sqrt(at(a.mid, m.rate1.mid, m.rate.mid, true) * at(a.mid, m.rate1.mid, m.rate.mid, false))
	return band{math.Min(lo, mid), mid, math.Max(hi, mid)}
}

// spans is a seek-bound drive's latency by distance, read from its random
// figure over the test file (testBytes; 1 GiB if not said): a share of it
// (rotation and overhead) is taken as the same at any distance, the rest
// as a seek growing with the square root of the distance. Nil for a drive
// that does not seek.
func (m opModel) spans(testBytes int64) ([]Span, int64) {
	if m.randUs < seekBoundUs {
		return nil, 0
	}
	if testBytes <= 0 {
		testBytes = 1 << 30
	}
	l := m.randUs
	at := func(share float64, span int64) float64 {
		return l*share + l*(1-share)*math.Sqrt(float64(span)/float64(testBytes))
	}
	var out []Span
	for _, s := range []int64{1 << 20, 16 << 20, 128 << 20, testBytes, 64 * testBytes} {
		out = append(out, Span{Bytes: s, LatUs: at(rotationShare, s), LatLowUs: at(rotationShareLow, s), LatHighUs: at(rotationShareHigh, s)})
	}
	return out, testBytes
}

// Low and High name the ends of a profile's range for Bound.
const (
	Low  = -1
	High = 1
)

// Bound is the profile at one end of its range (Low: every latency at its
// least; High: at its most): a coarse profile's points and spans carry
// their range; a bench's are taken as within BenchUncertainty.
func (p *Spec) Bound(side int) *Spec {
	b := *p
	b.Name = p.Name
	b.Points = make([]Point, len(p.Points))
	pick := func(mid, lo, hi float64) float64 {
		if lo <= 0 || hi <= 0 {
			lo, hi = mid*(1-BenchUncertainty), mid*(1+BenchUncertainty)
		}
		if side == Low {
			return lo
		}
		return hi
	}
	for i, pt := range p.Points {
		pt.LatUs = pick(pt.LatUs, pt.LatLowUs, pt.LatHighUs)
		pt.IOPS = float64(pt.InFlight()) / pt.LatUs * 1e6
		pt.MBs = pt.IOPS * float64(pt.SizeBytes) / 1e6
		pt.LatLowUs, pt.LatHighUs = 0, 0
		b.Points[i] = pt
	}
	if len(p.Spans) > 0 {
		b.Spans = make([]Span, len(p.Spans))
		for i, s := range p.Spans {
			if s.LatLowUs > 0 && s.LatHighUs > 0 {
				s.LatUs = s.LatLowUs
				if side == High {
					s.LatUs = s.LatHighUs
				}
			}
			s.LatLowUs, s.LatHighUs = 0, 0
			b.Spans[i] = s
		}
	}
	return &b
}

// Figure is the profile's rate for one of CrystalDiskMark's tests as
// predict names them ("SEQ1M Q8T1 read", "RND4K Q1T1 write"); NaN for
// another name.
func (p *Spec) Figure(name string) float64 {
	f := strings.Fields(name)
	if len(f) != 3 || len(f[0]) < 4 {
		return math.NaN()
	}
	access := map[string]string{"SEQ": "seq", "RND": "rand"}[f[0][:3]]
	size := map[string]int64{"1M": 1 << 20, "4K": 4 << 10}[f[0][3:]]
	var q, t int
	if _, err := fmt.Sscanf(f[1], "Q%dT%d", &q, &t); err != nil || access == "" || size == 0 || q < 1 || t < 1 {
		return math.NaN()
	}
	return p.MBs(f[2], access, size, float64(q*t))
}
