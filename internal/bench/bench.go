package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/host"
)

// Config is one drive measurement.
type Config struct {
	Dir  string // measure here, on a file ioshape creates and removes
	File string // or on this file (created and removed if it did not exist)
	// Size is the test file's size; Runtime the whole measurement's.
	Size    int64
	Runtime time.Duration
	Label   string
	Fio     string // path; empty: look it up in PATH
	// Progress is told of each test as it ends ("3/74 read seq 4 KiB QD1: 310 MB/s").
	Progress func(done, total int, t Test, p drive.Point)
}

// Test is one shape the grid measures.
type Test struct {
	Op     string // read or write
	Access string // seq or rand
	Size   int64
	Depth  int
	Jobs   int
	// Buffered: through the page cache, from a cold cache (the CPU
	// calibration after the grid).
	Buffered bool
	// SmallFiles: each request a small file of its own (the wake-up
	// calibration).
	SmallFiles bool
	// Span: within a region of this many bytes (the span measurements).
	Span int64
	// Sync: each write followed by fdatasync (the write-and-flush cycle).
	Sync bool
	// Content: text-like data against random bytes (the content
	// calibration).
	Content bool
}

func (t Test) String() string {
	jobs, how := "", ""
	if t.Jobs > 1 {
		jobs = fmt.Sprintf("T%d", t.Jobs)
	}
	if t.Buffered {
		how = " buffered"
	}
	if t.SmallFiles {
		how = " small files"
	}
	if t.Span > 0 {
		how += " within " + sizeName(t.Span)
	}
	if t.Sync {
		how += " each with fdatasync"
	}
	if t.Content {
		how += ", text against random bytes, read back"
	}
	return fmt.Sprintf("%s %s %s Q%d%s%s", t.Op, t.Access, sizeName(t.Size), t.Depth, jobs, how)
}

func sizeName(b int64) string {
	if b >= 1<<20 {
		return fmt.Sprintf("%dM", b>>20)
	}
	return fmt.Sprintf("%dK", b>>10)
}

// Sizes and Depths span what the prediction interpolates over: 4 KiB to
// 1 MiB, one, a few and many requests in flight.
var (
	Sizes  = []int64{4 << 10, 16 << 10, 64 << 10, 128 << 10, 512 << 10, 1 << 20}
	Depths = []int{1, 4, 32}
)

// Grid is every test: read and write × sequential and random × sizes ×
// depths, and the catalog's thread-based pattern (CrystalDiskMark RND4K
// Q32T16).
func Grid() []Test {
	var out []Test
	for _, op := range []string{"read", "write"} {
		for _, access := range []string{"seq", "rand"} {
			for _, size := range Sizes {
				for _, depth := range Depths {
					out = append(out, Test{Op: op, Access: access, Size: size, Depth: depth, Jobs: 1})
				}
			}
		}
		out = append(out, Test{Op: op, Access: "rand", Size: 4 << 10, Depth: 32, Jobs: 16})
	}
	return out
}

// Defaults: a 2-minute measurement on a 1 GiB file.
const (
	DefaultSize    = 1 << 30
	DefaultRuntime = 100 * time.Second
)

