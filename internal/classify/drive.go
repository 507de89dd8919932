package classify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/ioshape/ioshape/internal/drive"
)

// DriveResults are a drive's benchmark results: MB/s (10⁶ bytes/s) for
// catalog patterns, by pattern ID.
type DriveResults struct {
	Name    string             `json:"name"`
	Results map[string]float64 `json:"results"`
}

// ReadDriveResults reads results as JSON: {"name": ..., "results": {"id": MB/s}}.
func ReadDriveResults(r io.Reader) (*DriveResults, error) {
	var d DriveResults
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("drive results: %w", err)
	}
	return &d, d.validate()
}

// ADMResults are the four AmorphousDiskMark numbers (SEQ1M QD8, SEQ1M QD1,
// RND4K QD64, RND4K QD1) for reads and, if given, writes.
func ADMResults(name string, read, write []float64) (*DriveResults, error) {
	ids := [2][4]string{
		{"adm-seq1m-qd8-read", "adm-seq1m-qd1-read", "adm-rnd4k-qd64-read", "adm-rnd4k-qd1-read"},
		{"adm-seq1m-qd8-write", "adm-seq1m-qd1-write", "adm-rnd4k-qd64-write", "adm-rnd4k-qd1-write"},
	}
	d := &DriveResults{Name: name, Results: map[string]float64{}}
	for k, vals := range [][]float64{read, write} {
		if len(vals) == 0 {
			continue
		}
		if len(vals) != 4 {
			return nil, fmt.Errorf("give the four AmorphousDiskMark numbers in MB/s: SEQ1M QD8, SEQ1M QD1, RND4K QD64, RND4K QD1")
		}
		for i, v := range vals {
			d.Results[ids[k][i]] = v
		}
	}
	return d, d.validate()
}

func (d *DriveResults) validate() error {
	if len(d.Results) == 0 {
		return fmt.Errorf("drive results: no results")
	}
	pats, err := Catalog()
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, p := range pats {
		known[p.ID] = true
	}
	for id, v := range d.Results {
		if !known[id] {
			return fmt.Errorf("drive results: %q is not a catalog pattern (see 'ioshape patterns')", id)
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("drive results: %s must be a positive MB/s figure", id)
		}
	}
	return nil
}

// DriveEstimate is what a traced workload would see on a drive.
type DriveEstimate struct {
	Drive          string      `json:"drive,omitempty"`
	ThroughputMBs  float64     `json:"throughput_mb_s"`
	DurationS      float64     `json:"duration_s"`
	DeviceS        float64     `json:"device_s"`
	ThinkS         float64     `json:"think_s"`
	TraceDurationS float64     `json:"trace_duration_s"`
	Components     []Component `json:"components"`
	Headline       Headline    `json:"headline"`
}

// Component is one part of the mixture and the drive result used for it.
type Component struct {
	Pattern     string  `json:"pattern"`
	Bytes       int64   `json:"bytes"`
	ResultID    string  `json:"result_id"`
	ResultName  string  `json:"result_name"`
	ResultMBs   float64 `json:"result_mb_s"`
	ResultMatch float64 `json:"result_match"` // how alike the pattern and the measured one are
	TimeS       float64 `json:"time_s"`
}

// Headline is the drive's biggest number, and whether it applies.
type Headline struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	MBs     float64 `json:"mb_s"`
	Applies bool    `json:"applies"`
	Note    string  `json:"note"`
}

