package classify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

// FitScore is the least score at which the best match describes the whole
// trace. Below it no single pattern fits (real work in several phases, say)
// and the verdict leads with the phases and the mixture instead.
const FitScore = 0.6

// Verdict is the classification in a sentence, for the top of the text,
// JSON and HTML outputs.
type Verdict struct {
	Fits bool   `json:"fits"` // the best match's score is at least FitScore
	Text string `json:"text"`
}

// MostlyTimeShare is the share of the I/O time one pattern's family takes
// for the verdict to lead with it.
const MostlyTimeShare = 0.5

// FitTimeShare is the least share of the I/O time the best match's family
// must take, window by window, to stand for the whole trace: a stream that
// moves most of the bytes in a fifth of the time does not describe the rest.
const FitTimeShare = 0.7

func verdictOf(r *Result) Verdict {
	best := r.Matches[0]
	timeShare := 1.0
	if len(r.Mixture) > 0 {
		timeShare = 0
		for _, s := range r.Mixture {
			if s.Family == best.Family {
				timeShare = s.TimeShare
			}
		}
	}
	if best.Score >= FitScore && timeShare >= FitTimeShare {
		return Verdict{Fits: true, Text: fmt.Sprintf("Shaped like %s (score %.2f).", best.Name, best.Score)}
	}
	byTime := append([]Share(nil), r.Mixture...)
	sort.SliceStable(byTime, func(i, j int) bool { return byTime[i].TimeShare > byTime[j].TimeShare })
	var b strings.Builder
	if len(byTime) > 0 && byTime[0].TimeShare >= MostlyTimeShare {
		// One pattern takes most of the time: say that first, and how
		// loosely it fits the whole.
		top := byTime[0]
		m := best
		for _, x := range r.Matches {
			if x.ID == top.ID {
				m = x
			}
		}
		fmt.Fprintf(&b, "Mostly like %s — %.0f%% of the I/O time", top.Name, 100*top.TimeShare)
		if m.Score >= FitScore {
			fmt.Fprintf(&b, ", and it fits the whole trace (score %.2f).", m.Score)
		} else {
			fmt.Fprintf(&b, ", a loose fit (%.2f): %s.", m.Score, m.looseness())
		}
		if top.Family != best.Family {
			fmt.Fprintf(&b, " As a whole the trace is closest to %s (score %.2f).", best.Name, best.Score)
		}
		if len(r.Phases) > 1 {
			fmt.Fprintf(&b, " It runs in %d phases.", len(r.Phases))
		}
		if len(byTime) > 1 && byTime[1].TimeShare >= 0.05 {
			fmt.Fprintf(&b, " The rest is mostly like %s (%.0f%%).", byTime[1].Name, 100*byTime[1].TimeShare)
		}
		return Verdict{Text: b.String()}
	}
	fmt.Fprintf(&b, "No single benchmark pattern fits the whole trace: the closest, %s, scores %.2f (%s).", best.Name, best.Score, best.looseness())
	if len(r.Phases) > 1 {
		fmt.Fprintf(&b, " It runs in %d phases.", len(r.Phases))
	}
	var parts []string
	for i, s := range byTime {
		if i == 3 || s.TimeShare < 0.05 {
			break
		}
		parts = append(parts, fmt.Sprintf("%.0f%% like %s (%.0f%% of the bytes)", 100*s.TimeShare, s.Name, 100*s.BytesShare))
	}
	if len(parts) > 1 || len(parts) == 1 && byTime[0].Family != best.Family {
		fmt.Fprintf(&b, " Of its I/O time, %s.", strings.Join(parts, ", "))
	}
	return Verdict{Text: b.String()}
}

