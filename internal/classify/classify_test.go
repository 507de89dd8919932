package classify

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

func TestCatalogLoads(t *testing.T) {
	pats, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(pats) < 30 {
		t.Fatalf("%d patterns", len(pats))
	}
	seen := map[string]bool{}
	for _, p := range pats {
		if seen[p.ID] {
			t.Errorf("duplicate id %s", p.ID)
		}
		seen[p.ID] = true
	}
}

func TestExpectedShapes(t *testing.T) {
	exp, err := ExpectedShapes()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exp {
		p, s := e.Pattern, e.Shape
		t.Logf("%-38s %-10s size %8d qd %5.1f seq %.2f read %.2f idle %.2f", p.ID, s.Access, s.BlockSizeBytes, s.QueueDepth, s.SequentialFraction, s.ReadFraction, s.IdleFraction)
		if s.QueueDepth != float64(p.Depth()) {
			t.Errorf("%s: simulated depth %v, want %d", p.ID, s.QueueDepth, p.Depth())
		}
		if s.Access != p.Access {
			t.Errorf("%s: simulated access %s, want %s", p.ID, s.Access, p.Access)
		}
		// Every pattern's own shape ranks its own family first.
		if best := Rank(s, exp)[0]; best.Family != p.Family {
			t.Errorf("%s ranks %s (%s) first", p.ID, best.ID, best.Family)
		}
	}
}

func patternByID(t *testing.T, id string) *Pattern {
	t.Helper()
	pats, _ := Catalog()
	for i := range pats {
		if pats[i].ID == id {
			return &pats[i]
		}
	}
	t.Fatalf("no pattern %s", id)
	return nil
}

// sliceSource replays events kept in memory.
func sliceSource(evs []event.Event) Source {
	return func(emit func(*event.Event)) error {
		for i := range evs {
			e := evs[i]
			emit(&e)
		}
		return nil
	}
}

// twoPhases is an "app launch": small random reads, then a large
// sequential stream, back to back.
func twoPhases(t *testing.T) []event.Event {
	a := Generate(patternByID(t, "cdm-rnd4k-q1t1-read"))
	b := Generate(patternByID(t, "cdm-seq1m-q8t1-read"))
	var end int64
	for _, e := range a {
		end = max(end, e.End)
	}
	for i := range b {
		b[i].Start += end
		b[i].End += end
		b[i].Dispatch += end
	}
	return append(a, b...)
}