// Run measures a drive: every test of the grid, one fio run each, direct
// I/O (buffered with the page cache dropped where the file system refuses
// O_DIRECT, and the profile says so). Its errors are one line.
func Run(ctx context.Context, cfg Config) (*drive.Spec, error) {
	if cfg.Size == 0 {
		cfg.Size = DefaultSize
	}
	if cfg.Runtime == 0 {
		cfg.Runtime = DefaultRuntime
	}
	fio, err := FindFio(cfg.Fio)
	if err != nil {
		return nil, err
	}
	file, created, err := testFile(cfg)
	if err != nil {
		return nil, err
	}
	if created {
		defer os.Remove(file)
	}
	direct, err := directIO(file)
	if err != nil {
		return nil, err
	}
	p := describe(cfg, file, fio, direct)
	tests := Grid()
	spans := spansFor(cfg.Size)
	total := len(tests) + 2*len(spans)
	if direct {
		total += 2 // the write-and-flush cycle and the page cache's CPU (the grid ran direct)
	}
	total++ // the wake-up
	if direct {
		total++ // the content calibration
	}
	each := cfg.Runtime / time.Duration(len(tests))
	if each < 200*time.Millisecond {
		each = 200 * time.Millisecond
	}
	rounds := roundsFor(each)
	length := each / time.Duration(rounds)
	total += len(tests) * (rounds - 1)
	runs := make([][]run, len(tests))
	done := 0
	for r := range rounds {
		for i, t := range tests {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if !direct {
				if err := dropCaches(); err != nil {
					return nil, err
				}
			}
			// Not behind a cgroup's limits: its throttle holds the bios before
			// the device counts them, and is the drive's time, not the wait's.
			waitTest := r == 0 && direct && t == Test{Op: "read", Access: "rand", Size: 4 << 10, Depth: 1, Jobs: 1} && !host.IOThrottled(p.Cgroup)
			before, counted := deviceReads(p.Device)
			testTime := length
			if waitTest {
				// Long enough for a slow disk's reads to tell its wait (see
				// waitCost), as its spans are.
				testTime = max(length, spanRuntime)
			}
			rn, err := runOne(ctx, fio, file, cfg.Size, t, testTime, direct)
			if err != nil {
				return nil, testFailed(ctx, "fio", t, err)
			}
			if after, ok := deviceReads(p.Device); waitTest && counted && ok {
				p.WaitUs = waitCost(rn.pt, before, after)
			}
			runs[i] = append(runs[i], rn)
			done++
			if cfg.Progress != nil {
				cfg.Progress(done, total, t, rn.pt)
			}
		}
	}
	for _, rs := range runs {
		p.Points = append(p.Points, combine(rs))
	}
	for _, op := range []string{"read", "write"} {
		for _, s := range spans {
			t := Test{Op: op, Access: "rand", Size: 4 << 10, Depth: 1, Jobs: 1, Span: s}
			if !direct {
				if err := dropCaches(); err != nil {
					return nil, err
				}
			}
			rn, err := runOne(ctx, fio, file, s, t, spanRuntime, direct)
			if err != nil {
				return nil, testFailed(ctx, "fio", t, err)
			}
			pt := rn.pt
			if op == "read" {
				p.Spans = append(p.Spans, drive.Span{Bytes: s, LatUs: pt.LatUs})
			} else {
				p.WriteSpans = append(p.WriteSpans, drive.Span{Bytes: s, LatUs: pt.LatUs})
			}
			done++
			if cfg.Progress != nil {
				cfg.Progress(done, total, t, pt)
			}
		}
	}
	p.SpanBytes = cfg.Size
	if direct {
		sw, pt, err := measureSyncWrite(ctx, fio, file, cfg.Size)
		if err != nil {
			return nil, testFailed(ctx, "fio", syncWriteTest, err)
		}
		p.SyncWrite = &sw
		done++
		if cfg.Progress != nil {
			cfg.Progress(done, total, syncWriteTest, pt)
		}
		cpu, pt, ok, err := measureCacheRead(ctx, file, cfg.Size)
		if err != nil {
			return nil, testFailed(ctx, "bench", cacheReadTest, err)
		}
		if ok {
			p.CacheReadCPU = &cpu
		}
		done++
		if ok && cfg.Progress != nil {
			cfg.Progress(done, total, cacheReadTest, pt)
		}
	}
	wake, pt, ok, err := measureWake(ctx, p.Dir, p.Device, p.Synchronous)
	if err != nil {
		return nil, testFailed(ctx, "bench", wakeTest, err)
	}
	if ok {
		p.WakeUs = &wake
		if cfg.Progress != nil {
			cfg.Progress(done+1, total, wakeTest, pt)
		}
	}
	if direct {
		c, pt, err := measureContent(ctx, p.Dir)
		if err != nil {
			return nil, testFailed(ctx, "bench", contentTest, err)
		}
		p.Content = c
		if cfg.Progress != nil {
			cfg.Progress(total, total, contentTest, pt)
		}
	}
	idle, ok, err := measureIdleWake(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		p.IdleWake = &idle
	}
	return p, p.Validate()
}

