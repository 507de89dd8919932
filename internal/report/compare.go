package report

import (
	"fmt"
	"math"
	"time"

	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/units"
)

// Comparison is `ioshape compare`: traces side by side, the first being the
// baseline the others are measured against.
type Comparison struct {
	Traces []ComparedTrace `json:"traces"`
	// Changes say in sentences what changed from the first trace: bytes
	// at the drive, its I/O time and the share of the run it took, the
	// pattern.
	Changes []string     `json:"changes"`
	Rows    []CompareRow `json:"rows"`
	// Drives is each trace predicted on the drives given, fastest first
	// (null for a trace, or absent, with one drive or none).
	Drives []*predict.Ranking `json:"drives,omitempty"`
}

// ComparedTrace names one trace and its best matches.
type ComparedTrace struct {
	ID         string      `json:"id"`
	Label      string      `json:"label,omitempty"`
	Path       string      `json:"path"`
	Target     string      `json:"target"`
	Start      *time.Time  `json:"start"`
	LostEvents int64       `json:"lost_events"`
	Complete   bool        `json:"complete"`
	Shape      string      `json:"shape,omitempty"`
	Best       []BestMatch `json:"best_matches"`
}

// BestMatch is one of a trace's best-matching patterns.
type BestMatch struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// CompareRow is one measure across the traces. Values are null where a
// trace has no such data (no block I/O, say). Change is each value's
// relative difference from the first trace's (for fractions, the
// difference in points). Matters marks rows where some trace differs from
// the first by at least 10% (10 points for fractions).
type CompareRow struct {
	Key     string     `json:"key"`
	Name    string     `json:"name"`
	Unit    string     `json:"unit"`
	Values  []*float64 `json:"values"`
	Change  []*float64 `json:"change"`
	Matters bool       `json:"matters"`
}

// Units of CompareRow values.
const (
	UnitBytes    = "bytes"
	UnitCount    = "count"
	UnitMicros   = "us"
	UnitSeconds  = "s"
	UnitFraction = "fraction"
	UnitDepth    = "depth"
	UnitMBs      = "MB/s"
)

type measure struct {
	key, name, unit string
	get             func(a *Analysis) (float64, bool)
}

func layerMeasure(key, name, unit string, block bool, f func(l *profile.Layer) float64) measure {
	return measure{key, name, unit, func(a *Analysis) (float64, bool) {
		l := a.Show.Syscall
		if block {
			l = a.Show.Block
		}
		if l == nil || l.IOs == 0 {
			return 0, false
		}
		return f(l), true
	}}
}