func TestClassifyKnownPattern(t *testing.T) {
	res, err := Classify(sliceSource(Generate(patternByID(t, "real-fcp-scrub"))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Matches[0].ID != "real-fcp-scrub" || res.Matches[0].Score < 0.95 {
		t.Fatalf("best %s %.2f", res.Matches[0].ID, res.Matches[0].Score)
	}
	if len(res.Phases) != 1 || len(res.Mixture) != 1 || res.Mixture[0].BytesShare != 1 {
		t.Errorf("one pattern should be one phase and all of the mixture: %+v %+v", res.Phases, res.Mixture)
	}
	for _, d := range res.Matches[0].Dimensions {
		if d.Similarity < 0.9 || d.Why != "same" {
			t.Errorf("dimension %+v", d)
		}
	}
}

func TestClassifyPhasesAndMixture(t *testing.T) {
	res, err := Classify(sliceSource(twoPhases(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 2 {
		t.Fatalf("phases: %+v", res.Phases)
	}
	if res.Phases[0].Best.Family != "rnd4k-q1" || res.Phases[1].Best.Family != "seq1m-q8" {
		t.Errorf("phase families %s, %s", res.Phases[0].Best.Family, res.Phases[1].Best.Family)
	}
	if res.Phases[0].EndS > res.Phases[1].StartS+1e-9 {
		t.Errorf("phases overlap: %+v", res.Phases)
	}
	// By bytes the stream dominates (1 MiB vs 4 KiB I/Os, equal counts);
	// by time the small random reads take a fair share.
	shares := map[string]Share{}
	for _, s := range res.Mixture {
		shares[s.Family] = s
	}
	rnd, seq := shares["rnd4k-q1"], shares["seq1m-q8"]
	if seq.BytesShare < 0.95 || rnd.BytesShare > 0.05 {
		t.Errorf("bytes shares: random %v, sequential %v", rnd.BytesShare, seq.BytesShare)
	}
	if rnd.TimeShare < 0.15 || rnd.TimeShare+seq.TimeShare < 0.99 {
		t.Errorf("time shares: random %v, sequential %v", rnd.TimeShare, seq.TimeShare)
	}
}

func TestScoreDimensions(t *testing.T) {
	base := Shape{Access: "random", BlockSizeBytes: 4096, QueueDepth: 1, ReadFraction: 1}
	same, _ := compare(base, base)
	if same != 1 {
		t.Fatalf("identical shapes score %v", same)
	}
	for _, c := range []struct {
		name  string
		other Shape
		dim   int
		want  float64
	}{
		{"one size doubling", Shape{BlockSizeBytes: 8192, QueueDepth: 1, ReadFraction: 1}, 0, 0.5},
		{"two depth doublings", Shape{BlockSizeBytes: 4096, QueueDepth: 4, ReadFraction: 1}, 1, 1.0 / 16},
		{"all writes", Shape{BlockSizeBytes: 4096, QueueDepth: 1, ReadFraction: 0}, 3, 1.0 / 65536},
	} {
		score, d := compare(base, c.other)
		if math.Abs(d[c.dim].Similarity-c.want) > 0.001 || score >= 1 {
			t.Errorf("%s: similarity %v (want %v), score %v", c.name, d[c.dim].Similarity, c.want, score)
		}
	}
}

func TestDriveEstimate(t *testing.T) {
	d, err := ADMResults("test SSD", []float64{6000, 2000, 900, 50}, []float64{5000, 1800, 800, 120})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Classify(sliceSource(Generate(patternByID(t, "cdm-rnd4k-q1t1-read"))), Options{Drive: d})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Drive
	if e.Headline.ID != "adm-seq1m-qd8-read" || e.Headline.Applies {
		t.Errorf("headline %+v", e.Headline)
	}
	// All bytes at the drive's RND4K QD1 read rate.
	if len(e.Components) != 1 || e.Components[0].ResultID != "adm-rnd4k-qd1-read" {
		t.Fatalf("components %+v", e.Components)
	}
	want := float64(res.Shape.Bytes) / 50e6
	if math.Abs(e.DeviceS-want) > 0.002 || e.ThroughputMBs > 50 {
		t.Errorf("device time %v, want %v; throughput %v", e.DeviceS, want, e.ThroughputMBs)
	}
	if !strings.Contains(e.Headline.Note, "does not apply") {
		t.Errorf("note %q", e.Headline.Note)
	}
	if _, err := ADMResults("", []float64{1, 2}, nil); err == nil {
		t.Error("three numbers accepted")
	}
	if _, err := ReadDriveResults(strings.NewReader(`{"results": {"no-such-pattern": 5}}`)); err == nil {
		t.Error("unknown pattern accepted")
	}
}

// One layer alone (a window with only writeback, or only cached reads)
// still has a shape.
func TestShapeOneLayer(t *testing.T) {
	evs := Generate(patternByID(t, "cdm-seq1m-q1t1-write"))
	for _, layer := range []event.Layer{event.Block, event.Syscall} {
		b := profile.NewBuilder(profile.Options{})
		for i := range evs {
			if evs[i].Layer == layer {
				b.Add(&evs[i])
			}
		}
		s, ok := ShapeOf(b.Finish())
		if !ok || s.Layer != layer.String() || s.BlockSizeBytes != 1<<20 {
			t.Errorf("%s only: %+v", layer, s)
		}
	}
	if _, ok := ShapeOf(profile.NewBuilder(profile.Options{}).Finish()); ok {
		t.Error("empty profile has a shape")
	}
}

// A trace of one pattern gets "Shaped like" it; two phases of different
// programs get a verdict that says nothing fits and leads with the split,
// and an actor each, with the shape of its own I/O.
func TestVerdictAndActors(t *testing.T) {
	one, err := Classify(sliceSource(Generate(patternByID(t, "real-fcp-scrub"))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !one.Verdict.Fits || !strings.HasPrefix(one.Verdict.Text, "Shaped like "+one.Matches[0].Name) || len(one.Actors) != 0 {
		t.Errorf("one pattern: verdict %+v, actors %+v", one.Verdict, one.Actors)
	}

	evs := twoPhases(t)
	for i := range evs {
		evs[i].Comm, evs[i].Pid = "reader", 10
		if evs[i].Bytes >= 1<<20 {
			evs[i].Comm, evs[i].Pid = "streamer", 20
		}
	}
	res, err := Classify(sliceSource(evs), Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict.Text
	// Three quarters of the time streams: the verdict leads with that,
	// says how loosely it fits the whole and why, and names the rest.
	if res.Verdict.Fits || !strings.HasPrefix(v, "Mostly like ") || !strings.Contains(v, "% of the I/O time, a loose fit") ||
		!strings.Contains(v, " here, ") || !strings.Contains(v, "2 phases") || !strings.Contains(v, "like "+res.Phases[0].Best.Name) {
		t.Errorf("verdict %q", v)
	}
	if len(res.Actors) != 2 {
		t.Fatalf("actors %+v", res.Actors)
	}
	byName := map[string]Actor{}
	for _, a := range res.Actors {
		byName[a.Name] = a
	}
	r, s := byName["reader"], byName["streamer"]
	if r.Best.Family != "rnd4k-q1" || s.Best.Family != "seq1m-q8" || r.Shape.Access != "random" || s.Shape.Access != "sequential" {
		t.Errorf("reader %s %s, streamer %s %s", r.Best.Family, r.Shape.Access, s.Best.Family, s.Shape.Access)
	}
	if r.Processes != 1 || s.BytesShare < 0.95 || r.EndS > s.StartS+0.01 || res.Actors[0].Name != "streamer" {
		t.Errorf("actors %+v", res.Actors)
	}
}

// A program's waits outside its calls count with its calls in its own
// shape, as in the whole trace's: its block requests, done while it
// waited in sync(2) or a fault, are not work done while it ran on.
func TestActorWaitsOutsideCalls(t *testing.T) {
	var evs []event.Event
	at := int64(0)
	for i := int64(0); i < 20; i++ { // the app: 1 ms calls, 5 ms requests
		evs = append(evs,
			event.Event{Layer: event.Syscall, Call: event.CallRead, Op: event.Read, Start: at, End: at + 1e6, Size: 64 << 10, Bytes: 64 << 10, Offset: i << 16, Pid: 10, Tid: 10, Comm: "app"},
			event.Event{Layer: event.Block, Op: event.Read, Start: at + 2e6, End: at + 7e6, Size: 64 << 10, Bytes: 64 << 10, Offset: 1<<30 + i<<16, Pid: 10, Tid: 10, Comm: "app"})
		at += 10e6
	}
	for i := int64(0); i < 40; i++ { // another program, for a second actor
		evs = append(evs, event.Event{Layer: event.Syscall, Call: event.CallWrite, Op: event.Write, Start: at, End: at + 1e5, Size: 1 << 20, Bytes: 1 << 20, Offset: i << 20, Pid: 20, Tid: 20, Comm: "writer"})
		at += 2e5
	}
	layerOf := func(evs []event.Event) (string, string) {
		t.Helper()
		res, err := Classify(sliceSource(evs), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Actors {
			if a.Name == "app" {
				return a.Shape.Layer, a.Shape.LayerReason
			}
		}
		t.Fatalf("no actor app: %+v", res.Actors)
		return "", ""
	}
	if l, why := layerOf(evs); l != "block" || !strings.Contains(why, "while the program ran on") {
		t.Errorf("without waits: layer %s (%s), want block", l, why)
	}
	waited := append(evs, event.Event{Layer: event.Syscall, Call: event.CallWait, Op: event.Other, Start: at, End: at + 100e6, Pid: 10, Tid: 10, Comm: "app"},
		event.Event{Layer: event.Syscall, Call: event.CallWait, Op: event.Other, Start: at, End: at + 500e6, Pid: 30, Tid: 30, Comm: "idle"})
	if l, why := layerOf(waited); l != "syscall" {
		t.Errorf("with its 0.1 s wait: layer %s (%s), want syscall", l, why)
	}
}

// A verified pattern wins a near-tie for first against an inferred one,
// and only a near-tie: a sequential 1 MiB QD1 write with 26 % idle time
// (fio under bpftrace) is CrystalDiskMark's SEQ1M Q1T1, not Stibium's
// guessed whole-file writes; with Stibium's gaps clearly there, it is
// Stibium's.
func TestVerifiedWinsNearTies(t *testing.T) {
	exp, err := ExpectedShapes()
	if err != nil {
		t.Fatal(err)
	}
	s := Shape{Layer: "syscall", BlockSizeBytes: 1 << 20, QueueDepth: 1, SequentialFraction: 0.98, ReadFraction: 0, SteadyIdleFraction: 0.263, Access: "sequential"}
	m := Rank(s, exp)
	if m[0].Family != "seq1m-q1" || !m[0].Verified {
		t.Errorf("best %s (%s, %.3f), then %s (%.3f)", m[0].ID, m[0].Family, m[0].Score, m[1].ID, m[1].Score)
	}
	var stibium float64
	for _, x := range m {
		if x.ID == "stibium-whole-file-write" {
			stibium = x.Score
		}
	}
	if !(stibium > m[0].Score && stibium-m[0].Score < verifiedEdge) {
		t.Errorf("not a near-tie: Stibium %.3f, %s %.3f", stibium, m[0].ID, m[0].Score)
	}
	for i := 1; i < len(m); i++ {
		if m[i].Score > m[i-1].Score && i > 1 {
			t.Fatalf("below the first, not by score: %s %.3f after %s %.3f", m[i].ID, m[i].Score, m[i-1].ID, m[i-1].Score)
		}
	}
	s.SteadyIdleFraction = 0.5
	if m := Rank(s, exp); m[0].Family != "stibium-whole-file" {
		t.Errorf("with the gaps clearly there: best %s (%.3f)", m[0].ID, m[0].Score)
	}
}

// The slices widen as the trace goes on (merging neighbours exactly), each
// layer's on its own, and the layers' are joined at the end: the windows
// are those of slices that were that wide from the start, and there are
// at most Windows of them, more than half that many on a busy trace.
func TestSlicesWidenExactly(t *testing.T) {
	evs := twoPhases(t)
	for i := range evs { // both layers
		if i%3 == 0 {
			evs[i].Layer = event.Syscall
		}
	}
	exp, err := ExpectedShapes()
	if err != nil {
		t.Fatal(err)
	}
	run := func(minW int64) (*slicer, []window) {
		pass := NewPass(Options{MinWindowNs: minW})
		b := profile.NewBuilder(pass.Attach(profile.Options{Parallel: true}))
		for i := range evs {
			pass.Add(&evs[i])
			b.Add(&evs[i])
		}
		b.Finish()
		s := pass.slices[event.Block]
		s.absorb(pass.slices[event.Syscall])
		return s, s.windows(false, "syscall", exp)
	}
	grown, wins := run(1e6)
	if grown.width == 1e6 {
		t.Fatalf("the slices never widened (span %v)", evs[len(evs)-1].End-evs[0].Start)
	}
	direct, want := run(grown.width)
	if direct.width != grown.width || !reflect.DeepEqual(wins, want) {
		t.Errorf("widened slices differ from slices %d ns wide from the start:\n%+v\n%+v", grown.width, wins, want)
	}
	if len(wins) > 48 || len(wins) <= 24 {
		t.Errorf("%d windows, want 25–48", len(wins))
	}
	for i, w := range wins {
		if i > 0 && w.idx <= wins[i-1].idx {
			t.Fatalf("windows out of order: %+v", wins)
		}
	}
}

// The verdict reads as one thought: it never names a share of the time of
// 0 %, and a loose fit names the dimension that keeps it loose.
func TestVerdictWording(t *testing.T) {
	m := func(id, family string, score float64, size int64) Match {
		_, dims := compare(Shape{BlockSizeBytes: size, QueueDepth: 1, SequentialFraction: 0, ReadFraction: 1, SteadyIdleFraction: 0.5},
			Shape{BlockSizeBytes: 512 << 10, QueueDepth: 1, SequentialFraction: 0, ReadFraction: 1, SteadyIdleFraction: 0.5})
		return Match{ID: id, Name: id + " name", Family: family, Score: score, Dimensions: dims}
	}
	scrub := m("real-fcp-scrub", "scrub", 0.57, 4<<20)
	other := m("cdm-rnd4k", "rnd4k", 0.3, 4<<20)
	for _, c := range []struct {
		name      string
		r         Result
		want, not []string
	}{
		{"mostly one, loose", Result{Matches: []Match{scrub, other}, Mixture: []Share{{ID: scrub.ID, Name: scrub.Name, Family: "scrub", TimeShare: 0.91}, {ID: other.ID, Name: other.Name, Family: "rnd4k", TimeShare: 0.09}}},
			[]string{"Mostly like real-fcp-scrub name — 91% of the I/O time, a loose fit (0.57): larger requests — 4 MiB here, 512 KiB in the pattern."}, []string{"0%", "closest"}},
		{"best takes no time", Result{Matches: []Match{scrub, other}, Mixture: []Share{{ID: other.ID, Name: other.Name, Family: "rnd4k", TimeShare: 0.45}, {ID: "x", Name: "x name", Family: "x", TimeShare: 0.4}}},
			[]string{"No single benchmark pattern fits the whole trace: the closest, real-fcp-scrub name, scores 0.57 (larger requests"}, []string{" 0% of"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := verdictOf(&c.r).Text
			for _, w := range c.want {
				if !strings.Contains(v, w) {
					t.Errorf("%q lacks %q", v, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(v, w) {
					t.Errorf("%q has %q", v, w)
				}
			}
		})
	}
}

// The classified layer is the one that carries the drive's work, and the
// shape says why; the other layer is shown where it looks different.
func TestLayerCarryingTheWork(t *testing.T) {
	layer := func(ios, bytes, size int64, seq, busy float64) *profile.Layer {
		l := &profile.Layer{IOs: ios, Reads: ios, ReadBytes: bytes, ReadFractionByBytes: 1, SequentialFraction: seq, SpanS: 10}
		l.SizeBytes.P50ByBytes = size
		l.QueueDepth.P50, l.QueueDepth.BusyS = 1, busy
		return l
	}
	for _, c := range []struct {
		name      string
		sys, blk  *profile.Layer
		layer     string
		reason    string
		otherShow bool
	}{
		{"app start: the drive moved far more than asked", layer(900, 2600<<10, 8<<10, 0.1, 0.2), layer(4000, 362<<20, 1<<20, 0.6, 6), "block", "the calls asked for", true},
		{"a benchmark's parent paged in its binary", layer(5500, 21<<20, 4<<10, 0.03, 0.29), layer(5700, 85<<20, 1<<20, 0.05, 0.4), "syscall", "what the calls asked for", true},
		{"a player's reads enlarged by readahead", layer(9300, 25<<20, 72<<10, 0.02, 0.12), layer(125, 65<<20, 1<<20, 0.65, 0.07), "block", "readahead around their reads", true},
		{"faults: the drive busy far longer than the calls", layer(900, 100<<20, 64<<10, 0.1, 0.5), layer(1000, 120<<20, 128<<10, 0.2, 4), "block", "while the program ran on", false},
		// CI's tar -x of 3,000 files + sync on a slow moment of a VM disk:
		// the writeback took 0.27 s inside sync(2), the calls 0.05 s.
		{"sync waited for the writeback", layer(9300, 33<<20, 10<<10, 0.68, 0.05), layer(58, 35<<20, 1100<<10, 0.55, 0.27), "syscall", "what the calls asked for", true},
		{"page cache absorbed the calls", layer(10000, 1<<30, 128<<10, 0.9, 1), layer(100, 10<<20, 128<<10, 0.9, 0.5), "block", "page cache absorbed", false},
		{"a copy: what was asked for", layer(2000, 2<<30, 1<<20, 0.99, 9), layer(2100, 2<<30, 1<<20, 0.99, 8), "syscall", "what the calls asked for", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &profile.Profile{Syscall: c.sys, Block: c.blk}
			switch c.name { // who asked, and what the drive did for each
			case "sync waited for the writeback":
				p.Waits, p.WaitedS = 1, 0.27
			case "a benchmark's parent paged in its binary":
				p.Processes = []profile.Process{{Pid: 2, Comm: "fio", SyscallReadBytes: 21 << 20, BlockReadBytes: 21 << 20}, {Pid: 1, Comm: "fio", SyscallReadBytes: 60 << 10, BlockReadBytes: 64 << 20}}
			case "a player's reads enlarged by readahead":
				p.Processes = []profile.Process{{Pid: 3, Comm: "ffmpeg", SyscallReadBytes: 12 << 20, BlockReadBytes: 31 << 20}, {Pid: 4, Comm: "ffmpeg", SyscallReadBytes: 13 << 20, BlockReadBytes: 34 << 20}}
			}
			s, ok := ShapeOf(p)
			if !ok || s.Layer != c.layer || !strings.Contains(s.LayerReason, c.reason) {
				t.Fatalf("layer %q (%q), want %q (%q)", s.Layer, s.LayerReason, c.layer, c.reason)
			}
			if _, ok := OtherLayer(p, s); ok != c.otherShow {
				t.Errorf("other layer shown: %v, want %v", ok, c.otherShow)
			}
			if p.WaitedS > 0 { // without the wait, the drive's work was outside the calls
				p.Waits, p.WaitedS = 0, 0
				if s, _ := ShapeOf(p); s.Layer != "block" {
					t.Errorf("without the waits: layer %q (%q), want block", s.Layer, s.LayerReason)
				}
			}
		})
	}
}