// waitCost is what a read waited for costs beyond the device's time: fio's
// mean latency less the device's mean over the reads it counted in the
// same test (nil when it counted too few, or the device took longer — its
// counters included others' reads).
func waitCost(pt drive.Point, before, after reads) *float64 {
	n, busy := after.ios-before.ios, after.ms-before.ms
	if n < minWaitReads || busy <= 0 {
		return nil
	}
	w := pt.LatUs - busy*1e3/float64(n)
	// The counter holds the reads' summed time in whole milliseconds, so
	// the device's mean is known to within 1 ms ÷ n: a slow disk's few
	// hundred reads tell a wait of tens of µs, not one of a few.
	if w <= 0 || 1e3/float64(n) > w/4 {
		return nil
	}
	w = round(w)
	return &w
}

// minWaitReads is the fewest reads a wait is taken from.
const minWaitReads = 100

// reads are a device's completed reads and the milliseconds they took,
// summed (sysfs's stat).
type reads struct {
	ios int64
	ms  float64
}

// testFailed is a test's error, saying who ran it (fio, or bench for the
// calibrations it reads itself): the context's when it was cancelled.
func testFailed(ctx context.Context, by string, t Test, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s, %s: %w", by, t, err)
}

// SpanBytes are the regions random reads and writes are measured within, up to the
// test file: a disk's latency grows with how far its head moves between
// requests (a few MiB apart against across the file), a flash drive's
// does not.
var SpanBytes = []int64{1 << 20, 16 << 20, 128 << 20}

// spanRuntime is each span test's time: a slow disk still completes a
// few hundred reads.
const spanRuntime = 2 * time.Second

// spansFor is the spans measured with a test file of size bytes: those
// smaller than it, and the whole file.
func spansFor(size int64) []int64 {
	spans := slices.DeleteFunc(append([]int64(nil), SpanBytes...), func(s int64) bool { return s >= size })
	return append(spans, size)
}

// syncWriteTest is the write-and-flush cycle: 4 KiB direct writes one
// after another, each followed by fdatasync.
var syncWriteTest = Test{Op: "write", Access: "seq", Size: 4 << 10, Depth: 1, Jobs: 1, Sync: true}

// syncWriteRuntime bounds the cycle's test: a disk without a write cache
// still turns a couple of hundred times.
const syncWriteRuntime = 3 * time.Second

// syncWriteRegion is where the cycle writes, over and over.
const syncWriteRegion = 1 << 20

// measureSyncWrite measures the write-and-flush cycle a journal's commit
// and an fsync'd file go through: the write after the previous flush (a
// pause: on a disk without a write cache, most of a turn) and the flush.
//
// The cycle overwrites syncWriteRegion written (and synced) just before:
// a first write into a preallocated extent changes the file's metadata,
// and its fdatasync would commit the journal, not only flush.
func measureSyncWrite(ctx context.Context, fio, file string, size int64) (drive.SyncWrite, drive.Point, error) {
	region := fmt.Sprintf("--size=%d", min(size, syncWriteRegion))
	prefill := []string{"--name=ioshape-bench", "--filename=" + file, region, "--rw=write", "--bs=1M",
		"--ioengine=psync", "--direct=1", "--end_fsync=1", "--output-format=json"}
	if _, err := runFio(ctx, fio, prefill); err != nil {
		return drive.SyncWrite{}, drive.Point{}, err
	}
	args := []string{"--name=ioshape-bench", "--filename=" + file, region, "--rw=write",
		"--bs=4k", "--ioengine=psync", "--direct=1", "--fdatasync=1", incompressible,
		fmt.Sprintf("--runtime=%dms", syncWriteRuntime.Milliseconds()), "--time_based", "--output-format=json"}
	out, err := runFio(ctx, fio, args)
	if err != nil {
		return drive.SyncWrite{}, drive.Point{}, err
	}
	r, err := decodeFio(out)
	if err != nil {
		return drive.SyncWrite{}, drive.Point{}, err
	}
	pt, err := pointOf(r, syncWriteTest)
	if err != nil {
		return drive.SyncWrite{}, pt, err
	}
	flush := r.Jobs[0].Sync.LatNs.Mean / 1e3
	if !(flush > 0) {
		return drive.SyncWrite{}, pt, errors.New("fio reported no fdatasync")
	}
	return drive.SyncWrite{WriteUs: pt.LatUs, FlushUs: round(flush)}, pt, nil
}

