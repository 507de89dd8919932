//go:build linux && (amd64 || arm64)

package native

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// Session records with ioshape's own eBPF programs
// (dscripts/ebpf/ioshape.bpf.c): loaded with cilium/ebpf, binary records
// through a ring buffer straight into the trace writer, no text anywhere.
type Session struct {
	session.Described
	cfg     session.Config
	seeds   []int
	command []string
	coll    *ebpf.Collection
	objs    ioshapeObjects
	// sweep is sweep_rq's spec, loaded on its own when a summary first
	// sweeps (loadSweep): some kernels refuse iterator programs, and only
	// a summary needs it.
	sweep *ebpf.CollectionSpec
}

// btfPath is where the kernel publishes its BTF (a variable for tests).
var btfPath = "/sys/kernel/btf/vmlinux"

// Available reports whether the kernel can run the native backend (it has
// BTF; the programs' own checks come at load).
func Available() bool {
	_, err := os.Stat(btfPath)
	return err == nil
}

// Prepare loads the programs (so that a kernel that refuses them is told
// before any file is made) and resolves the target.
func Prepare(cfg session.Config) (*Session, error) {
	if !Available() {
		return nil, fmt.Errorf("the native backend needs the kernel's BTF type information (%s, CONFIG_DEBUG_INFO_BTF): this kernel has none; use --backend bpftrace", btfPath)
	}
	seeds, command, err := session.ResolveTargets(cfg.Target)
	if err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	sum := sha256.Sum256(_IoshapeBytes)
	s := &Session{cfg: cfg, seeds: seeds, command: command, Described: session.Described{Name: "native", Version: "native eBPF (cilium/ebpf)", Limits: limits}}
	s.Rendered = session.Script{Name: "ioshape.bpf.c (" + runtime.GOARCH + " object)", SHA256: hex.EncodeToString(sum[:])}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// ringBytes is the ring buffer's size: --perf-pages per CPU, as bpftrace's
// per-CPU buffers, rounded up to a power of two.
func ringBytes(perfPages int) uint32 {
	want := uint64(perfPages) * uint64(os.Getpagesize()) * uint64(runtime.NumCPU())
	n := uint64(os.Getpagesize())
	for n < want && n < 1<<30 {
		n <<= 1
	}
	return uint32(n)
}

func (s *Session) load() error {
	if err := rlimit.RemoveMemlock(); err != nil {
		return fmt.Errorf("cannot raise RLIMIT_MEMLOCK for eBPF maps: %w", err)
	}
	spec, err := loadIoshape()
	if err != nil {
		return fmt.Errorf("cannot read ioshape's eBPF object: %w", err)
	}
	t := s.cfg.Target
	set := func(name string, v any) error {
		vs, ok := spec.Variables[name]
		if !ok {
			return fmt.Errorf("the eBPF object has no variable %s", name)
		}
		return vs.Set(v)
	}
	var names [8][16]byte
	if len(t.Names) > len(names) {
		return fmt.Errorf("at most %d --name targets with the native backend", len(names))
	}
	for i, n := range t.Names {
		copy(names[i][:15], host.Comm(n))
	}
	ring := ringBytes(s.cfg.PerfPages)
	for _, v := range []struct {
		name string
		val  any
	}{
		{"self_pid", uint32(os.Getpid())}, {"trace_all", boolByte(t.All)}, {"wakeup_bytes", ring / 8},
		{"name_count", uint8(len(t.Names))}, {"names", names}, {"summary_mode", boolByte(s.cfg.Summary)},
		{"call_aio_read", uint32(event.CallAioRead)}, {"call_aio_write", uint32(event.CallAioWrite)}, {"call_aio_fsync", uint32(event.CallAioFsync)},
		{"call_uring_read", uint32(event.CallUringRead)}, {"call_uring_write", uint32(event.CallUringWrite)}, {"call_uring_fsync", uint32(event.CallUringFsync)},
		{"call_copy_file_range", uint32(event.CallCopyFileRange)}, {"call_sendfile", uint32(event.CallSendfile)},
	} {
		if err := set(v.name, v.val); err != nil {
			return err
		}
	}
	spec.Maps["events"].MaxEntries = ring
	for _, m := range []string{"rqs", "aios", "urings"} {
		spec.Maps[m].MaxEntries = uint32(s.cfg.MapKeys)
	}
	// sweep_rq, an iterator, loads on its own (loadSweep): a kernel may
	// refuse iterators where it takes every tracepoint program (EPERM, as
	// root, on a Firecracker VM's 6.18), and only a summary sweeps.
	s.sweep = spec.Copy()
	s.sweep.Programs = map[string]*ebpf.ProgramSpec{"sweep_rq": spec.Programs["sweep_rq"]}
	delete(spec.Programs, "sweep_rq")
	s.coll, err = ebpf.NewCollection(spec)
	if err != nil {
		return fmt.Errorf("the kernel refused ioshape's eBPF programs (the native backend needs Linux 6.2 or later): %s; use --backend bpftrace", firstLine(err))
	}
	if err := s.assign(); err != nil {
		s.coll.Close()
		return err
	}
	for _, dev := range host.BioBasedDevices("/sys/block") {
		if err := s.objs.Biodevs.Put(dev, uint8(1)); err != nil {
			s.Close()
			return fmt.Errorf("cannot list the bio-based devices: %w", err)
		}
	}
	for nr, cs := range nativeCallTable() {
		if s.cfg.Summary && cs.Call == uint8(event.CallFadvise) {
			continue // an advice moves nothing: a summary has no place for it
		}
		if err := s.objs.Calls.Put(uint32(nr), cs); err != nil {
			s.Close()
			return fmt.Errorf("cannot fill the syscall table: %w", err)
		}
	}
	return nil
}

func firstLine(err error) string {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		// The verifier's log is long; its last line says why, unless it
		// is only the count of what it checked (the kernel refused the
		// program before verifying it: the cause says why).
		if n := len(ve.Log); n > 0 && !strings.HasPrefix(ve.Log[n-1], "processed ") {
			return strings.TrimSpace(ve.Log[n-1])
		}
		if ve.Cause != nil {
			return ve.Cause.Error()
		}
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// limits is what this backend cannot see.
var limits = []string{
	"syscall layer: memory-mapped I/O is not seen (the block layer still sees its I/O)",
	"block layer: a request in flight when recording began or ended is counted as unmatched",
}

// nativeTracepointArgs are the required tracepoints and how many arguments
// the programs read from each. (Before Linux 5.11 the block tracepoints
// passed the request queue first.)
var nativeTracepointArgs = map[string]int{
	"block_rq_insert": 1, "block_rq_issue": 1, "block_rq_complete": 3, "block_rq_requeue": 1, "block_rq_merge": 1,
	"sys_enter": 2, "sys_exit": 2, "sched_process_fork": 2, "sched_switch": 4,
	"block_bio_queue": 1, "block_bio_complete": 2,
	"sched_waking": 1, "sched_wakeup_new": 1, "irq_handler_entry": 2, "irq_handler_exit": 3,
	"softirq_entry": 1, "softirq_exit": 1, "hrtimer_expire_entry": 2, "hrtimer_expire_exit": 1,
}

// tracepointArgs is how many arguments a kernel tracepoint passes (from
// its btf_trace_ typedef, less the leading context), or -1 if unknown.
func tracepointArgs(spec *btf.Spec, name string) int {
	var td *btf.Typedef
	if spec == nil || spec.TypeByName("btf_trace_"+name, &td) != nil {
		return -1
	}
	ptr, ok := td.Type.(*btf.Pointer)
	if !ok {
		return -1
	}
	fp, ok := ptr.Target.(*btf.FuncProto)
	if !ok {
		return -1
	}
	return len(fp.Params) - 1
}

// attach attaches each program. io_uring is optional: its completion
// tracepoint passes the CQE only since Linux 6.0 (before, its fields one by
// one), and older kernels have no io_uring tracepoints at all; there the
// recording goes on without io_uring, and says so.
func (s *Session) attach() (links []link.Link, warnings []string, err error) {
	p := s.objs.ioshapePrograms
	kernel, _ := btf.LoadKernelSpec()
	for name, want := range nativeTracepointArgs {
		if got := tracepointArgs(kernel, name); got >= 0 && got != want {
			return nil, nil, fmt.Errorf("this kernel's %s tracepoint passes %d arguments, not the %d ioshape's programs read (the native backend needs Linux 6.2 or later): use --backend bpftrace", name, got, want)
		}
	}
	uring := tracepointArgs(kernel, "io_uring_complete") == 3 && tracepointArgs(kernel, "io_uring_submit_req") == 1
	if !uring && s.cfg.Target.Syscall() {
		warnings = append(warnings, "io_uring is not traced: this kernel's io_uring tracepoints are not the ones ioshape reads (Linux 6.0 or later)")
	}
	block, syscall := s.cfg.Target.Block(), s.cfg.Target.Syscall()
	for _, a := range []struct {
		prog     *ebpf.Program
		name     string
		optional bool
		want     bool // --layers: a layer not asked for costs nothing
	}{
		{p.OnFork, "sched_process_fork", false, true}, {p.OnExec, "sched_process_exec", false, true}, {p.OnExit, "sched_process_exit", false, true},
		{p.OnRqInsert, "block_rq_insert", false, block}, {p.OnRqIssue, "block_rq_issue", false, block}, {p.OnRqComplete, "block_rq_complete", false, block},
		{p.OnRqRequeue, "block_rq_requeue", false, block}, {p.OnRqMerge, "block_rq_merge", false, block},
		{p.OnBioQueue, "block_bio_queue", false, block}, {p.OnBioComplete, "block_bio_complete", false, block},
		{p.OnSysEnter, "sys_enter", false, syscall}, {p.OnSysExit, "sys_exit", false, syscall},
		{p.OnSwitch, "sched_switch", false, syscall && !s.cfg.Summary}, // waits are per-I/O detail
		// Who woke whom: which sleeps another process's waits lengthen.
		{p.OnWaking, "sched_waking", false, syscall && !s.cfg.Summary}, {p.OnWakeupNew, "sched_wakeup_new", false, syscall && !s.cfg.Summary},
		// Each exit before its entry: an entry counted whose exit is not
		// would leave its CPU in a handler for good.
		{p.OnIrqExit, "irq_handler_exit", false, syscall && !s.cfg.Summary}, {p.OnIrqEntry, "irq_handler_entry", false, syscall && !s.cfg.Summary},
		{p.OnSoftirqExit, "softirq_exit", false, syscall && !s.cfg.Summary}, {p.OnSoftirqEntry, "softirq_entry", false, syscall && !s.cfg.Summary},
		{p.OnHrtimerExit, "hrtimer_expire_exit", false, syscall && !s.cfg.Summary}, {p.OnHrtimerEntry, "hrtimer_expire_entry", false, syscall && !s.cfg.Summary},
		{p.OnUringSubmit, "io_uring_submit_req", true, syscall}, {p.OnUringComplete, "io_uring_complete", true, syscall},
	} {
		if a.optional && !uring || !a.want {
			continue
		}
		l, err := link.AttachTracing(link.TracingOptions{Program: a.prog, AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			if a.optional {
				warnings = append(warnings, fmt.Sprintf("io_uring is not traced: cannot attach to %s (%s)", a.name, firstLine(err)))
				continue
			}
			for _, l := range links {
				l.Close()
			}
			return nil, nil, fmt.Errorf("cannot attach to the kernel tracepoint %s: %s", a.name, firstLine(err))
		}
		links = append(links, l)
	}
	return links, warnings, nil
}

// counters sums the programs' per-CPU counters.
func (s *Session) counters() (lost, mapFull, stale, unmatched int64) {
	var out [4]int64
	for i := range out {
		var per []uint64
		if err := s.objs.Counters.Lookup(uint32(i), &per); err == nil {
			for _, v := range per {
				out[i] += int64(v)
			}
		}
	}
	return out[0], out[1], out[2], out[3]
}

// assign moves the collection's maps, variables and programs into objs,
// every one but sweep_rq, which loadSweep loads when it is wanted.
func (s *Session) assign() error {
	if err := s.coll.Assign(&s.objs.ioshapeMaps); err != nil {
		return err
	}
	if err := s.coll.Assign(&s.objs.ioshapeVariables); err != nil {
		return err
	}
	v := reflect.ValueOf(&s.objs.ioshapePrograms).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Tag.Get("ebpf")
		if name == "sweep_rq" {
			continue
		}
		p := s.coll.DetachProgram(name)
		if p == nil {
			return fmt.Errorf("the eBPF object has no program %s", name)
		}
		v.Field(i).Set(reflect.ValueOf(p))
	}
	return nil
}

// loadSweep loads sweep_rq against the maps already loaded.
func (s *Session) loadSweep() error {
	maps := map[string]*ebpf.Map{}
	for name, m := range s.coll.Maps { // .rodata, .bss: the variables' maps
		maps[name] = m
	}
	v := reflect.ValueOf(&s.objs.ioshapeMaps).Elem()
	for i := range v.NumField() {
		maps[v.Type().Field(i).Tag.Get("ebpf")] = v.Field(i).Interface().(*ebpf.Map)
	}
	c, err := ebpf.NewCollectionWithOptions(s.sweep, ebpf.CollectionOptions{MapReplacements: maps})
	if err != nil {
		return fmt.Errorf("the kernel refused the sweep's iterator program: %s", firstLine(err))
	}
	s.objs.SweepRq = c.DetachProgram("sweep_rq")
	c.Close()
	return nil
}

// programs names the loaded programs (Assign took them out of the
// collection, so s.coll.Programs no longer holds them).
func (s *Session) programs() map[string]*ebpf.Program {
	all := programNames(&s.objs.ioshapePrograms)
	for name, prog := range all {
		if prog == nil {
			delete(all, name)
		}
	}
	return all
}

// programNames is every program by its name in the C source (bpf2go's
// struct tags), so that a program added there is reported too.
func programNames(p *ioshapePrograms) map[string]*ebpf.Program {
	all := map[string]*ebpf.Program{}
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		if prog, ok := v.Field(i).Interface().(*ebpf.Program); ok {
			all[v.Type().Field(i).Tag.Get("ebpf")] = prog
		}
	}
	return all
}

// programCosts is each program's run count and time, which the kernel
// keeps only while kernel.bpf_stats_enabled is 1 (nil otherwise).
func (s *Session) programCosts() []session.ProgramCost {
	var out []session.ProgramCost
	for name, p := range s.programs() {
		st, err := p.Stats()
		if err != nil || st.RunCount == 0 {
			continue
		}
		out = append(out, session.ProgramCost{Name: name, Runs: st.RunCount,
			NsPerRun: float64(st.Runtime.Nanoseconds()) / float64(st.RunCount), Recursion: st.RecursionMisses})
	}
	slices.SortFunc(out, func(a, b session.ProgramCost) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// probeMisses sums the kernel's recursion-miss counts for the programs.
func (s *Session) probeMisses() int64 {
	var n int64
	for _, p := range s.programs() {
		if st, err := p.Stats(); err == nil {
			n += int64(st.RecursionMisses)
		}
	}
	return n
}

// unfinished counts tracked block requests still in the in-flight map:
// issued, completion never seen.
func (s *Session) unfinished() int64 {
	var key uint64
	var val ioshapeRqState
	var n int64
	it := s.objs.Rqs.Iterate()
	for it.Next(&key, &val) {
		if val.Live != 0 && val.Tracked != 0 {
			n++
		}

	}
	return n
}

// readRing decodes ring buffer records into batches until stop is set and
// the ring is empty.
func readRing(rd *ringbuf.Reader, stop *atomic.Bool, oDirect uint64, out chan<- []parse.Record) {
	var rec ringbuf.Record
	var dec parse.NativeDecoder
	batch := make([]parse.Record, 0, 256)
	flush := func() {
		if len(batch) > 0 {
			out <- batch
			batch = make([]parse.Record, 0, 256)
		}
	}
	// The producer wakes the reader only for a full batch; the deadline
	// makes it look at least every 100 ms. It is renewed when it passes,
	// not per record (reading the clock per record cost a fifth of the
	// reader's time).
	rd.SetDeadline(time.Now().Add(100 * time.Millisecond))
	for {
		err := rd.ReadInto(&rec)
		switch {
		case err == nil:
			r, derr := dec.Decode(rec.RawSample, oDirect)
			if derr != nil {
				r = parse.Record{Kind: parse.KindError, Err: &parse.SyntaxError{File: "ring buffer", Msg: derr.Error()}}
			}
			batch = append(batch, r)
			if len(batch) == cap(batch) {
				flush()
			}
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, ringbuf.ErrFlushed):
			flush()
			if stop.Load() && rd.AvailableBytes() == 0 {
				return
			}
			rd.SetDeadline(time.Now().Add(100 * time.Millisecond))
		default:
			flush()
			return
		}
	}
}

// Run records until the target ends, the duration passes, the launch goes
// quiet, or ctx is cancelled. The programs and maps are released when it
// returns, whatever happens.
func (s *Session) Run(ctx context.Context, sink session.Sink) (session.Result, error) {
	plan := session.Plan{
		Name: "the eBPF ring buffer", Remedy: "raise --perf-pages", Seeds: s.seeds, Command: s.command,
		Start: s.start, KernelSummary: true,
	}
	res, err := session.Run(ctx, s.cfg, plan, sink)
	s.Close() // a no-op after the tracer's Wait; needed when Start failed
	return res, err
}

// Close releases the programs and maps (about 40 MB of locked kernel
// memory) without waiting for the garbage collector.
func (s *Session) Close() {
	if s.coll != nil {
		// Assign moved the programs and maps out of the collection: they
		// are closed through objs.
		s.objs.Close()
		s.coll.Close()
		s.coll = nil
	}
}

// tracer is the attached programs and the ring reader, as the loop drives
// them.
type tracer struct {
	s           *Session
	rd          *ringbuf.Reader
	links       []link.Link
	records     chan []parse.Record
	stopReading atomic.Bool
	sweeper     *link.Iter // sweep_rq over the in-flight requests (--summary)
	sweepFailed bool       // said once
	content     *contentReader
}

func (s *Session) start(helperPid int) (session.Tracer, error) {
	one := uint8(1)
	for _, p := range s.seeds {
		if err := s.objs.Track.Put(uint32(p), one); err != nil {
			return nil, fmt.Errorf("cannot set the targets: %w", err)
		}
	}
	if helperPid != 0 {
		if err := s.objs.Roots.Put(uint32(helperPid), one); err != nil {
			return nil, fmt.Errorf("cannot set the targets: %w", err)
		}
	}
	rd, err := ringbuf.NewReader(s.objs.Events)
	if err != nil {
		return nil, fmt.Errorf("cannot read the eBPF ring buffer: %w", err)
	}
	srd, err := ringbuf.NewReader(s.objs.Samples)
	if err != nil {
		rd.Close()
		return nil, fmt.Errorf("cannot read the eBPF ring buffer of data samples: %w", err)
	}
	links, warnings, err := s.attach()
	if err != nil {
		rd.Close()
		srd.Close()
		return nil, err
	}
	t := &tracer{s: s, rd: rd, links: links, records: make(chan []parse.Record, 64), content: startContent(srd)}
	// Every program is attached: tracing has begun, on the clock the
	// programs' timestamps use.
	first := []parse.Record{{Kind: parse.KindReady, N: host.MonotonicNow()}}
	for _, w := range warnings {
		first = append(first, parse.Record{Kind: parse.KindWarning, Text: w})
	}
	t.records <- first
	var readers sync.WaitGroup
	readers.Go(func() { readRing(rd, &t.stopReading, parse.ODirectFor(runtime.GOARCH), t.records) })
	if s.cfg.Summary {
		readers.Go(func() { t.drainSummaries() })
	}
	go func() {
		readers.Wait()
		close(t.records)
	}()
	return t, nil
}

func (t *tracer) Records() <-chan []parse.Record { return t.records }

// detach removes the programs from the tracepoints: no new events.
func (t *tracer) detach() {
	for _, l := range t.links {
		l.Close()
	}
	t.links = nil
}

// Stop detaches; what is in the ring is still read, then Records closes.
func (t *tracer) Stop() {
	t.detach()
	t.stopReading.Store(true)
	t.rd.Flush()
}

// Kill ends a ring reader that has not finished.
func (t *tracer) Kill() {
	t.rd.Close()
	t.content.rd.Close()
}

// Poll reads the programs' loss counters (absolute: nothing else counts
// these for this backend).
func (t *tracer) Poll(res *session.Result) {
	if t.s.coll == nil {
		return
	}
	lost, mapFull, _, _ := t.s.counters()
	res.Lost, res.MapOverflows = lost, mapFull
	res.ProbeMisses = t.s.probeMisses()
}

// Wait takes the final counters and releases everything.
func (t *tracer) Wait(res *session.Result) error {
	t.detach()
	t.Poll(res)
	res.Programs = t.s.programCosts()
	_, _, stale, unmatched := t.s.counters()
	res.Unmatched += unmatched
	swept, fixed := t.s.sweptCounts()
	res.Unfinished += stale + swept + t.s.unfinished()
	if fixed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the block layer's depth count was corrected %d times for requests whose completion the kernel did not report", fixed))
	}
	t.rd.Close()
	res.Content = t.content.finish()
	t.s.Close()
	return nil
}

// drainSummaries sends the summary map's rows (record --summary): each
// second, those of seconds over (a second is over once the clock is two
// past it: no program still adds to it), deleting them; once stopped, all
// that is left.
func (t *tracer) drainSummaries() {
	// The depth is swept four times a second, so that what the kernel
	// completed without us skews it for a quarter of a second at most.
	tick := time.NewTicker(time.Second / 4)
	defer tick.Stop()
	for n := 1; !t.stopReading.Load(); n++ {
		<-tick.C
		if t.stopReading.Load() {
			break
		}
		t.sweepStale()
		if n%4 == 0 {
			t.sendSummaries(host.MonotonicNow()/1e9 - 2)
		}
	}
	t.sendSummaries(math.MaxInt64)
	if t.sweeper != nil {
		t.sweeper.Close()
	}
}

// sweepStale runs the programs' sweep (census_begin, sweep_rq over the
// in-flight requests, census_finish; see ioshape.bpf.c): requests the
// kernel completed without us leave their device's depth, counted as never
// completed, and depth counts no request holds are taken off.
func (t *tracer) sweepStale() {
	err := t.sweep()
	if err != nil && !t.sweepFailed {
		t.sweepFailed = true
		t.records <- []parse.Record{{Kind: parse.KindWarning, Text: "the summary's depth cannot be checked for requests whose completion the kernel does not report: " + firstLine(err)}}
	}
}

func (t *tracer) sweep() error {
	if t.s.objs.SweepRq == nil {
		if err := t.s.loadSweep(); err != nil {
			return err
		}
	}
	o := t.s.objs
	if t.sweeper == nil {
		it, err := link.AttachIter(link.IterOptions{Program: o.SweepRq, Map: o.Rqs})
		if err != nil {
			return err
		}
		t.sweeper = it
	}
	if _, err := o.CensusBegin.Run(&ebpf.RunOptions{}); err != nil {
		return err
	}
	rd, err := t.sweeper.Open()
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, rd) // reading runs the program over the map
	rd.Close()
	if err != nil {
		return err
	}
	_, err = o.CensusFinish.Run(&ebpf.RunOptions{})
	return err
}

