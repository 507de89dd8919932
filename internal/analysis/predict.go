package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Predict says how long the trace at path would take on drive to, per
// classified phase and per process. from is the profile of the drive the
// trace was recorded on; when nil, the newest of known that matches the
// trace (RecordedOn) is taken, and with none the recorded latencies stand
// in.
func Predict(ctx context.Context, path string, from, to *drive.Profile, known []*drive.Profile, watch Watch) (*predict.Result, error) {
	meta, err := Meta(path)
	if err != nil {
		return nil, err
	}
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
	froms := []*drive.Profile{from}
	if from == nil {
		froms = recordedOnCandidates(meta, known)
	}
	var streamed []predict.From
	for _, f := range froms {
		streamed = append(streamed, predict.From{Profile: f, Unthrottled: unthrottled(f, known)})
	}
	b.Stream(to, unthrottled(to, known), streamed)
	// One read: the model, and the classification that names its phases.
	copts := classifyOptions(path, classify.Options{})
	pass := classify.NewPass(copts)
	whole := profile.NewBuilder(pass.Attach(profile.Options{Parallel: runtime.GOMAXPROCS(0) > 1}))
	if _, _, err := Events(ctx, path, "predicting", watch, func(e *event.Event) error {
		b.Add(e)
		pass.Add(e)
		whole.Add(e)
		return nil
	}); err != nil {
		whole.Finish() // ends its goroutines
		return nil, err
	}
	var recorded int64
	if meta.Footer != nil {
		recorded = meta.Footer.DurationNs
	}
	var bounds []predict.Boundary
	class, err := pass.Finish(whole.Finish())
	switch {
	case errors.Is(err, classify.ErrNoIO):
		return nil, predict.ErrNoIO
	case err != nil:
		return nil, err
	}
	for _, ph := range class.Phases {
		bounds = append(bounds, predict.Boundary{AtNs: int64(ph.StartS * 1e9), Pattern: ph.Best.Name})
	}
	if len(bounds) > 0 {
		bounds[0].AtNs = 0
	}
	if from == nil {
		from = RecordedOn(meta, b.DeviceBytes(), known)
	}
	return b.Predict(from, to, recorded, bounds)
}

