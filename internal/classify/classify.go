package classify

import (
	"errors"
	"runtime"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/order"
	"github.com/ioshape/ioshape/internal/profile"
)

// Source replays a trace's events in file order; Classify reads it several
// times, each time in constant memory.
type Source func(emit func(*event.Event)) error

// Options change how a trace is classified.
type Options struct {
	ExcludeWriteback bool
	// Windows is how many windows the trace is cut into for the mixture and
	// the phases (default 48); no window is shorter than MinWindowNs.
	Windows     int
	MinWindowNs int64
	// Drive, if set, are a drive's benchmark results for an estimate.
	Drive *DriveResults
	// SyscallPartial: the trace's syscall layer covers its start only
	// (its tracer was degraded to the block layer).
	SyscallPartial bool
}

// Result is a trace's classification.
type Result struct {
	Shape Shape `json:"shape"`
	// OtherLayer is the layer not classified, where it looks different:
	// what the calls asked for beside what the drive did.
	OtherLayer *Shape  `json:"other_layer,omitempty"`
	Matches    []Match `json:"matches"`
	Mixture    []Share `json:"mixture"`
	Phases     []Phase `json:"phases"`
	// Actors are the programs behind the I/O, each with its own shape;
	// empty when one program did it all.
	Actors  []Actor        `json:"actors,omitempty"`
	Verdict Verdict        `json:"verdict"`
	Drive   *DriveEstimate `json:"drive,omitempty"`
	// Origin is the trace time phases and actors count from: the first
	// data I/O's start.
	Origin int64 `json:"-"`
}

// Share is one pattern family's part of a trace, of its bytes and of its
// time, named by its best-matching pattern (patterns of one family, such as
// CrystalDiskMark's and AmorphousDiskMark's SEQ1M QD8, have the same shape).
type Share struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Family     string  `json:"family"`
	Bytes      int64   `json:"bytes"`
	BytesShare float64 `json:"bytes_share"`
	TimeS      float64 `json:"time_s"`
	TimeShare  float64 `json:"time_share"`
}

// Phase is a stretch of time with one character, and its best match.
type Phase struct {
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	Shape  Shape   `json:"shape"`
	Best   Match   `json:"best"`
}

// ErrNoIO is returned for a trace with no data I/O to classify.
var ErrNoIO = errors.New("the trace has no data I/O to classify")

// Classify ranks the catalog's patterns against a trace, splits it into a
// mixture and phases, and estimates it on a drive if results are given.
// It reads the trace once.
func Classify(src Source, opts Options) (*Result, error) {
	pass := NewPass(opts)
	popts := pass.Attach(profile.Options{Parallel: runtime.GOMAXPROCS(0) > 1})
	whole := profile.NewBuilder(popts)
	err := src(func(e *event.Event) {
		pass.Add(e)
		whole.Add(e)
	})
	p := whole.Finish()
	if err != nil {
		return nil, err
	}
	return pass.Finish(p)
}

// ProfileOptions are the options of every profile classify builds.
func ProfileOptions(opts Options) profile.Options {
	return profile.Options{ExcludeWriteback: opts.ExcludeWriteback, SyscallPartial: opts.SyscallPartial}
}

// Pass is a classification built in one read of the trace, from the
// caller's whole-trace profile (Attach): the data I/O's span and who did
// it (Add), and from each arrival the profile's sweeps report, time slices
// of the trace (merged into windows and phases after the pass) and each
// program's shape (its own arrivals swept again, as if alone). Each
// layer's part runs on the goroutine that aggregates the layer.
type Pass struct {
	opts   Options
	keep   func(*event.Event) bool
	first  int64 // the earliest data I/O's arrival: phases count from it
	seen   bool
	tally  actorTally
	slices [2]*slicer       // by layer
	actors [2]*actorTracker // by layer
	waits  pidWaits         // the waits outside calls, by process
}

// NewPass returns an empty Pass.
func NewPass(opts Options) *Pass {
	if opts.Windows <= 0 {
		opts.Windows = 48
	}
	if opts.MinWindowNs <= 0 {
		opts.MinWindowNs = 100e6
	}
	p := &Pass{opts: opts, keep: func(e *event.Event) bool {
		return !(opts.ExcludeWriteback && e.Layer == event.Block && e.Flags&event.FlagKernel != 0)
	}}
	for l := range p.slices {
		p.slices[l] = newSlicer(opts.Windows, opts.MinWindowNs)
		p.actors[l] = newActorTracker()
	}
	go ExpectedShapes() // the catalog's shapes, ready by the end of the read
	return p
}

// Attach makes opts those of the whole-trace profile the pass is built
// from: the events classify keeps (with or without writeback), and each
// arrival handed to the pass. That profile is the one Finish takes.
func (p *Pass) Attach(opts profile.Options) profile.Options {
	opts.ExcludeWriteback, opts.SyscallPartial = p.opts.ExcludeWriteback, p.opts.SyscallPartial
	for l := range opts.OnArrival {
		slices, actors := p.slices[l], p.actors[l]
		opts.OnArrival[l] = func(a *profile.Arrival) {
			slices.add(a)
			actors.add(a)
		}
	}
	return opts
}

