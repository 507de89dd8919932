package analysis

import (
	"context"
	"errors"
	"runtime"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// PredictOn is a drive to predict a trace on, beside a report's analysis.
type PredictOn struct {
	To    *drive.Spec
	Known []*drive.Spec // the store's profiles, to find the recording drive's among
}

// Predict says how long the trace would take on drive to, per classified
// phase and per process, in one read. from is the profile of the drive the
// trace was recorded on; when nil, the newest of known that matches the
// trace (RecordedOn) is taken, and with none the recorded latencies stand
// in.
func Predict(ctx context.Context, t *Trace, from, to *drive.Spec, known []*drive.Spec, on []event.Dev, watch Watch) (*predict.Result, error) {
	model := newPredictRun(t.Meta(), from, to, known)
	model.on = on
	model.b.MoveOnly(on)
	// One read: the model, and the classification that names its phases.
	pass := classify.NewPass(classifyOptions(t, classify.Options{}))
	whole := profile.NewBuilder(pass.Attach(profile.Options{Parallel: runtime.GOMAXPROCS(0) > 1}))
	if _, err := t.Events(ctx, "predicting", watch, func(e *event.Event) error {
		model.add(e)
		pass.Add(e)
		whole.Add(e)
		return nil
	}); err != nil {
		whole.Finish() // ends its goroutines
		return nil, err
	}
	class, err := pass.Finish(whole.Finish())
	switch {
	case errors.Is(err, classify.ErrNoIO):
		return nil, predict.ErrNoIO
	case err != nil:
		return nil, err
	}
	return model.finish(class)
}

// predictRun is the prediction model fed as a trace is read.
type predictRun struct {
	meta     tracefile.Meta
	from, to *drive.Spec
	known    []*drive.Spec
	on       []event.Dev // the devices whose I/O moves (none: all)
	b        *predict.Builder
}

func newPredictRun(meta tracefile.Meta, from, to *drive.Spec, known []*drive.Spec) *predictRun {
	b := predict.NewBuilder()
	if meta.Footer != nil {
		var sync []event.Dev
		for _, d := range meta.Footer.Devices {
			if d.BioBased {
				sync = append(sync, event.Dev{Major: d.Major, Minor: d.Minor})
			}
		}
		b.SetSynchronous(sync)
	}
	// The model runs as the trace is read, for each drive it may have been
	// recorded on: which one is known only from the bytes each device moved
	// in the whole trace.
	froms := []*drive.Spec{from}
	if from == nil {
		froms = recordedOnCandidates(meta, known)
	}
	var streamed []predict.From
	for _, f := range froms {
		streamed = append(streamed, predict.From{Profile: f, Unthrottled: unthrottled(f, known)})
	}
	b.Stream(to, unthrottled(to, known), streamed)
	return &predictRun{meta: meta, from: from, to: to, known: known, b: b}
}

func (m *predictRun) add(e *event.Event) { m.b.Add(e) }

// finish predicts, with the phases class found.
func (m *predictRun) finish(class *classify.Result) (*predict.Result, error) {
	var recorded int64
	if m.meta.Footer != nil {
		recorded = m.meta.Footer.DurationNs
	}
	var bounds []predict.Boundary
	for _, ph := range class.Phases {
		bounds = append(bounds, predict.Boundary{AtNs: int64(ph.StartS * 1e9), Pattern: ph.Best.Name})
	}
	if len(bounds) > 0 {
		bounds[0].AtNs = 0
	}
	from := m.from
	if from == nil {
		byDev := m.b.DeviceBytes()
		if len(m.on) > 0 { // the drive the moving I/O was recorded on
			only := map[event.Dev]int64{}
			for _, d := range m.on {
				only[d] = byDev[d]
			}
			byDev = only
		}
		from = RecordedOn(m.meta, byDev, m.known)
	}
	return m.b.Predict(from, m.to, recorded, bounds)
}

// RecordedOn is the newest profile in known of the drive a trace was
// recorded on: the same host, the disk that moved the most of the trace's
// bytes (byDev, both layers, partitions counted with their disk), and the
// same I/O cgroup (a throttled cgroup is another drive); nil if none is.
func RecordedOn(meta tracefile.Meta, byDev map[event.Dev]int64, known []*drive.Spec) *drive.Spec {
	if meta.Footer == nil {
		return nil
	}
	byDisk := map[string]int64{}
	for _, d := range meta.Footer.Devices {
		byDisk[diskOf(d)] += byDev[event.Dev{Major: d.Major, Minor: d.Minor}]
	}
	disk, most := "", int64(0)
	for name, n := range byDisk {
		if n > most || n == most && name < disk {
			disk, most = name, n
		}
	}
	if most == 0 {
		return nil
	}
	return newestOf(meta, disk, known)
}

// newestOf is the newest profile in known of a disk as the trace saw it:
// the same host and I/O cgroup; nil if none is.
func newestOf(meta tracefile.Meta, disk string, known []*drive.Spec) *drive.Spec {
	var best *drive.Spec
	for _, p := range known {
		if p.Coarse || p.Host != meta.Header.Host || p.Cgroup != meta.Header.Target.Cgroup || p.Device != disk {
			continue
		}
		if best == nil || p.Date.After(best.Date) {
			best = p
		}
	}
	return best
}

// diskOf is the whole disk a device is or is part of.
func diskOf(d event.Device) string {
	if d.Disk != "" {
		return d.Disk
	}
	return d.Name
}

// recordedOnCandidates are the profiles RecordedOn may choose, whatever
// bytes the trace's devices moved: none, and the newest of each disk.
func recordedOnCandidates(meta tracefile.Meta, known []*drive.Spec) []*drive.Spec {
	out := []*drive.Spec{nil}
	if meta.Footer == nil {
		return out
	}
	seen := map[string]bool{}
	for _, d := range meta.Footer.Devices {
		disk := diskOf(d)
		if seen[disk] {
			continue
		}
		seen[disk] = true
		if p := newestOf(meta, disk, known); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// unthrottled is, for a drive benched inside a cgroup v1 blkio cgroup,
// the newest profile of the same disk outside any cgroup — the drive
// buffered writeback reaches, as v1's limits do not see it; nil when p is
// not such a drive or none is known.
func unthrottled(p *drive.Spec, known []*drive.Spec) *drive.Spec {
	if p == nil || p.Cgroup == "" || !p.CgroupV1 {
		return nil
	}
	var best *drive.Spec
	for _, k := range known {
		if !k.Coarse && k.Cgroup == "" && k.Host == p.Host && k.Device == p.Device && (best == nil || k.Date.After(best.Date)) {
			best = k
		}
	}
	return best
}
