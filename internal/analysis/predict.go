package analysis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// PredictOn is the drives to predict a trace on, beside a report's
// analysis.
type PredictOn struct {
	To    []*drive.Spec
	Known []*drive.Spec // the store's profiles, to find the recording drive's among
	// On names the devices whose I/O moves (none: the one the workload
	// waited on most, where the trace touched several).
	On []event.Dev
}

// Predict says how long the trace would take on each drive in tos, with
// its range, per classified phase and per process, ranked, in one read.
// from is the profile of the drive the trace was recorded on; when nil,
// the newest of known that matches the trace (RecordedOn) is taken, and
// with none the recorded latencies stand in. on names the devices whose
// I/O moves; when empty and the trace names several disks, the disk the
// workload waited on most moves (the model runs for each as the trace is
// read), and the results say so.
func Predict(ctx context.Context, t *Trace, from *drive.Spec, tos []*drive.Spec, known []*drive.Spec, on []event.Dev, watch Watch) (*predict.Ranking, error) {
	model := newPredictRun(t.Meta(), from, tos, known, on)
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
	_, r, err := model.finish(ctx, t, class, watch)
	return r, err
}

// predictRun is the prediction model fed as a trace is read.
type predictRun struct {
	meta  tracefile.Meta
	from  *drive.Spec
	known []*drive.Spec
	// tos and on as asked, for a second read (finish).
	tos []*drive.Spec
	on  []event.Dev
	// cands are the sets of devices that may move, each with the drives
	// streamed for it: on, or each disk of the trace when on is empty and
	// it names several (the one waited on most is chosen at the end), or
	// all devices.
	cands []moveCandidate
	b     *predict.Builder
}

type moveCandidate struct {
	disk string      // "" : on, or all
	devs []event.Dev // nil: all
	tos  []predict.Bounds
}

func newPredictRun(meta tracefile.Meta, from *drive.Spec, tos []*drive.Spec, known []*drive.Spec, on []event.Dev) *predictRun {
	return newPredictRunAfter(meta, from, tos, known, on, 0)
}

// newPredictRunAfter is newPredictRun leaving out the flushers' writes
// that start at or after writebackAfter (0: none).
func newPredictRunAfter(meta tracefile.Meta, from *drive.Spec, tos []*drive.Spec, known []*drive.Spec, on []event.Dev, writebackAfter int64) *predictRun {
	b := predict.NewBuilder()
	b.SetWritebackAfter(writebackAfter)
	b.MoveOnly(on)
	b.SetRecordedThrottled(recordedThrottled(meta.Header))
	if meta.Footer != nil {
		var sync []event.Dev
		for _, d := range meta.Footer.Devices {
			if d.BioBased {
				sync = append(sync, event.Dev{Major: d.Major, Minor: d.Minor})
			}
		}
		b.SetSynchronous(sync)
		b.SetStacked(meta.Footer.Devices)
		b.SetContent(meta.Footer.Devices)
	}
	// The model runs as the trace is read, for each drive (and each end
	// of its range), each set of devices that may move, and each drive
	// the trace may have been recorded on: which is known only from the
	// whole trace.
	froms := []*drive.Spec{from}
	if from == nil {
		froms = recordedOnCandidates(meta, known)
	}
	var streamed []predict.From
	for _, f := range froms {
		streamed = append(streamed, predict.From{Profile: f, Unthrottled: unthrottled(f, known)})
	}
	m := &predictRun{meta: meta, from: from, known: known, tos: tos, on: on, b: b}
	m.cands = []moveCandidate{{devs: on}}
	if len(on) == 0 {
		if disks := disksOf(meta); len(disks) > 1 {
			m.cands = disks
		}
	}
	var targets []predict.To
	for i := range m.cands {
		c := &m.cands[i]
		for _, d := range tos {
			if len(m.cands) > 1 {
				cp := *d // a profile for each set of devices: engines are found by it
				d = &cp
			}
			bounds := predict.BoundsOf(d)
			c.tos = append(c.tos, bounds)
			for _, s := range bounds.Specs() {
				targets = append(targets, predict.To{Profile: s, Unthrottled: unthrottled(d, known), Moving: c.devs})
			}
		}
	}
	b.Stream(targets, streamed)
	return m
}

// disksOf is the trace's disks, each with its devices (the disk and its
// partitions).
func disksOf(meta tracefile.Meta) []moveCandidate {
	if meta.Footer == nil {
		return nil
	}
	var out []moveCandidate
	idx := map[string]int{}
	for _, d := range meta.Footer.Devices {
		disk := diskOf(d)
		i, ok := idx[disk]
		if !ok {
			i = len(out)
			idx[disk] = i
			out = append(out, moveCandidate{disk: disk})
		}
		out[i].devs = append(out[i].devs, event.Dev{Major: d.Major, Minor: d.Minor})
	}
	return out
}

func (m *predictRun) add(e *event.Event) { m.b.Add(e) }