// Add takes the trace's next event, in file order, as the profile does.
func (p *Pass) Add(e *event.Event) {
	if e.IsWait() {
		p.waits.add(e)
		return
	}
	if !e.Op.IsData() || !p.keep(e) {
		return
	}
	p.tally.add(e)
	if !p.seen || e.Start < p.first {
		p.first = e.Start
	}
	p.seen = true
}

// Finish classifies what the pass saw. whole is the profile built with
// Attach's options, finished.
func (p *Pass) Finish(whole *profile.Profile) (*Result, error) {
	exp, err := ExpectedShapes()
	if err != nil {
		return nil, err
	}
	shape, ok := ShapeOf(whole)
	if !ok || !p.seen {
		return nil, ErrNoIO
	}
	res := &Result{Shape: shape, Matches: Rank(shape, exp), Origin: p.first}
	if o, ok := OtherLayer(whole, shape); ok {
		res.OtherLayer = &o
	}
	slices := p.slices[event.Block]
	slices.absorb(p.slices[event.Syscall])
	wins := slices.windows(p.opts.SyscallPartial, shape.Layer, exp)
	res.Mixture = mixture(wins)
	res.Phases = slices.phases(phaseRuns(wins), p.first, p.opts.SyscallPartial, shape.Layer, exp)
	actors := p.actors[event.Block]
	actors.absorb(p.actors[event.Syscall])
	res.Actors = actors.result(&p.tally, &p.waits, p.first, p.opts.SyscallPartial, exp)
	res.Verdict = verdictOf(res)
	if p.opts.Drive != nil {
		res.Drive = estimate(res, exp, p.opts.Drive)
	}
	return res, nil
}

// slicer cuts time into slices of a width that is minW times a power of
// two, slice k covering [k×width, (k+1)×width): when the slices in use
// would span more than n, the width doubles and neighbours merge, exactly,
// so memory is n slices whatever the trace's length. The slices are the
// windows.
type slicer struct {
	n       int
	width   int64
	lo, hi  int64 // slice indexes in use
	buckets map[int64]*profile.ShapeBucket
	// The slice the last arrival fell in: the next usually falls there too.
	last    *profile.ShapeBucket
	lastIdx int64
}

func newSlicer(n int, minW int64) *slicer {
	return &slicer{n: n, width: minW, buckets: map[int64]*profile.ShapeBucket{}}
}

func (s *slicer) add(a *profile.Arrival) {
	i := order.FloorDiv(a.Start, s.width)
	if s.last != nil && i == s.lastIdx {
		s.last.Add(a)
		return
	}
	s.cover(i)
	i = order.FloorDiv(a.Start, s.width)
	b := s.buckets[i]
	if b == nil {
		b = &profile.ShapeBucket{}
		s.buckets[i] = b
	}
	s.last, s.lastIdx = b, i
	b.Add(a)
}

// cover widens the slices until slice i (at the current width) fits
// among n with those in use.
func (s *slicer) cover(i int64) {
	if len(s.buckets) == 0 {
		s.lo, s.hi = i, i
		return
	}
	for max(s.hi, i)-min(s.lo, i) >= int64(s.n) {
		s.widen()
		i = order.FloorDiv(i, 2)
	}
	s.lo, s.hi = min(s.lo, i), max(s.hi, i)
}

// widen doubles the slices' width, merging each pair.
func (s *slicer) widen() {
	s.width *= 2
	s.last = nil
	merged := make(map[int64]*profile.ShapeBucket, len(s.buckets)/2+1)
	for _, i := range s.indexes() { // in order: merges add up the same way every time
		j := order.FloorDiv(i, 2)
		if m := merged[j]; m != nil {
			m.Merge(s.buckets[i])
		} else {
			merged[j] = s.buckets[i]
		}
	}
	s.buckets = merged
	s.lo, s.hi = order.FloorDiv(s.lo, 2), order.FloorDiv(s.hi, 2)
}

// absorb takes in another layer's slices: both are brought to the wider
// width, and widened further until together they span at most n — the
// width one slicer given both layers would have reached.
func (s *slicer) absorb(o *slicer) {
	if len(o.buckets) == 0 {
		return
	}
	if len(s.buckets) == 0 {
		*s = *o
		return
	}
	for s.width < o.width {
		s.widen()
	}
	for o.width < s.width {
		o.widen()
	}
	for max(s.hi, o.hi)-min(s.lo, o.lo) >= int64(s.n) {
		s.widen()
		o.widen()
	}
	for _, i := range o.indexes() {
		if b := s.buckets[i]; b != nil {
			b.Merge(o.buckets[i])
		} else {
			s.buckets[i] = o.buckets[i]
		}
	}
	s.lo, s.hi = min(s.lo, o.lo), max(s.hi, o.hi)
}