// Actor is one program's part of the trace — all processes of one name,
// or the kernel's own I/O (writeback, journal) as one — with its own shape
// and best match: in a copy followed by a sync, the copier and the
// writeback are different actors with different shapes.
type Actor struct {
	Name       string  `json:"name"`
	Kernel     bool    `json:"kernel,omitempty"`
	Processes  int     `json:"processes"`
	StartS     float64 `json:"start_s"`
	EndS       float64 `json:"end_s"`
	BytesShare float64 `json:"bytes_share"`
	Shape      Shape   `json:"shape"`
	Best       Match   `json:"best"`
}

// Limits on actors: the biggest few, each with a real share of the bytes
// or of the I/Os (small random reads move few bytes but take time).
const (
	maxActors     = 6
	minActorShare = 0.02
)

// kernelActorName names the kernel's own I/O as an actor.
const kernelActorName = "kernel (writeback, journal)"

// Actors says which actor each event of a stream belongs to, by the name
// Actor.Name gives it: its program's (the process's main thread's name,
// not a renamed thread's), or one name for all of the kernel's I/O.
type Actors struct{ names event.ProcessNames }

// Of is the actor of e, the next event of the stream.
func (a *Actors) Of(e *event.Event) string {
	if e.Flags&event.FlagKernel != 0 {
		return kernelActorName
	}
	return a.names.Of(e.Pid, e.Tid, e.Comm)
}

// actorTally counts each actor's data bytes and I/Os, to pick the
// actors worth a profile of their own.
type actorTally struct {
	counts          map[string]*actorCount
	actors          Actors
	total, totalIOs int64
	recent          byName[actorCount]
}

type actorCount struct {
	name       string
	bytes, ios int64
}

func (t *actorTally) add(e *event.Event) { t.count(t.actors.Of(e), e.Bytes, 1) }

func (t *actorTally) count(actor string, bytes, ios int64) {
	t.total += bytes
	t.totalIOs += ios
	c := t.recent.get(actor)
	if c == nil {
		if t.counts == nil {
			t.counts = map[string]*actorCount{}
		}
		if c = t.counts[actor]; c == nil {
			c = &actorCount{name: actor}
			t.counts[actor] = c
		}
		t.recent.put(actor, c)
	}
	c.bytes += bytes
	c.ios += ios
}

// bytesOf is what actor moved.
func (t *actorTally) bytesOf(actor string) int64 {
	if c := t.counts[actor]; c != nil {
		return c.bytes
	}
	return 0
}

// pick returns the actors to profile, biggest first; none when the trace
// has only one.
func (t *actorTally) pick() []string {
	if len(t.counts) < 2 || t.total == 0 {
		return nil
	}
	var keys []string
	for k, c := range t.counts {
		if float64(c.bytes) >= minActorShare*float64(t.total) || float64(c.ios) >= minActorShare*float64(t.totalIOs) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if bi, bj := t.counts[keys[i]].bytes, t.counts[keys[j]].bytes; bi != bj {
			return bi > bj
		}
		return keys[i] < keys[j]
	})
	if len(keys) > maxActors {
		keys = keys[:maxActors]
	}
	return keys
}

// pidWaits sums each process's waits outside its calls (CallWait
// events), for its actor's shape.
type pidWaits struct {
	m map[uint32]*waited
}

type waited struct{ n, ns int64 }

// maxWaitPids bounds the processes whose waits are kept: past it, a new
// process's waits are not counted (its actor's shape weighs its calls
// alone, as a trace without waits does).
const maxWaitPids = 1 << 16

func (w *pidWaits) add(e *event.Event) {
	c := w.m[e.Pid]
	if c == nil {
		if w.m == nil {
			w.m = map[uint32]*waited{}
		}
		if len(w.m) >= maxWaitPids {
			return
		}
		c = &waited{}
		w.m[e.Pid] = c
	}
	c.n++
	c.ns += max(e.End-e.Start, 0)
}

// of is the waits of the processes pids: how many, and their seconds.
func (w *pidWaits) of(pids map[uint32]bool) (n int64, s float64) {
	var ns int64
	for pid := range pids {
		if c := w.m[pid]; c != nil {
			n += c.n
			ns += c.ns
		}
	}
	return n, float64(ns) / 1e9
}

