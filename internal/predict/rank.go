package predict

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ioshape/ioshape/internal/drive"
)

// Bounds is a drive's profile with the profiles at either end of its
// range (drive.Spec.Bound).
type Bounds struct {
	Mid, Low, High *drive.Spec
}

// BoundsOf is d with its ends.
func BoundsOf(d *drive.Spec) Bounds {
	return Bounds{Mid: d, Low: d.Bound(drive.Low), High: d.Bound(drive.High)}
}

// Specs is the three profiles, for Stream.
func (b Bounds) Specs() []*drive.Spec { return []*drive.Spec{b.Mid, b.Low, b.High} }

// PredictRange predicts on a drive and its range: the prediction at each
// end of what its profile leaves open, the least and the most of the
// three taken as the range, and never narrower than the model's median
// error either way.
func (b *Builder) PredictRange(from *drive.Spec, to Bounds, recordedNs int64, phases []Boundary) (*Result, error) {
	res, err := b.Predict(from, to.Mid, recordedNs, phases)
	if err != nil {
		return nil, err
	}
	lo, hi := res.PredictedS, res.PredictedS
	for _, d := range []*drive.Spec{to.Low, to.High} {
		r, err := b.Predict(from, d, recordedNs, phases)
		if err != nil {
			return nil, err
		}
		lo, hi = math.Min(lo, r.PredictedS), math.Max(hi, r.PredictedS)
	}
	// The model's own error is known too: at least its median error on
	// the validation drives either way (drive.BenchUncertainty).
	u := drive.BenchUncertainty
	res.PredictedLowS = round(math.Min(lo, res.PredictedS/(1+u)))
	res.PredictedHighS = round(math.Max(hi, res.PredictedS*(1+u)))
	res.HeadlineMBs = round(to.Mid.Headline("read"))
	if res.Tracks != "" {
		if v := to.Mid.Figure(res.Tracks); !math.IsNaN(v) {
			res.TracksMBs = round(v)
		}
	}
	res.Source = SourceOf(to.Mid)
	res.profile = to.Mid
	return res, nil
}

// SourceOf says where a profile came from.
func SourceOf(d *drive.Spec) string {
	switch {
	case d.Provenance != nil:
		return d.Provenance.String()
	case d.Coarse:
		return d.Tool
	}
	return "bench (" + d.Tool + ")"
}

// Ranking is one trace predicted on several drives, the fastest first.
type Ranking struct {
	Drives []*Result `json:"drives"`
	// HeadlineOrderDiffers: ranked by their headline rates, the drives
	// would come in another order; Note says how in a sentence.
	HeadlineOrderDiffers bool   `json:"headline_order_differs"`
	Note                 string `json:"note,omitempty"`
}

// Rank orders predictions by predicted time and says where the headline
// rates would order them otherwise.
func Rank(rs []*Result) (*Ranking, error) {
	if len(rs) == 0 {
		return nil, errors.New("no drives to rank")
	}
	out := &Ranking{Drives: append([]*Result(nil), rs...)}
	sort.SliceStable(out.Drives, func(i, j int) bool { return out.Drives[i].PredictedS < out.Drives[j].PredictedS })
	ds := out.Drives
	for i := range ds {
		for j := i + 1; j < len(ds); j++ {
			// i finishes first (by more than a rounding) though its
			// headline is lower.
			if ds[i].PredictedS < ds[j].PredictedS*0.995 && ds[i].HeadlineMBs < ds[j].HeadlineMBs {
				out.HeadlineOrderDiffers = true
				out.Note = fmt.Sprintf("The drive with the lower headline finishes this work first: %s (%.0f MB/s) in %s, %s (%.0f MB/s) in %s — %s.",
					ds[i].Drive, ds[i].HeadlineMBs, secsText(ds[i].PredictedS), ds[j].Drive, ds[j].HeadlineMBs, secsText(ds[j].PredictedS), why(ds[i], ds[j]))
				return out, nil
			}
		}
	}
	return out, nil
}

// why says what decides the order where the headline does not: the
// number the work tracks on the faster drive, or — where that is the
// headline's own test — the rest of its requests.
func why(fast, slow *Result) string {
	if fast.Tracks == "" || strings.HasPrefix(fast.Tracks, headlineTest) {
		return "the headline's SEQ1M Q8T1 does not decide it: the work's other requests do"
	}
	return fmt.Sprintf("the work tracks %s there (%.1f MB/s against %.1f MB/s), not the headline's SEQ1M Q8T1", fast.Tracks, fast.TracksMBs, slowFigure(slow, fast.Tracks))
}

// headlineTest is the test a drive's headline is.
const headlineTest = "SEQ1M Q8T1 read"

// slowFigure is the slower drive's figure for a test (NaN where unknown).
func slowFigure(slow *Result, test string) float64 {
	if slow.profile == nil {
		return math.NaN()
	}
	return round(slow.profile.Figure(test))
}

func secsText(s float64) string {
	switch {
	case s >= 10:
		return fmt.Sprintf("%.1f s", s)
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.0f ms", s*1000)
}