// cacheReadTest is the calibration after the grid: a buffered sequential
// read from a cold cache.
var cacheReadTest = Test{Op: "read", Access: "seq", Size: 1 << 20, Depth: 1, Jobs: 1, Buffered: true}

// Bounds of each calibration read: enough MiB to average over the
// drive's readahead, few enough seconds on a slow drive.
const (
	cacheReadBytes   = 128 << 20
	cacheReadRuntime = 4 * time.Second
)

// measureCacheRead is the CPU (µs per MiB) a buffered sequential read from
// a cold cache spends — the page cache's work, the copy to the reader and,
// on a bio-based device, the device's own — which a slow or throttled
// drive multiplies: the copy after each wait starts cold (0.22–0.24 s of
// system time for a cat of 256 MiB behind a 40 MB/s blkio throttle,
// 0.02–0.05 s on the same disk unthrottled). The cache is dropped whole
// before each read, as `record --cold` does (evicting only the file's
// pages costs differently); the read runs three times, its CPU varying run
// to run, and the median is taken. ok is false where the cache cannot be
// dropped (not root): then nothing is measured.
func measureCacheRead(ctx context.Context, file string, size int64) (usPerMiB float64, pt drive.Point, ok bool, err error) {
	var runs []float64
	for range 3 {
		if dropCaches() != nil {
			return 0, pt, false, nil
		}
		us, p, err := cpuPerMiB(ctx, file, size)
		if err != nil {
			return 0, pt, false, err
		}
		runs, pt = append(runs, us), p
	}
	return round(median(runs)), pt, true, nil
}

// cpuPerMiB reads the file sequentially in 1 MiB calls, one at a time
// (from a cold cache: the caller drops it), and gives the reading
// thread's CPU time per MiB read (µs) and the rate.
func cpuPerMiB(ctx context.Context, file string, size int64) (float64, drive.Point, error) {
	r, err := readSequential(ctx, file, min(size, cacheReadBytes), cacheReadRuntime)
	if err != nil {
		return 0, drive.Point{}, err
	}
	return r.cpuUs / (float64(r.bytes) / (1 << 20)), r.point(cacheReadTest), nil
}

// FindFio is the fio to run: path if given, else fio on $PATH; its error
// says how to install it.
func FindFio(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	p, err := exec.LookPath("fio")
	if err != nil {
		return "", errors.New("fio is not installed: install it with 'sudo apt-get install fio' (Debian/Ubuntu), 'sudo dnf install fio' (Fedora) or 'brew install fio' (macOS)")
	}
	return p, nil
}

