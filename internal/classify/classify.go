package classify

import (
	"errors"
	"sort"

	"github.com/ioshape/ioshape/internal/event"
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
	Shape   Shape   `json:"shape"`
	Matches []Match `json:"matches"`
	Mixture []Share `json:"mixture"`
	Phases  []Phase `json:"phases"`
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
// It reads the trace three times.
func Classify(src Source, opts Options) (*Result, error) {
	whole := profile.NewBuilder(ProfileOptions(opts))
	survey := NewSurvey(opts)
	if err := src(func(e *event.Event) {
		whole.Add(e)
		survey.Add(e)
	}); err != nil {
		return nil, err
	}
	return ClassifySurveyed(survey, whole.Finish(), src, opts)
}

// ProfileOptions are the options of every profile classify builds: a
// caller giving ClassifySurveyed its own whole-trace profile builds it with
// these (or more).
func ProfileOptions(opts Options) profile.Options {
	return profile.Options{ExcludeWriteback: opts.ExcludeWriteback, SyscallPartial: opts.SyscallPartial}
}

// Survey is what classify's first pass learns besides the whole trace's
// profile: the data I/O's time span and who did it. A caller that reads
// the trace for its own profile anyway feeds a Survey in the same pass and
// saves classify that pass (see ClassifySurveyed).
type Survey struct {
	keep        func(*event.Event) bool
	first, last int64
	seen        bool
	tally       actorTally
}

// NewSurvey returns an empty Survey.
func NewSurvey(opts Options) *Survey {
	return &Survey{keep: func(e *event.Event) bool {
		return !(opts.ExcludeWriteback && e.Layer == event.Block && e.Flags&event.FlagKernel != 0)
	}}
}

// Add takes the trace's next event, in file order.
func (s *Survey) Add(e *event.Event) {
	if !e.Op.IsData() || !s.keep(e) {
		return
	}
	s.tally.add(e)
	if !s.seen || e.Start < s.first {
		s.first = e.Start
	}
	if !s.seen || e.End > s.last {
		s.last = e.End
	}
	s.seen = true
}

// ClassifySurveyed is Classify after its first pass: survey saw every
// event, and whole is the profile of the same events under the same
// options (it may hold more, such as device names and time series, which
// the shape does not read). It reads the trace twice more.
func ClassifySurveyed(survey *Survey, whole *profile.Profile, src Source, opts Options) (*Result, error) {
	exp, err := ExpectedShapes()
	if err != nil {
		return nil, err
	}
	popts, keep := ProfileOptions(opts), survey.keep
	first, last := survey.first, survey.last
	shape, ok := ShapeOf(whole)
	if !ok || !survey.seen {
		return nil, ErrNoIO
	}
	res := &Result{Shape: shape, Matches: Rank(shape, exp), Origin: first}

	// Pass 2: windows, for the mixture and to find phase boundaries.
	n := opts.Windows
	if n <= 0 {
		n = 48
	}
	minW := opts.MinWindowNs
	if minW <= 0 {
		minW = 100e6
	}
	width := max(minW, (last-first)/int64(n)+1)
	wins, err := windowShapes(src, popts, keep, first, width, exp)
	if err != nil {
		return nil, err
	}
	res.Mixture = mixture(wins)

	// Pass 3: a profile per phase, and per actor.
	actors := newActorBuilder(survey.tally.pick(), popts)
	res.Phases, err = phases(src, popts, keep, first, width, wins, exp, actors.add)
	if err != nil {
		return nil, err
	}
	res.Actors = actors.finish(&survey.tally, first, exp)
	res.Verdict = verdictOf(res)
	if opts.Drive != nil {
		res.Drive = estimate(res, exp, opts.Drive)
	}
	return res, nil
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

func windowShapes(src Source, popts profile.Options, keep func(*event.Event) bool, first, width int64, exp []Expected) ([]window, error) {
	// Even and odd windows on two goroutines.
	var shards [2]map[int]*profile.Builder
	var workers [2]func(*event.Event)
	for s := range shards {
		builders := map[int]*profile.Builder{}
		shards[s] = builders
		workers[s] = func(e *event.Event) {
			if !keep(e) {
				return
			}
			i := int(max(0, e.Start-first) / width)
			if i%2 != s {
				return
			}
			b := builders[i]
			if b == nil {
				b = profile.NewBuilder(popts)
				builders[i] = b
			}
			b.Add(e)
		}
	}
	if err := fanOut(src, workers[:]...); err != nil {
		return nil, err
	}
	builders := shards[0]
	for i, b := range shards[1] {
		builders[i] = b
	}
	return finishWindows(builders, exp), nil
}

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

// phases profiles each phase; also sees every kept event of the pass.
func phases(src Source, popts profile.Options, keep func(*event.Event) bool, first, width int64, wins []window, exp []Expected, also func(*event.Event)) ([]Phase, error) {
	runs := phaseRuns(wins)
	phaseOf := map[int]int{}
	for p, r := range runs {
		for i := r[0]; i <= r[1]; i++ {
			phaseOf[i] = p
		}
	}
	builders := make([]*profile.Builder, len(runs))
	for i := range builders {
		builders[i] = profile.NewBuilder(popts)
	}
	// The phases on one goroutine, what also does on another.
	byPhase := func(e *event.Event) {
		if !keep(e) || len(runs) == 0 {
			return
		}
		w := int(max(0, e.Start-first) / width)
		p, ok := phaseOf[w]
		if !ok { // a window with no data I/O: the phase before it
			p = sort.Search(len(runs), func(k int) bool { return runs[k][0] > w }) - 1
			p = max(0, p)
		}
		builders[p].Add(e)
	}
	alsoKept := func(e *event.Event) {
		if keep(e) {
			also(e)
		}
	}
	if err := fanOut(src, byPhase, alsoKept); err != nil {
		return nil, err
	}
	return finishPhases(runs, builders, width, exp), nil
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
