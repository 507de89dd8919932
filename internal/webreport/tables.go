package webreport

import (
	"fmt"
	"sort"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/units"

	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
)

// maxProcessRows keeps the process table readable; the rest are summed.
const maxProcessRows = 30

func busiest(maps []profile.OffsetMap, n int) []profile.OffsetMap {
	out := append([]profile.OffsetMap(nil), maps...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].IOs > out[j].IOs })
	return out[:n]
}

// classView is the classification's part of the report.
type classView struct {
	Ranking chartView
	Matches []matchView
	Mixture []mixtureView
	Phases  []phaseView
	Actors  []actorView
	Drive   *driveView
}

type actorView struct {
	Name, From, To, Bytes, Shape, Best string
	Score                              float64
}

type matchView struct {
	Rank, Rows   int
	Name, Family string
	Verified     bool
	Score        float64
	Dimensions   []dimensionView
}

type dimensionView struct {
	Name, Trace, Pattern, Why string
	Similarity                float64
	Width                     int // of the similarity bar, in pixels
}

type mixtureView struct{ Name, Family, Bytes, Time string }

type phaseView struct {
	N                     int
	From, To, Shape, Best string
	Score                 float64
}

type driveView struct {
	Title                                  string
	Rows                                   []driveRowView
	MBs, Duration, Device, Think, Recorded string
}

type driveRowView struct {
	Pattern, Bytes, Result, MBs, Time string
	Match                             float64
}

func newClassView(a *report.Analysis, ranking chartView, top int) *classView {
	c := a.Class
	v := &classView{Ranking: ranking}
	for i, m := range c.Matches {
		if i == top {
			break
		}
		mv := matchView{Rank: i + 1, Rows: len(m.Dimensions), Name: m.Name, Family: m.Family, Verified: m.Verified, Score: m.Score}
		for _, d := range m.Dimensions {
			mv.Dimensions = append(mv.Dimensions, dimensionView{Name: d.Name, Trace: d.Trace, Pattern: d.Pattern, Why: d.Why,
				Similarity: d.Similarity, Width: int(d.Similarity * 60)})
		}
		v.Matches = append(v.Matches, mv)
	}
	for _, m := range c.Mixture {
		v.Mixture = append(v.Mixture, mixtureView{m.Name, m.Family, units.Percent(m.BytesShare), units.Percent(m.TimeShare)})
	}
	for i, p := range c.Phases {
		v.Phases = append(v.Phases, phaseView{N: i + 1, From: units.Num(p.StartS, 2), To: units.Num(p.EndS, 2), Shape: shapeText(p.Shape), Best: p.Best.Name, Score: p.Best.Score})
	}
	for _, a := range c.Actors {
		v.Actors = append(v.Actors, actorView{Name: a.Name, From: units.Num(a.StartS, 2), To: units.Num(a.EndS, 2),
			Bytes: units.Percent(a.BytesShare), Shape: shapeText(a.Shape), Best: a.Best.Name, Score: a.Best.Score})
	}
	if d := c.Drive; d != nil {
		dv := &driveView{Title: "What this means for your drive",
			MBs: units.Num(d.ThroughputMBs, 0), Duration: units.Micros(d.DurationS * 1e6), Device: units.Micros(d.DeviceS * 1e6),
			Think: units.Micros(d.ThinkS * 1e6), Recorded: units.Micros(d.TraceDurationS * 1e6)}
		if d.Drive != "" {
			dv.Title += " (" + d.Drive + ")"
		}
		for _, r := range d.Components {
			dv.Rows = append(dv.Rows, driveRowView{Pattern: r.Pattern, Bytes: units.Bytes(r.Bytes), Result: r.ResultName,
				MBs: units.Num(r.ResultMBs, 0), Time: units.Micros(r.TimeS * 1e6), Match: r.ResultMatch})
		}
		v.Drive = dv
	}
	return v
}

type processView struct {
	Pid, Comm                               string
	Kernel                                  bool
	SyscallIOs, SyscallRead, SyscallWritten string
	BlockIOs, BlockRead, BlockWritten       string
}

func processViews(procs []profile.Process) []processView {
	var out []processView
	var rest profile.Process
	for i, p := range procs {
		if i >= maxProcessRows {
			rest.Add(p)
			continue
		}
		out = append(out, processRow(units.Pid(p.Pid), p.Comm, p))
	}
	if len(procs) > maxProcessRows {
		rest.Kernel = false
		out = append(out, processRow("", fmt.Sprintf("%d more", len(procs)-maxProcessRows), rest))
	}
	return out
}

func processRow(pid, comm string, p profile.Process) processView {
	return processView{Pid: pid, Comm: comm, Kernel: p.Kernel,
		SyscallIOs: units.Count(p.SyscallIOs), SyscallRead: units.Bytes(p.SyscallReadBytes), SyscallWritten: units.Bytes(p.SyscallWriteBytes),
		BlockIOs: units.Count(p.BlockIOs), BlockRead: units.Bytes(p.BlockReadBytes), BlockWritten: units.Bytes(p.BlockWriteBytes)}
}

type deviceView struct {
	Device, Mount, Layer, IOs, Bytes, QD, P50, P99, Sequential string
}

func deviceViews(devs []profile.DeviceProfile) []deviceView {
	var out []deviceView
	for _, d := range devs {
		for _, x := range []struct {
			name string
			l    *profile.Layer
		}{{"asked", d.Syscall}, {"drive", d.Block}} {
			if x.l == nil || x.l.IOs == 0 {
				continue
			}
			out = append(out, deviceView{Device: d.Device, Mount: d.Mount, Layer: x.name, IOs: units.Count(x.l.IOs),
				Bytes: units.Bytes(x.l.ReadBytes + x.l.WriteBytes), QD: units.Num(x.l.QueueDepth.P50, 1),
				P50: units.Micros(x.l.LatencyUs.P50), P99: units.Micros(x.l.LatencyUs.P99), Sequential: units.Percent(x.l.SequentialFraction)})
		}
	}
	return out
}

// shapeText is a shape in a few words.
func shapeText(s classify.Shape) string {
	return fmt.Sprintf("%s, %s, QD %s, %s reads", s.Access, units.Bytes(s.BlockSizeBytes),
		units.Num(s.QueueDepth, 1), units.Percent(s.ReadFraction))
}
