package classify

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// Dimension is how one aspect of a trace compares with a pattern.
type Dimension struct {
	Name       string  `json:"name"`
	Trace      string  `json:"trace"`
	Pattern    string  `json:"pattern"`
	Similarity float64 `json:"similarity"` // 0..1
	Why        string  `json:"why"`
	// Differs says in words how the trace differs from the pattern here
	// ("larger requests"), where it does.
	Differs string `json:"differs,omitempty"`
}

// Match is a pattern's score against a trace.
type Match struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Family     string      `json:"family"`
	Kind       string      `json:"kind"`
	Verified   bool        `json:"verified"`
	Score      float64     `json:"score"`
	Dimensions []Dimension `json:"dimensions"`
}

// How far apart is "half as similar" in each dimension, and how much each
// counts. Size and depth are compared in doublings, the rest as fractions.
var dims = []struct {
	name   string
	half   float64 // distance at which similarity is 0.5
	weight float64
}{
	{"block size", 1, 1},  // one doubling
	{"queue depth", 1, 1}, // one doubling
	{"access", 0.3, 1},    // sequential share
	{"read/write", 0.25, 1},
	{"gaps", 0.3, 0.5}, // idle share of the workload's rhythm
}

func similarity(d, half float64) float64 { return math.Exp2(-(d / half) * (d / half)) }

func log2(x float64) float64 { return math.Log2(math.Max(x, 1)) }

// compare scores a trace's shape against a pattern's expected shape.
func compare(t, p Shape) (float64, []Dimension) {
	dist := []float64{
		math.Abs(log2(float64(t.BlockSizeBytes)) - log2(float64(p.BlockSizeBytes))),
		math.Abs(log2(t.QueueDepth) - log2(p.QueueDepth)),
		math.Abs(t.SequentialFraction - p.SequentialFraction),
		math.Abs(t.ReadFraction - p.ReadFraction),
		math.Abs(t.SteadyIdleFraction - p.SteadyIdleFraction),
	}
	texts := [][2]string{
		{sizeText(t.BlockSizeBytes), sizeText(p.BlockSizeBytes)},
		{depthText(t.QueueDepth), depthText(p.QueueDepth)},
		{accessText(t), accessText(p)},
		{pct(t.ReadFraction) + " reads", pct(p.ReadFraction) + " reads"},
		{pct(t.SteadyIdleFraction) + " idle", pct(p.SteadyIdleFraction) + " idle"},
	}
	more := []bool{t.BlockSizeBytes > p.BlockSizeBytes, t.QueueDepth > p.QueueDepth, t.SequentialFraction > p.SequentialFraction,
		t.ReadFraction > p.ReadFraction, t.SteadyIdleFraction > p.SteadyIdleFraction}
	// The score is the weighted geometric mean of the similarities: one
	// dimension far off pulls it down however well the others agree.
	sims, weights := make([]float64, len(dims)), make([]float64, len(dims))
	out := make([]Dimension, len(dims))
	for i, d := range dims {
		s := similarity(dist[i], d.half)
		// A floor, so one dimension at zero does not make the mean's log -Inf.
		sims[i], weights[i] = math.Max(s, 1e-9), d.weight
		out[i] = Dimension{Name: d.name, Trace: texts[i][0], Pattern: texts[i][1], Similarity: round3(s), Why: why(i, dist[i], s)}
		if s < 0.9 {
			out[i].Differs = differs[i][b2i(more[i])]
		}
	}
	return round3(stat.GeometricMean(sims, weights)), out
}

// differs words each dimension's difference: [less, more].
var differs = [][2]string{
	{"smaller requests", "larger requests"},
	{"a shallower queue", "a deeper queue"},
	{"more random access", "more sequential access"},
	{"more writes", "more reads"},
	{"less idle time", "more idle time"},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Weakest is the dimension that keeps m's score lowest.
func (m Match) Weakest() Dimension {
	w := m.Dimensions[0]
	for _, d := range m.Dimensions[1:] {
		if d.Similarity < w.Similarity {
			w = d
		}
	}
	return w
}

// looseness says why a match is loose: its weakest dimension, in words.
func (m Match) looseness() string {
	w := m.Weakest()
	if w.Differs == "" {
		return "no one dimension far off"
	}
	return fmt.Sprintf("%s — %s here, %s in the pattern", w.Differs, w.Trace, w.Pattern)
}

func why(i int, d, s float64) string {
	switch {
	case s >= 0.9:
		return "same"
	case i <= 1:
		return fmt.Sprintf("%.1f doublings apart", d)
	default:
		return fmt.Sprintf("%.0f points apart", d*100)
	}
}

// Rank scores every pattern, best first.
func Rank(t Shape, patterns []Expected) []Match {
	out := make([]Match, 0, len(patterns))
	for _, e := range patterns {
		score, d := compare(t, e.Shape)
		p := e.Pattern
		out = append(out, Match{ID: p.ID, Name: p.Name, Family: p.Family, Kind: p.Kind, Verified: p.Verified, Score: score, Dimensions: d})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	// A pattern whose parameters are measured (verified) wins a near-tie
	// for first against one whose are inferred: an unverified pattern must
	// fit clearly better to be named (a QD1 1 MiB write with some idle
	// time otherwise flips between CrystalDiskMark's SEQ1M Q1T1 and
	// Stibium's guessed whole-file writes on the run's noise).
	if len(out) > 1 && !out[0].Verified {
		for i := 1; i < len(out) && out[0].Score-out[i].Score < verifiedEdge; i++ {
			if out[i].Verified {
				first := out[i]
				copy(out[1:i+1], out[:i])
				out[0] = first
				break
			}
		}
	}
	return out
}

// verifiedEdge is the near-tie a verified pattern wins.
const verifiedEdge = 0.02

func sizeText(b int64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

func depthText(q float64) string { return fmt.Sprintf("QD %g", q) }

func accessText(s Shape) string {
	return fmt.Sprintf("%s (%s sequential)", s.Access, pct(s.SequentialFraction))
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
