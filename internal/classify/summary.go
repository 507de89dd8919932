package classify

import (
	"sort"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

// SummarySource replays a summary trace's rows (record --summary) in file
// order; ClassifySummary reads it three times.
type SummarySource func(emit func(*event.Summary)) error

// ClassifySummary is Classify for a summary trace: the same ranking,
// mixture, phases and actors, from rows of one second each instead of
// events, so no window is shorter than a second.
func ClassifySummary(src SummarySource, opts Options) (*Result, error) {
	exp, err := ExpectedShapes()
	if err != nil {
		return nil, err
	}
	popts := ProfileOptions(opts)
	keep := func(s *event.Summary) bool {
		return !(opts.ExcludeWriteback && s.Layer == event.Block && s.Kernel)
	}
	// Pass 1: the whole trace, its span and its actors.
	whole := profile.NewBuilder(popts)
	var tally actorTally
	var first, last int64
	seen := false
	if err := src(func(s *event.Summary) {
		whole.AddSummary(s)
		if !s.Op.IsData() || !keep(s) || s.Count == 0 {
			return
		}
		tally.count(summaryActor(s), s.Bytes, s.Count)
		if !seen || s.First < first {
			first = s.First
		}
		if !seen || s.Last > last {
			last = s.Last
		}
		seen = true
	}); err != nil {
		return nil, err
	}
	shape, ok := ShapeOf(whole.Finish())
	if !ok || !seen {
		return nil, ErrNoIO
	}
	res := &Result{Shape: shape, Matches: Rank(shape, exp), Origin: first}
	n := opts.Windows
	if n <= 0 {
		n = 48
	}
	width := max(int64(event.SummarySeconds), (last-first)/int64(n)+1)
	windowOf := func(s *event.Summary) int { return int(max(0, max(s.First, s.Start)-first) / width) }

	// Pass 2: windows.
	builders := map[int]*profile.Builder{}
	if err := src(func(s *event.Summary) {
		if !keep(s) {
			return
		}
		i := windowOf(s)
		if builders[i] == nil {
			builders[i] = profile.NewBuilder(popts)
		}
		builders[i].AddSummary(s)
	}); err != nil {
		return nil, err
	}
	wins := finishWindows(builders, exp)
	res.Mixture = mixture(wins)

	// Pass 3: phases and actors.
	runs := phaseRuns(wins)
	phaseBuilders := make([]*profile.Builder, len(runs))
	for i := range phaseBuilders {
		phaseBuilders[i] = profile.NewBuilder(popts)
	}
	picked := tally.pick()
	actorIndex := map[string]int{}
	actors := make([]summaryActorStats, len(picked))
	for i, k := range picked {
		actorIndex[k] = i
		actors[i] = summaryActorStats{b: profile.NewBuilder(popts), pids: map[uint32]bool{}}
	}
	if err := src(func(s *event.Summary) {
		if !keep(s) {
			return
		}
		if len(runs) > 0 {
			w := windowOf(s)
			p := sort.Search(len(runs), func(k int) bool { return runs[k][0] > w }) - 1
			phaseBuilders[max(0, p)].AddSummary(s)
		}
		if i, ok := actorIndex[summaryActor(s)]; ok {
			actors[i].add(s)
		}
	}); err != nil {
		return nil, err
	}
	res.Phases = finishPhases(runs, phaseBuilders, width, exp)
	for i, k := range picked {
		a := &actors[i]
		if actor, ok := newActor(k, a.b.Finish(), len(a.pids), a.first, a.last, first, &tally, exp); ok {
			res.Actors = append(res.Actors, actor)
		}
	}
	res.Verdict = verdictOf(res)
	if opts.Drive != nil {
		res.Drive = estimate(res, exp, opts.Drive)
	}
	return res, nil
}

// summaryActor is ActorOf for a summary row.
func summaryActor(s *event.Summary) string {
	if s.Kernel {
		return kernelActorName
	}
	return s.Comm
}

type summaryActorStats struct {
	b           *profile.Builder
	pids        map[uint32]bool
	first, last int64
	seen        bool
}

func (a *summaryActorStats) add(s *event.Summary) {
	a.b.AddSummary(s)
	if !s.Op.IsData() || s.Count == 0 {
		return
	}
	a.pids[s.Pid] = true
	if !a.seen || s.First < a.first {
		a.first = s.First
	}
	a.last = max(a.last, s.Last)
	a.seen = true
}