// estimate times each part of the mixture at the rate the drive reached on
// the most alike pattern it was measured on, and adds the trace's idle
// time, which no drive shortens.
func estimate(res *Result, exp []Expected, d *DriveResults) *DriveEstimate {
	byID := map[string]Expected{}
	var measured []Expected
	for _, e := range exp {
		byID[e.Pattern.ID] = e
		if _, ok := d.Results[e.Pattern.ID]; ok {
			measured = append(measured, e)
		}
	}
	mix := res.Mixture
	if len(mix) == 0 {
		mix = []Share{{ID: res.Matches[0].ID, Bytes: res.Shape.Bytes}}
	}
	var mixBytes int64
	for _, m := range mix {
		mixBytes += m.Bytes
	}
	est := &DriveEstimate{Drive: d.Name, TraceDurationS: res.Shape.SpanS}
	for _, m := range mix {
		// Scale window bytes to the whole trace's (quiet windows are left out of the mixture).
		bytes := int64(float64(m.Bytes) / float64(max(mixBytes, 1)) * float64(res.Shape.Bytes))
		best := Rank(byID[m.ID].Shape, measured)[0]
		rate := d.Results[best.ID]
		t := float64(bytes) / (rate * 1e6)
		est.Components = append(est.Components, Component{
			Pattern: m.ID, Bytes: bytes, ResultID: best.ID, ResultName: best.Name, ResultMBs: rate,
			ResultMatch: best.Score, TimeS: round3(t),
		})
		est.DeviceS += t
	}
	est.ThinkS = round3(res.Shape.IdleFraction * res.Shape.SpanS)
	est.DurationS = round3(est.DeviceS + est.ThinkS)
	est.DeviceS = round3(est.DeviceS)
	if est.DurationS > 0 {
		est.ThroughputMBs = round3(float64(res.Shape.Bytes) / 1e6 / est.DurationS)
	}
	est.Headline = headline(d, byID, est, mix)
	return est
}

func headline(d *DriveResults, byID map[string]Expected, est *DriveEstimate, mix []Share) Headline {
	ids := make([]string, 0, len(d.Results))
	for id := range d.Results {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var h Headline
	for _, id := range ids {
		if v := d.Results[id]; v > h.MBs {
			h = Headline{ID: id, MBs: v}
		}
	}
	hp := byID[h.ID].Pattern
	if hp == nil {
		return h
	}
	h.Name = hp.Name
	dominant := byID[mix[0].ID].Pattern
	h.Applies = dominant != nil && dominant.Family == hp.Family
	if h.Applies {
		h.Note = fmt.Sprintf("The headline %.0f MB/s (%s) applies: this workload is shaped like it.", h.MBs, h.Name)
		return h
	}
	h.Note = fmt.Sprintf("The headline %.0f MB/s (%s) does not apply: this workload is mostly like %s; expect about %.0f MB/s on this drive",
		h.MBs, h.Name, dominant.Name, est.ThroughputMBs)
	if est.ThroughputMBs > 0 {
		h.Note += fmt.Sprintf(", %.1f× less.", h.MBs/est.ThroughputMBs)
	} else {
		h.Note += "."
	}
	return h
}

// Profile turns benchmark results into a coarse drive profile: each result
// is a point with its pattern's size, access and requests in flight.
func (d *DriveResults) Profile() (*drive.Spec, error) {
	pats, err := Catalog()
	if err != nil {
		return nil, err
	}
	byID := map[string]Pattern{}
	for _, p := range pats {
		byID[p.ID] = p
	}
	prov := drive.Provenance{Tool: "benchmark results"}
	ids := make([]string, 0, len(d.Results))
	for id := range d.Results {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		pat := byID[id]
		if len(pat.Sizes) != 1 || pat.ReadFraction != 0 && pat.ReadFraction != 1 {
			continue // a mix or a sweep is no single shape
		}
		op, access := "read", "rand"
		if pat.ReadFraction == 0 {
			op = "write"
		}
		if pat.Access == "sequential" {
			access = "seq"
		}
		prov.Tests = append(prov.Tests, drive.Test{Op: op, Access: access, SizeBytes: pat.Sizes[0], Depth: max(1, pat.QueueDepth),
			Threads: max(1, pat.Threads), MBs: d.Results[id]})
	}
	if len(prov.Tests) == 0 {
		return nil, errors.New("drive results: none is a single shape (a size, a queue, reads or writes) to build a profile from")
	}
	return drive.Build(d.Name, prov)
}