// sweptCounts is what the sweeps found: requests swept as never completed,
// and depth counts taken off.
func (s *Session) sweptCounts() (stale, fixed int64) {
	var v uint64
	if s.objs.Swept.Lookup(uint32(0), &v) == nil {
		stale = int64(v)
	}
	if s.objs.Swept.Lookup(uint32(1), &v) == nil {
		fixed = int64(v)
	}
	return stale, fixed
}

// sendSummaries sends and deletes the rows of seconds up to through.
func (t *tracer) sendSummaries(through int64) {
	m := t.s.objs.Sums
	var key ioshapeSumKey
	var per []ioshapeSumVal
	var done []ioshapeSumKey
	var batch []parse.Record
	it := m.Iterate()
	for it.Next(&key, &per) {
		if int64(key.Sec) > through {
			continue
		}
		done = append(done, key)
		batch = append(batch, t.summaryRecord(key, per))
	}
	if err := it.Err(); err != nil {
		batch = append(batch, parse.Record{Kind: parse.KindWarning, Text: "cannot read the summary map: " + err.Error()})
	}
	for i := range done {
		m.Delete(&done[i])
	}
	if len(batch) > 0 {
		t.records <- batch
	}
}

// summaryRecord sums a summary entry's per-CPU values.
func (t *tracer) summaryRecord(key ioshapeSumKey, per []ioshapeSumVal) parse.Record {
	n := parse.NativeSummary{Sec: key.Sec, Pid: key.Pid, Dev: key.Dev, Layer: key.Layer, Op: key.Op, Role: key.Role, Kthread: key.Kthread,
		Size: make([]uint64, len(per[0].Size)), Lat: make([]uint64, len(per[0].Lat)),
		Gap: make([]uint64, len(per[0].Gap)), Depth: make([]uint64, len(per[0].Depth))}
	add := func(dst []uint64, src []uint32) {
		for i, c := range src {
			dst[i] += uint64(c)
		}
	}
	for i := range per {
		v := &per[i]
		n.Count += v.Count
		n.Bytes += v.Bytes
		n.Errors += v.Errors
		n.Located += v.Located
		n.Sequential += v.Sequential
		n.LatNs += v.LatNs
		n.GapNs += v.GapNs
		n.BusyNs += v.BusyNs
		n.DepthN += v.DepthN
		n.SizeSum += v.SizeSum
		if v.First != 0 && (n.First == 0 || v.First < n.First) {
			n.First = v.First
		}
		n.Last = max(n.Last, v.Last)
		add(n.Size, v.Size[:])
		add(n.Lat, v.Lat[:])
		add(n.Gap, v.Gap[:])
		add(n.Depth, v.Depth[:])
	}
	var comm [16]byte
	name := ""
	if t.s.objs.Comms.Lookup(key.Pid, &comm) == nil {
		name, _, _ = strings.Cut(string(comm[:]), "\x00")
	}
	row, err := parse.DecodeNativeSummary(&n, name)
	if err != nil {
		return parse.Record{Kind: parse.KindError, Err: &parse.SyntaxError{File: "summary map", Msg: err.Error()}}
	}
	return parse.Record{Kind: parse.KindSummary, Summary: &row}
}