// maxTrackedActors bounds the programs whose shape is tracked during the
// pass, before the tally says which are worth showing: the first ones seen.
// A program first seen after that many others is left out of the actors
// (and the verdict says nothing of it), which takes a trace of very many
// programs where one that starts late moves 2 % of the bytes.
const maxTrackedActors = 64

// actorTracker keeps each program's shape in one layer, in one pass: the
// program's arrivals swept again on their own, as if it ran alone.
type actorTracker struct {
	of     Actors
	index  map[string]*trackedActor
	recent byName[trackedActor]
	actors []*trackedActor
}

type trackedActor struct {
	name        string
	sweep       *profile.Sweep
	shape       profile.ShapeBucket
	pids        map[uint32]bool
	lastPid     uint32
	first, last int64
	any         bool
}

func newActorTracker() *actorTracker { return &actorTracker{index: map[string]*trackedActor{}} }

func (t *actorTracker) add(arr *profile.Arrival) {
	name := t.of.Of(arr.Event)
	a := t.recent.get(name)
	if a == nil {
		a = t.index[name]
		if a == nil {
			if len(t.actors) >= maxTrackedActors {
				return
			}
			a = &trackedActor{name: name, sweep: profile.NewSweep(), pids: map[uint32]bool{}}
			t.index[name] = a
			t.actors = append(t.actors, a)
		}
		t.recent.put(name, a)
	}
	a.sweep.Apply(arr)
	a.shape.Add(arr)
	if arr.Pid != a.lastPid || len(a.pids) == 0 {
		a.pids[arr.Pid], a.lastPid = true, arr.Pid
	}
	if !a.any || arr.Start < a.first {
		a.first = arr.Start
	}
	a.last, a.any = max(a.last, arr.End), true
}

// absorb takes in the same programs' shapes in the other layer.
func (t *actorTracker) absorb(o *actorTracker) {
	for _, oa := range o.actors {
		a := t.index[oa.name]
		if a == nil {
			t.index[oa.name] = oa
			t.actors = append(t.actors, oa)
			continue
		}
		a.shape.Merge(&oa.shape)
		for pid := range oa.pids {
			a.pids[pid] = true
		}
		if oa.any {
			if !a.any || oa.first < a.first {
				a.first = oa.first
			}
			a.last, a.any = max(a.last, oa.last), true
		}
	}
}

// result is the actors the tally picks, each with its shape.
// The waits outside its calls of an actor's processes count with its
// calls' time, as the whole trace's do (ShapeOf's layer rule).
func (t *actorTracker) result(tally *actorTally, waits *pidWaits, origin int64, syscallPartial bool, exp []Expected) []Actor {
	var out []Actor
	for _, k := range tally.pick() {
		a := t.index[k]
		if a == nil {
			continue
		}
		p := a.shape.Profile(syscallPartial)
		p.Waits, p.WaitedS = waits.of(a.pids)
		if actor, ok := newActor(k, p, len(a.pids), a.first, a.last, origin, tally, exp); ok {
			out = append(out, actor)
		}
	}
	return out
}

// newActor is an actor's part of the trace, from its profile builder and
// when it was active.
func newActor(name string, p *profile.Profile, processes int, first, last, origin int64, t *actorTally, exp []Expected) (Actor, bool) {
	s, ok := ShapeOf(p)
	if !ok {
		return Actor{}, false
	}
	return Actor{Name: name, Kernel: name == kernelActorName, Processes: processes, Shape: s, Best: Rank(s, exp)[0],
		StartS:     round3(float64(max(0, first-origin)) / 1e9),
		EndS:       round3(float64(max(0, last-origin)) / 1e9),
		BytesShare: round3(float64(t.bytesOf(name)) / float64(t.total))}, true
}