// measures are the differences that matter between two launches or two
// copies, in the order they are shown.
var measures = []measure{
	{"duration_s", "duration", UnitSeconds, func(a *Analysis) (float64, bool) {
		return a.Show.Trace.DurationS, a.Show.Trace.Complete
	}},
	layerMeasure("syscall_read_bytes", "bytes read (asked)", UnitBytes, false, func(l *profile.Layer) float64 { return float64(l.ReadBytes) }),
	layerMeasure("block_read_bytes", "bytes read (drive)", UnitBytes, true, func(l *profile.Layer) float64 { return float64(l.ReadBytes) }),
	layerMeasure("syscall_write_bytes", "bytes written (asked)", UnitBytes, false, func(l *profile.Layer) float64 { return float64(l.WriteBytes) }),
	layerMeasure("block_write_bytes", "bytes written (drive)", UnitBytes, true, func(l *profile.Layer) float64 { return float64(l.WriteBytes) }),
	layerMeasure("syscall_ios", "I/Os (asked)", UnitCount, false, func(l *profile.Layer) float64 { return float64(l.IOs) }),
	layerMeasure("block_ios", "I/Os (drive)", UnitCount, true, func(l *profile.Layer) float64 { return float64(l.IOs) }),
	{"block_size", "block size (by bytes)", UnitBytes, func(a *Analysis) (float64, bool) {
		if a.Class == nil {
			return 0, false
		}
		return float64(a.Class.Shape.BlockSizeBytes), true
	}},
	layerMeasure("syscall_qd_p50", "queue depth asked (p50)", UnitDepth, false, func(l *profile.Layer) float64 { return l.QueueDepth.P50 }),
	layerMeasure("block_qd_p50", "queue depth at drive (p50)", UnitDepth, true, func(l *profile.Layer) float64 { return l.QueueDepth.P50 }),
	layerMeasure("block_qd_max", "queue depth at drive (max)", UnitDepth, true, func(l *profile.Layer) float64 { return float64(l.QueueDepth.Max) }),
	layerMeasure("syscall_latency_p50", "latency asked (p50)", UnitMicros, false, func(l *profile.Layer) float64 { return l.LatencyUs.P50 }),
	layerMeasure("block_latency_p50", "latency at drive (p50)", UnitMicros, true, func(l *profile.Layer) float64 { return l.LatencyUs.P50 }),
	layerMeasure("block_latency_p99", "latency at drive (p99)", UnitMicros, true, func(l *profile.Layer) float64 { return l.LatencyUs.P99 }),
	{"random_fraction", "random I/O", UnitFraction, func(a *Analysis) (float64, bool) {
		if a.Class == nil {
			return 0, false
		}
		return round3(1 - a.Class.Shape.SequentialFraction), true
	}},
	{"read_fraction", "reads (by bytes)", UnitFraction, func(a *Analysis) (float64, bool) {
		if a.Class == nil {
			return 0, false
		}
		return a.Class.Shape.ReadFraction, true
	}},
	{"idle_fraction", "idle time", UnitFraction, func(a *Analysis) (float64, bool) {
		if a.Class == nil {
			return 0, false
		}
		return a.Class.Shape.IdleFraction, true
	}},
	layerMeasure("block_throughput", "drive throughput", UnitMBs, true, func(l *profile.Layer) float64 { return l.ThroughputMBs }),
	layerMeasure("block_busy_s", "I/O time at the drive (busy)", UnitSeconds, true, func(l *profile.Layer) float64 { return l.QueueDepth.BusyS }),
	{"waiting_fraction", "share of the run the drive was busy", UnitFraction, func(a *Analysis) (float64, bool) {
		if l := a.Show.Block; l != nil && l.IOs > 0 && a.Show.Trace.DurationS > 0 {
			return round3(min(1, l.QueueDepth.BusyS/a.Show.Trace.DurationS)), true
		}
		return 0, false
	}},
	{"reads_from_cache", "reads served by the cache", UnitFraction, func(a *Analysis) (float64, bool) {
		pc := a.Show.PageCache
		return pc.ReadsFromCache, pc.SyscallReadBytes > 0
	}},
	{"predicted", "predicted on the drive", UnitMicros, func(a *Analysis) (float64, bool) {
		if a.Prediction == nil {
			return 0, false
		}
		return a.Prediction.PredictedS * 1e6, true
	}},
	{"headline_predicted", "headline prediction (SEQ1M Q8T1)", UnitMicros, func(a *Analysis) (float64, bool) {
		if a.Prediction == nil {
			return 0, false
		}
		return a.Prediction.HeadlineS * 1e6, true
	}},
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Compare lines analyses up; the first is the baseline.
func Compare(as []*Analysis) *Comparison {
	c := &Comparison{}
	for _, a := range as {
		if a.Drives != nil {
			c.Drives = make([]*predict.Ranking, len(as))
		}
	}
	for i, a := range as {
		if c.Drives != nil {
			c.Drives[i] = a.Drives
		}
		t := a.Show.Trace
		ct := ComparedTrace{ID: t.ID, Label: t.Label, Path: t.Path, Target: TargetText(t), Start: t.Start, LostEvents: t.LostEvents, Complete: t.Complete, Best: []BestMatch{}}
		if a.Class != nil {
			s := a.Class.Shape
			ct.Shape = fmt.Sprintf("%s %s QD %s, %s reads", s.Access, units.Bytes(s.BlockSizeBytes), units.Num(s.QueueDepth, 1), units.Percent(s.ReadFraction))
			for i, m := range a.Class.Matches {
				if i == 3 {
					break
				}
				ct.Best = append(ct.Best, BestMatch{m.ID, m.Name, m.Score})
			}
		}
		c.Traces = append(c.Traces, ct)
	}
	for _, m := range measures {
		row := CompareRow{Key: m.key, Name: m.name, Unit: m.unit}
		var seen bool
		for _, a := range as {
			if v, ok := m.get(a); ok {
				row.Values = append(row.Values, &v)
				seen = true
			} else {
				row.Values = append(row.Values, nil)
			}
		}
		if !seen {
			continue
		}
		base := row.Values[0]
		for _, v := range row.Values {
			var ch *float64
			if base != nil && v != nil {
				var d float64
				switch {
				case m.unit == UnitFraction:
					d = *v - *base
				case *base != 0:
					d = *v / *base - 1
				case *v != 0:
					d = math.Inf(1)
				}
				if !math.IsInf(d, 0) {
					d = round3(d)
					ch = &d
				}
				if math.Abs(d) >= 0.1 {
					row.Matters = true
				}
			}
			row.Change = append(row.Change, ch)
		}
		c.Rows = append(c.Rows, row)
	}
	c.Changes = changes(c, as)
	return c
}

// changes says what changed from the first trace to each other, in the
// terms a launch or a copy is compared in.
func changes(c *Comparison, as []*Analysis) []string {
	row := func(key string) *CompareRow {
		for i := range c.Rows {
			if c.Rows[i].Key == key {
				return &c.Rows[i]
			}
		}
		return nil
	}
	val := func(r *CompareRow, i int) string {
		if r == nil || r.Values[i] == nil {
			return "–"
		}
		return FormatValue(r.Unit, r.Values[i])
	}
	var out []string
	read, busy, share := row("block_read_bytes"), row("block_busy_s"), row("waiting_fraction")
	for i := 1; i < len(as); i++ {
		b := string(rune('A' + i))
		if read != nil {
			out = append(out, fmt.Sprintf("At the drive, A read %s and %s read %s.", val(read, 0), b, val(read, i)))
		}
		if busy != nil {
			out = append(out, fmt.Sprintf("The drive was busy %s in A (%s of the run) and %s in %s (%s).",
				val(busy, 0), val(share, 0), val(busy, i), b, val(share, i)))
		}
		if a0, ai := as[0].Class, as[i].Class; a0 != nil && ai != nil && len(a0.Matches) > 0 && len(ai.Matches) > 0 {
			if a0.Matches[0].Family == ai.Matches[0].Family {
				out = append(out, fmt.Sprintf("Both read as %s.", a0.Matches[0].Name))
			} else {
				out = append(out, fmt.Sprintf("A reads as %s (%s layer), %s as %s (%s layer).", a0.Matches[0].Name, a0.Shape.Layer, b, ai.Matches[0].Name, ai.Shape.Layer))
			}
		}
	}
	return out
}