// chosen is the set of devices that moves: the only one, or the disk the
// workload waited on most, with a sentence saying so.
func (m *predictRun) chosen() (moveCandidate, string) {
	if len(m.cands) == 1 {
		return m.cands[0], ""
	}
	waited := m.b.Waited()
	var total int64
	sums := make([]int64, len(m.cands))
	for i, c := range m.cands {
		for _, d := range c.devs {
			sums[i] += waited[d]
		}
		total += sums[i]
	}
	best := 0
	for i := range m.cands {
		if sums[i] > sums[best] {
			best = i
		}
	}
	c := m.cands[best]
	if sums[best] == total {
		return c, "" // the others were not waited on: all moves alike
	}
	return c, fmt.Sprintf("only %s's I/O moves to the new drive: the workload waited on it most (%.0f%% of the time its requests took; give --on to choose)",
		c.disk, 100*float64(sums[best])/float64(total))
}

// finish predicts on each drive, with the phases class found, and ranks
// them; first is the first drive's prediction. Where the flushers wrote
// back after the run would have ended on a drive, it reads t once more,
// for those drives, with those writes left out
// (predict.Result.LateWriteback).
func (m *predictRun) finish(ctx context.Context, t *Trace, class *classify.Result, watch Watch) (first *predict.Result, _ *predict.Ranking, _ error) {
	rs, err := m.results(class)
	if err != nil {
		return nil, nil, err
	}
	// One more read for every such drive, each with its own cut.
	again := map[int]*predictRun{}
	for i, r := range rs {
		if at, ok := r.LateWriteback(); ok {
			again[i] = newPredictRunAfter(m.meta, m.from, []*drive.Spec{m.tos[i]}, m.known, m.on, at)
		}
	}
	if len(again) > 0 {
		if _, err := t.Events(ctx, "predicting without late writeback", watch, func(e *event.Event) error {
			for _, run := range again {
				run.add(e)
			}
			return nil
		}); err != nil {
			return nil, nil, err
		}
		for i, run := range again {
			r, err := run.results(class)
			if err != nil {
				return nil, nil, err
			}
			rs[i] = r[0]
		}
	}
	ranked, err := predict.Rank(rs)
	if err != nil {
		return nil, nil, err
	}
	return rs[0], ranked, nil
}

// results predicts on each drive of the chosen set of devices, in the
// order of tos.
func (m *predictRun) results(class *classify.Result) ([]*predict.Result, error) {
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
	c, note := m.chosen()
	host := busyHostNote(m.meta.Footer, m.b.HostTakenNs())
	from := m.from
	if from == nil {
		byDev := m.b.DeviceBytes()
		if len(c.devs) > 0 { // the drive the moving I/O was recorded on
			only := map[event.Dev]int64{}
			for _, d := range c.devs {
				only[d] = byDev[d]
			}
			byDev = only
		}
		from = RecordedOn(m.meta, byDev, m.known)
	}
	var rs []*predict.Result
	for _, to := range c.tos {
		r, err := m.b.PredictRange(from, to, recorded, bounds)
		if err != nil {
			return nil, err
		}
		for _, n := range []string{note, host} {
			if n != "" {
				r.Notes = append(r.Notes, n)
			}
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// busyHost is the share of the CPUs' time a virtual machine's host may
// take while recording before predict says so: past it, the computation
// recorded is the work's on a slower machine. grep -r over a tree on a
// slow drive, recorded three times here, computed 0.67 s with 1.5 % taken
// and 1.97 and 2.23 s with 14 and 17 %; its own clock (steal left out)
// 0.99 and 1.60 s.
const busyHost = 0.05

// busyHostNote says that the host took more than busyHost of the CPUs'
// time while recording, and what that does to the prediction; "" if it
// did not, or the recording did not count it. takenNs is what the trace
// says the host took of its threads' time on a CPU (predict leaves it
// out): the rest of a busy host's cost — the work running slower on CPUs
// and caches it shares — stays.
func busyHostNote(f *tracefile.Footer, takenNs int64) string {
	if f == nil || f.CPUs <= 0 || f.DurationNs <= 0 || f.HostStealNs <= 0 {
		return ""
	}
	share := float64(f.HostStealNs) / (float64(f.CPUs) * float64(f.DurationNs))
	if share < busyHost {
		return ""
	}
	if takenNs > 0 {
		return fmt.Sprintf("the virtual machine's host took %.0f%% of the CPUs' time while recording: what it took while the traced threads ran is left out, but the rest of their computation may have run slower than the work's own, on CPUs and caches the host shared (record again at a quieter moment)", 100*share)
	}
	return fmt.Sprintf("the virtual machine's host took %.0f%% of the CPUs' time while recording: the computation recorded ran slower than the work's own, and stays as recorded — the prediction is long by as much, most on a fast drive (record again at a quieter moment)", 100*share)
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

// recordedThrottled says a recording's block latencies may hide a
// cgroup's I/O limits: it ran in a cgroup that limits I/O here, or in
// one on another machine, whose cgroups cannot be read from this one.
func recordedThrottled(h tracefile.Header) bool {
	if h.Target.Cgroup == "" {
		return false
	}
	if name, err := os.Hostname(); err != nil || name != h.Host {
		return true
	}
	return host.IOThrottled(h.Target.Cgroup)
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