// testFile is the file to measure on, and whether Run made it (and so
// removes it). It checks the place: writable, with room for the file.
func testFile(cfg Config) (path string, created bool, err error) {
	switch {
	case cfg.Dir != "" && cfg.File != "":
		return "", false, errors.New("give --dir or --file, not both")
	case cfg.Dir == "" && cfg.File == "":
		return "", false, errors.New("give --dir DIR (a file is made there and removed) or --file FILE")
	case cfg.File != "":
		fi, err := os.Stat(cfg.File)
		switch {
		case err == nil && !fi.Mode().IsRegular():
			return "", false, fmt.Errorf("%s is not a regular file: ioshape bench writes to its file, so it measures only on files", cfg.File)
		case err == nil:
			return cfg.File, false, RoomFor(filepath.Dir(cfg.File), cfg.Size-fi.Size())
		case !errors.Is(err, os.ErrNotExist):
			return "", false, fmt.Errorf("cannot use %s: %w", cfg.File, err)
		}
		return cfg.File, true, RoomFor(filepath.Dir(cfg.File), cfg.Size)
	}
	fi, err := os.Stat(cfg.Dir)
	if err != nil || !fi.IsDir() {
		return "", false, fmt.Errorf("%s is not a directory", cfg.Dir)
	}
	probe, err := os.CreateTemp(cfg.Dir, ".ioshape-bench-*")
	if err != nil {
		return "", false, fmt.Errorf("cannot write in %s: %w", cfg.Dir, UnwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	if err := RoomFor(cfg.Dir, cfg.Size); err != nil {
		return "", false, err
	}
	return filepath.Join(cfg.Dir, fmt.Sprintf(".ioshape-bench-%d", os.Getpid())), true, nil
}

// UnwrapPath is err without the operation and path an *os.PathError
// adds, for messages that name the path themselves.
func UnwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// RoomFor checks a file system has need bytes free, with some to spare.
func RoomFor(dir string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil // cannot tell: fio will say
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if need > 0 && free < need+need/20 {
		return fmt.Errorf("not enough space in %s: the test file needs %d MiB, %d MiB are free (use --size)", dir, need>>20, free>>20)
	}
	return nil
}

// describe starts the profile: where, what, when.
func describe(cfg Config, file, fio string, direct bool) *drive.Spec {
	hostname, _ := os.Hostname()
	p := &drive.Spec{Name: cfg.Label, Host: hostname, Dir: filepath.Dir(file), Date: time.Now().UTC(), Buffered: !direct, Tool: "fio"}
	if out, err := exec.Command(fio, "--version").Output(); err == nil {
		p.Tool = strings.TrimSpace(string(out))
	}
	p.Device, p.FSType, p.Synchronous = deviceOf(p.Dir)
	var st unix.Statfs_t
	if unix.Statfs(p.Dir, &st) == nil {
		p.FSBytes = int64(st.Blocks) * int64(st.Bsize)
	}
	p.Cgroup, p.CgroupV1 = host.IOCgroup(os.Getpid())
	p.ReadaheadKB, p.MaxRequestKB = queueKB(p.Device, "read_ahead_kb"), queueKB(p.Device, "max_sectors_kb")
	if p.Name == "" {
		p.Name = p.Device
	}
	return p
}

// runOne runs one test and reads fio's account of it.
func runOne(ctx context.Context, fio, file string, size int64, t Test, runtime time.Duration, direct bool) (run, error) {
	out, err := runFio(ctx, fio, testArgs(file, size, t, runtime, direct))
	if err != nil {
		return run{}, err
	}
	r, err := decodeFio(out)
	if err != nil {
		return run{}, err
	}
	return runOf(r, t)
}

// testArgs is fio's command line for one test of the grid.
func testArgs(file string, size int64, t Test, runtime time.Duration, direct bool) []string {
	rw := map[string]string{"readseq": "read", "readrand": "randread", "writeseq": "write", "writerand": "randwrite"}[t.Op+t.Access]
	engine := "libaio"
	if t.Depth == 1 {
		engine = "psync"
	}
	args := []string{"--name=ioshape-bench", "--filename=" + file, fmt.Sprintf("--size=%d", size), "--rw=" + rw,
		fmt.Sprintf("--bs=%d", t.Size), fmt.Sprintf("--iodepth=%d", t.Depth), fmt.Sprintf("--numjobs=%d", t.Jobs),
		"--ioengine=" + engine, fmt.Sprintf("--direct=%d", boolInt(direct)), fmt.Sprintf("--runtime=%dms", runtime.Milliseconds()),
		"--time_based", "--group_reporting", "--norandommap", "--randrepeat=0", "--output-format=json", clockFromKernel}
	if t.Op == "write" {
		args = append(args, incompressible)
	}
	return args
}

// clockFromKernel has fio time requests with clock_gettime, not the CPU's
// cycle counter, which it calibrates for 70 ms each time it starts: a
// third of a run's own overhead here (0.42 → 0.35 s for a 150 ms run),
// and the grid is 222 runs. The vDSO's clock costs some tens of ns a call.
const clockFromKernel = "--clocksource=clock_gettime"

// incompressible has fio write new random data each time, as a copy of
// media or of compressed files does. fio's default reuses one buffer,
// changed a little each write (against deduplication), which a drive that
// compresses (zram) compresses at a third of the rate it takes random
// data: 534 against 1,008 MiB/s for 1 MiB writes to zram here, whose
// writeback of 256 MiB of /dev/urandom went at 1.25 GB/s.
const incompressible = "--refill_buffers=1"

// runFio runs fio, its error the first line fio wrote to stderr.
func runFio(ctx context.Context, fio string, args []string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, fio, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n")
			return nil, errors.New(msg)
		}
		return nil, err
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fioResult is the part of fio's JSON output a point needs.
type fioResult struct {
	Jobs []struct {
		Read  fioSide `json:"read"`
		Write fioSide `json:"write"`
		Sync  struct {
			LatNs struct {
				Mean float64 `json:"mean"`
			} `json:"lat_ns"`
		} `json:"sync"`
		UsrCPU float64 `json:"usr_cpu"` // % of the job's runtime
		SysCPU float64 `json:"sys_cpu"`
	} `json:"jobs"`
}

type fioSide struct {
	IOPS      float64 `json:"iops"`
	BwBytes   float64 `json:"bw_bytes"`
	IOBytes   int64   `json:"io_bytes"`
	RuntimeMs int64   `json:"runtime"`
	TotalIOs  int64   `json:"total_ios"`
	LatNs     struct {
		Mean   float64 `json:"mean"`
		Stddev float64 `json:"stddev"`
	} `json:"lat_ns"`
	ClatNs struct {
		Percentile map[string]float64 `json:"percentile"`
	} `json:"clat_ns"`
}

// decodeFio reads fio's JSON (it may print notices before it).
func decodeFio(out []byte) (*fioResult, error) {
	if i := strings.IndexByte(string(out), '{'); i > 0 {
		out = out[i:]
	}
	var r fioResult
	if err := json.Unmarshal(out, &r); err != nil || len(r.Jobs) == 0 {
		return nil, errors.New("fio's output is not its JSON report")
	}
	return &r, nil
}

// side is the first job's account of op (read or write).
func (r *fioResult) side(op string) fioSide {
	if op == "write" {
		return r.Jobs[0].Write
	}
	return r.Jobs[0].Read
}

// pointOf is the test's point in fio's report.
func pointOf(r *fioResult, t Test) (drive.Point, error) {
	side := r.side(t.Op)
	if side.IOPS <= 0 || side.LatNs.Mean <= 0 {
		return drive.Point{}, errors.New("fio completed no I/O")
	}
	return drive.Point{Op: t.Op, Access: t.Access, SizeBytes: t.Size, Depth: t.Depth, Jobs: t.Jobs,
		IOPS: round(side.IOPS), MBs: round(side.BwBytes / 1e6), LatUs: round(side.LatNs.Mean / 1e3),
		LatP99Us: round(side.ClatNs.Percentile["99.000000"] / 1e3)}, nil
}

func round(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// median is the middle of v (the upper one of an even count), v kept as it was.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