func (s *slicer) indexes() []int64 {
	idx := make([]int64, 0, len(s.buckets))
	for i := range s.buckets {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	return idx
}

// windows ranks each slice with enough I/O, in time order, each read from
// the layer the whole trace is (a slice is too short to weigh the layers:
// its readahead may land in the next), so that the mixture adds up to it.
func (s *slicer) windows(syscallPartial bool, layer string, exp []Expected) []window {
	var out []window
	for _, i := range s.indexes() {
		w := window{idx: int(i)}
		if sh, ok := ShapeAt(s.buckets[i].Profile(syscallPartial), layer); ok {
			w.shape, w.bytes = sh, sh.Bytes
			if sh.IOs >= minWindowIOs {
				w.ok = true
				w.best = Rank(sh, exp)[0]
			}
		}
		out = append(out, w)
	}
	return out
}

// phases merges each run of windows into a phase, timed from origin, read
// from the layer the whole trace is (as its windows are): the phases add up
// to the trace and its mixture. A program's start inside a benchmark run is
// then a phase of few calls, not one of its paging.
func (s *slicer) phases(runs [][2]int, origin int64, syscallPartial bool, layer string, exp []Expected) []Phase {
	var out []Phase
	at := func(i int) float64 { return round3(float64(max(0, int64(i)*s.width-origin)) / 1e9) }
	for _, r := range runs {
		var b profile.ShapeBucket
		for i := r[0]; i <= r[1]; i++ {
			if w := s.buckets[int64(i)]; w != nil {
				b.Merge(w)
			}
		}
		pr := b.Profile(syscallPartial)
		sh, ok := ShapeAt(pr, layer)
		if !ok {
			sh, ok = ShapeOf(pr) // that layer has nothing here
		}
		if !ok {
			continue
		}
		out = append(out, Phase{StartS: at(r[0]), EndS: at(r[1] + 1), Shape: sh, Best: Rank(sh, exp)[0]})
	}
	return out
}

// window is one slice of the trace's time.
type window struct {
	idx   int
	shape Shape
	ok    bool // enough I/O to have a shape
	best  Match
	bytes int64
}

// minWindowIOs is the least I/O a window needs to be classified on its own.
const minWindowIOs = 16

// finishWindows profiles each window and ranks those with enough I/O, in
// time order.
func finishWindows(builders map[int]*profile.Builder, exp []Expected) []window {
	var out []window
	for i, b := range builders {
		w := window{idx: i}
		if s, ok := ShapeOf(b.Finish()); ok {
			w.shape, w.bytes = s, s.Bytes
			if s.IOs >= minWindowIOs {
				w.ok = true
				w.best = Rank(s, exp)[0]
			}
		}
		out = append(out, w)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].idx < out[b].idx })
	return out
}

func mixture(wins []window) []Share {
	byFamily := map[string]*Share{}
	var bytes int64
	var time float64
	for _, w := range wins {
		if !w.ok {
			continue
		}
		s := byFamily[w.best.Family]
		if s == nil {
			s = &Share{ID: w.best.ID, Name: w.best.Name, Family: w.best.Family}
			byFamily[w.best.Family] = s
		}
		s.Bytes += w.bytes
		s.TimeS += w.shape.SpanS
		bytes += w.bytes
		time += w.shape.SpanS
	}
	out := make([]Share, 0, len(byFamily))
	for _, s := range byFamily {
		if bytes > 0 {
			s.BytesShare = round3(float64(s.Bytes) / float64(bytes))
		}
		if time > 0 {
			s.TimeShare = round3(s.TimeS / time)
		}
		s.TimeS = round3(s.TimeS)
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].BytesShare != out[j].BytesShare {
			return out[i].BytesShare > out[j].BytesShare
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// phaseRuns groups consecutive windows by their best family. Windows too
// quiet to classify join the phase before them; a run of one window
// between two runs of the same family is absorbed by them.
func phaseRuns(wins []window) [][2]int {
	label := make([]string, len(wins))
	prev := ""
	for i, w := range wins {
		if w.ok {
			prev = w.best.Family
		}
		label[i] = prev
	}
	for i := range label { // leading quiet windows join the first phase
		if label[i] != "" {
			for j := 0; j < i; j++ {
				label[j] = label[i]
			}
			break
		}
	}
	for i := 1; i+1 < len(label); i++ {
		if label[i] != label[i-1] && label[i-1] == label[i+1] {
			label[i] = label[i-1]
		}
	}
	var runs [][2]int
	start := 0
	for i := 1; i <= len(label); i++ {
		if i == len(label) || label[i] != label[start] {
			runs = append(runs, [2]int{wins[start].idx, wins[i-1].idx})
			start = i
		}
	}
	return runs
}

// finishPhases profiles each run of windows as a phase.
func finishPhases(runs [][2]int, builders []*profile.Builder, width int64, exp []Expected) []Phase {
	var out []Phase
	for p, r := range runs {
		s, ok := ShapeOf(builders[p].Finish())
		if !ok {
			continue
		}
		out = append(out, Phase{
			StartS: round3(float64(int64(r[0])*width) / 1e9),
			EndS:   round3(float64(int64(r[1]+1)*width) / 1e9),
			Shape:  s,
			Best:   Rank(s, exp)[0],
		})
	}
	return out
}
