package webreport

import (
	"fmt"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/units"
)

// maxOffsetMaps is how many devices get an offset map (the busiest).
const maxOffsetMaps = 4

// reportView is what the report template shows, in its order.
type reportView struct {
	Headline   *headlineView
	DriveNote  string
	Prediction *predictionView
	Drives     *drivesView
	Cards      []cardView
	Sizes      []chartView
	Depth      []chartView
	Latency    []chartView
	Throughput []chartView
	OffsetNote string
	Offsets    []chartView
	Class      *classView
	LayerBytes []chartView
	Processes  []processView
	Devices    []deviceView
}

type headlineView struct {
	Fits                                                                  bool
	Verdict                                                               string
	Match, Access, Block, QueueDepth, DriveQueueDepth, Reads, Idle, Layer string
	LayerReason, Beside                                                   string // why that layer; the other's shape, where it differs
}

type cardView struct{ K, V string }

// predictionView is the workload predicted on a drive profile.
type predictionView struct {
	Drive, Predicted, Range, Source, Recorded, IOBound, Headline, Tracks string
	Phases                                                               []predictionPhaseView
	Notes                                                                []string
}

type predictionPhaseView struct{ From, To, Recorded, Predicted, Pattern string }

func predictionOf(r *predict.Result) *predictionView {
	v := &predictionView{Drive: r.Drive, Predicted: units.Micros(r.PredictedS * 1e6), Recorded: units.Micros(r.RecordedS * 1e6),
		Range: units.Micros(r.PredictedLowS*1e6) + " and " + units.Micros(r.PredictedHighS*1e6), Source: r.Source,
		IOBound: units.Percent(r.IOBoundShare), Headline: units.Micros(r.HeadlineS * 1e6), Notes: r.Notes}
	if r.Tracks != "" {
		v.Tracks = fmt.Sprintf("%s (%s of the time spent waiting for this drive)", r.Tracks, units.Percent(r.TracksShare))
	}
	if len(r.Phases) > 1 {
		for _, p := range r.Phases {
			v.Phases = append(v.Phases, predictionPhaseView{From: units.Num(p.FromS, 2), To: units.Num(p.ToS, 2),
				Recorded: units.Micros(p.RecordedS * 1e6), Predicted: units.Micros(p.PredictedS * 1e6), Pattern: p.Pattern})
		}
	}
	return v
}

// Report builds the page for one analysed trace.
func Report(a *report.Analysis, o Options) *Page {
	if o.Top <= 0 {
		o.Top = 8
	}
	s := a.Show
	t := s.Trace
	p := &Page{Title: "Trace " + t.Name(), Subtitle: subtitle(t), Banners: traceBanners(t), Nav: o.Nav, nonce: o.Nonce}
	if t.Label != "" && t.ID != "" {
		p.Title = fmt.Sprintf("%s (%s)", t.Label, t.ID)
	}
	v := &reportView{}
	p.report = v
	// add(to)(c, ok) keeps a chart for the page's data and its view in to.
	add := func(to *[]chartView) func(chart, bool) {
		return func(c chart, ok bool) {
			if ok {
				p.Charts = append(p.Charts, c)
				*to = append(*to, c.view(o.Nonce))
			}
		}
	}

	// A metric the capture cannot show gets "n/a" and no chart, not zeros
	// (the banner says why).
	lacks := func(field string) bool {
		for _, lp := range layers(s.Profile) {
			if !lp.l.LacksField(field) {
				return false
			}
		}
		return true
	}
	orNA := func(l *profile.Layer, field, text string) string {
		if l.LacksField(field) {
			return "n/a"
		}
		return text
	}
	// What it is, in a line, and the drive's verdict first: the question
	// people open the report with.
	if a.Class != nil {
		sh := a.Class.Shape
		v.Headline = &headlineView{
			Fits: a.Class.Verdict.Fits, Verdict: a.Class.Verdict.Text,
			Match: a.Class.Matches[0].Name, Access: sh.Access, Block: units.Bytes(sh.BlockSizeBytes),
			QueueDepth: units.Num(sh.QueueDepth, 1), DriveQueueDepth: units.Num(sh.DeviceQueueDepth, 1),
			Reads: units.Percent(sh.ReadFraction), Idle: units.Percent(sh.IdleFraction), Layer: sh.Layer, LayerReason: sh.LayerReason,
		}
		if o := a.Class.OtherLayer; o != nil {
			v.Headline.Beside = report.ShapeText(*o)
		}
		if lacks("queue_depth") {
			v.Headline.QueueDepth, v.Headline.DriveQueueDepth, v.Headline.Idle = "n/a", "n/a", "n/a"
		}
		if lacks("read_fraction") {
			v.Headline.Reads = "n/a"
		}
		if d := a.Class.Drive; d != nil {
			v.DriveNote = d.Headline.Note
		}
	}
	if a.Prediction != nil {
		v.Prediction = predictionOf(a.Prediction)
	}
	if a.Drives != nil {
		v.Drives = drivesOf(a.Drives)
		add(&v.Drives.Chart)(drivesChart("drives", a.Drives), true)
	}
	for _, lp := range layers(s.Profile) {
		l := lp.l
		v.Cards = append(v.Cards,
			cardView{lp.name + " I/Os", units.Count(l.IOs)},
			cardView{lp.name + " bytes", orNA(l, "size_bytes", units.Bytes(l.ReadBytes+l.WriteBytes))},
			cardView{lp.name + " QD p50 / max", orNA(l, "queue_depth", units.Num(l.QueueDepth.P50, 1)+" / "+units.Count(int64(l.QueueDepth.Max)))},
			cardView{lp.name + " latency p50 / p99", orNA(l, "latency_us", units.Micros(l.LatencyUs.P50)+" / "+units.Micros(l.LatencyUs.P99))})
		if l.LacksField("size_bytes") {
			continue
		}
		id := "sizes_asked"
		if lp.name == driveName {
			id = "sizes_drive"
		}
		add(&v.Sizes)(sizeChart(id, lp), true)
	}
	if !lacks("queue_depth") {
		add(&v.Depth)(depthTimeChart("depth_time", s.Profile))
		add(&v.Depth)(depthDistChart("depth_dist", s.Profile))
	}
	if !lacks("latency_us") {
		add(&v.Latency)(latencyChart("latency", s.Profile))
	}
	var phases []classify.Phase
	if a.Class != nil {
		phases = a.Class.Phases
	}
	if !lacks("iops") {
		add(&v.Throughput)(throughputChart("throughput", s.Profile, phases))
	}
	if s.Series != nil && !lacks("sequential_fraction") {
		maps := s.Series.Offsets
		if len(maps) > maxOffsetMaps {
			v.OffsetNote = fmt.Sprintf("Offset maps for the %d busiest of %d devices.", maxOffsetMaps, len(maps))
			maps = busiest(maps, maxOffsetMaps)
		}
		for i, m := range maps {
			add(&v.Offsets)(offsetChart(fmt.Sprintf("offsets_%d", i), m), true)
		}
	}
	if a.Class != nil {
		ranking := rankingChart("ranking", a.Class, o.Top)
		p.Charts = append(p.Charts, ranking)
		v.Class = newClassView(a, ranking.view(o.Nonce), min(5, o.Top))
	}
	add(&v.LayerBytes)(layerBytesChart("layer_bytes", s.Profile))
	v.Processes = processViews(a.Show.Processes)
	v.Devices = deviceViews(a.Show.Devices)
	return p
}