// RecordedOn is the newest profile in known of the drive a trace was
// recorded on: the same host, the disk that moved the most of the trace's
// bytes (byDev, both layers, partitions counted with their disk), and the
// same I/O cgroup (a throttled cgroup is another drive); nil if none is.
func RecordedOn(meta tracefile.Meta, byDev map[event.Dev]int64, known []*drive.Profile) *drive.Profile {
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
func newestOf(meta tracefile.Meta, disk string, known []*drive.Profile) *drive.Profile {
	var best *drive.Profile
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
func recordedOnCandidates(meta tracefile.Meta, known []*drive.Profile) []*drive.Profile {
	out := []*drive.Profile{nil}
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
func unthrottled(p *drive.Profile, known []*drive.Profile) *drive.Profile {
	if p == nil || p.Cgroup == "" || !p.CgroupV1 {
		return nil
	}
	var best *drive.Profile
	for _, k := range known {
		if !k.Coarse && k.Cgroup == "" && k.Host == p.Host && k.Device == p.Device && (best == nil || k.Date.After(best.Date)) {
			best = k
		}
	}
	return best
}

// IologExport is what ExportIolog wrote.
type IologExport struct {
	Files  []export.File
	IOs    int
	Layer  event.Layer
	Direct bool // replay with direct I/O, as the application did
	Async  bool // replay through an asynchronous engine
	Depth  int  // with Async, the most in flight
	// Threads, when set, are the threads that issued synchronous I/O side
	// by side: a log each replays them in order (export.Iolog.Threads),
	// with direct I/O where DirectThreads says the thread's was.
	Threads       []uint32
	DirectThreads []bool
}

// CollectIolog reads the trace at path into an iolog, its files named
// under dir if dir is set.
func CollectIolog(ctx context.Context, path, dir string, watch Watch) (*export.Iolog, error) {
	l := &export.Iolog{Dir: dir}
	if _, _, err := Events(ctx, path, "exporting", watch, func(e *event.Event) error {
		l.Add(e)
		return nil
	}); err != nil {
		return nil, err
	}
	return l, nil
}

// Describe says how an iolog replays, after its logs were written;
// threads are l.Threads().
func Describe(l *export.Iolog, threads []uint32, files []export.File, ios int) IologExport {
	x := IologExport{Files: files, IOs: ios, Layer: l.Layer(), Threads: threads}
	for _, tid := range x.Threads {
		x.DirectThreads = append(x.DirectThreads, l.DirectThread(tid))
	}
	x.Direct, x.Async, x.Depth = l.ReplayMode()
	return x
}

// ExportIolog writes the trace at path as a fio version 3 iolog (see
// export.Iolog), its files named under dir if dir is set.
func ExportIolog(ctx context.Context, path, dir string, w io.Writer, watch Watch) (IologExport, error) {
	l, err := CollectIolog(ctx, path, dir, watch)
	if err != nil {
		return IologExport{}, err
	}
	files, n, err := l.Write(w)
	return Describe(l, l.Threads(), files, n), err
}

// ExportFioJob writes a fio job file with the shape of the trace at path:
// one job per classified phase, in order, or with byProgram one per actor
// (program), side by side. It returns the jobs written.
func ExportFioJob(ctx context.Context, path string, w io.Writer, byProgram bool, watch Watch) ([]export.Job, error) {
	meta, err := Meta(path)
	if err != nil {
		return nil, err
	}
	_, class, err := Classify(ctx, path, classify.Options{}, watch)
	if err != nil {
		return nil, err
	}
	byProgram = byProgram && len(class.Actors) > 0
	parts, layers := fioJobParts(class, byProgram)
	builders := make([]*profile.Builder, len(parts))
	counters := make([]export.JobCounter, len(parts))
	for i := range builders {
		builders[i] = profile.NewBuilder(profile.Options{})
	}
	partOf := func(e *event.Event) int {
		if byProgram {
			name := classify.ActorOf(e)
			for i, p := range parts {
				if p.Name == name {
					return i
				}
			}
			return -1
		}
		at := float64(e.Start-class.Origin) / 1e9
		i := sort.Search(len(parts), func(k int) bool { return parts[k].StartS > at }) - 1
		return max(0, i)
	}
	if _, _, err := Events(ctx, path, "exporting", watch, func(e *event.Event) error {
		if i := partOf(e); i >= 0 {
			builders[i].Add(e)
			counters[i].Add(e)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for i := range parts {
		p := builders[i].Finish()
		parts[i].Layer = p.Syscall
		if layers[i] == "block" || p.Syscall == nil || p.Syscall.IOs == 0 {
			parts[i].Layer = p.Block
		}
		counters[i].Fill(&parts[i])
	}
	title := "trace " + meta.Header.ID
	if meta.Header.Label != "" {
		title += " (" + meta.Header.Label + ")"
	}
	return export.WriteFioJob(w, title, parts, !byProgram)
}

// fioJobParts are the parts a fio job file has, with the layer each one's
// shape was read from.
func fioJobParts(c *classify.Result, byProgram bool) ([]export.JobPart, []string) {
	var parts []export.JobPart
	var layers []string
	if byProgram {
		for _, a := range c.Actors {
			parts = append(parts, export.JobPart{Name: a.Name, StartS: a.StartS, EndS: a.EndS, Match: a.Best.Name})
			layers = append(layers, a.Shape.Layer)
		}
		return parts, layers
	}
	for i, ph := range c.Phases {
		parts = append(parts, export.JobPart{Name: fmt.Sprintf("phase%d", i+1), StartS: ph.StartS, EndS: ph.EndS, Match: ph.Best.Name})
		layers = append(layers, ph.Shape.Layer)
	}
	if len(parts) == 0 {
		parts = append(parts, export.JobPart{Name: "all", EndS: c.Shape.SpanS, Match: c.Matches[0].Name})
		layers = append(layers, c.Shape.Layer)
	}
	return parts, layers
}

// ExportRows writes every I/O of the trace at path as a row (Parquet or
// CSV, as rw is) and returns how many.
func ExportRows(ctx context.Context, path, id string, rw export.RowWriter, watch Watch) (int64, error) {
	meta, err := Meta(path)
	if err != nil {
		return 0, err
	}
	m := export.NewRowMaker(meta, id)
	var row export.Row
	var n int64
	if _, _, err := Events(ctx, path, "exporting", watch, func(e *event.Event) error {
		if e.IsWait() { // not an I/O
			return nil
		}
		m.Row(e, &row)
		n++
		return rw.Write(&row)
	}); err != nil {
		return n, err
	}
	return n, rw.Close()
}
