package export

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

// JobPart is one part of a workload — a phase, or one program's I/O — as
// it becomes one fio job: its shape, read from the profile of its I/O, and
// how that I/O was issued.
type JobPart struct {
	Name   string // for the job's name and comment
	StartS float64
	EndS   float64
	Match  string // its best benchmark match, for the comment
	Layer  *profile.Layer
	// Threads is how many threads issued its I/O; AsyncShare the share of
	// its I/Os that were asynchronous (libaio, io_uring). Together they say
	// whether the requested depth came from a queue (iodepth) or from
	// threads (numjobs).
	Threads    int
	AsyncShare float64
}

// JobCounter collects what a part's events say beyond its profile.
type JobCounter struct {
	tids       map[uint32]bool
	ios, async int64
}

// Add counts one of the part's events.
func (c *JobCounter) Add(e *event.Event) {
	if e.Layer != event.Syscall || !e.Op.IsData() {
		return
	}
	if c.tids == nil {
		c.tids = map[uint32]bool{}
	}
	c.tids[e.Tid] = true
	c.ios++
	if e.Call.IsAsync() {
		c.async++
	}
}

// Fill sets the part's Threads and AsyncShare.
func (c *JobCounter) Fill(p *JobPart) {
	p.Threads = len(c.tids)
	if c.ios > 0 {
		p.AsyncShare = float64(c.async) / float64(c.ios)
	}
}

// Job is one fio job as written.
type Job struct {
	Name          string `json:"name"`
	RW            string `json:"rw"`
	RWMixRead     int    `json:"rwmixread,omitempty"`
	PercentRandom int    `json:"percentage_random,omitempty"`
	BSSplit       string `json:"bssplit"`
	IOEngine      string `json:"ioengine"`
	IODepth       int    `json:"iodepth"`
	NumJobs       int    `json:"numjobs"`
	ThinkTimeUs   int64  `json:"thinktime_us,omitempty"`
	SizeBytes     int64  `json:"size_bytes"`
	IOSizeBytes   int64  `json:"io_size_bytes"`
	FileName      string `json:"filename"`
}

// JobOf turns a part into a fio job. ok is false for a part with no reads
// or writes.
func JobOf(n int, p JobPart) (Job, bool) {
	l := p.Layer
	if l == nil || l.Reads+l.Writes == 0 {
		return Job{}, false
	}
	j := Job{Name: fmt.Sprintf("%d-%s", n, safeName(p.Name)), FileName: fmt.Sprintf("ioshape-job%d.dat", n)}
	random := int(math.Round(100 * (1 - l.SequentialFraction)))
	readPct := int(math.Round(100 * float64(l.Reads) / float64(l.Reads+l.Writes)))
	base := map[bool]string{true: "read", false: "write"}[readPct >= 50]
	if readPct > 0 && readPct < 100 {
		base, j.RWMixRead = "rw", readPct
	}
	switch {
	case random >= 95:
		j.RW = "rand" + base
	case random <= 5:
		j.RW = base
	default:
		j.RW, j.PercentRandom = "rand"+base, random
	}
	j.BSSplit = bssplit(l.SizeBytes.Histogram)

	// The requested depth, not the most ever in flight: from a queue when
	// the I/O was asynchronous, else from that many threads.
	depth := max(1, int(math.Round(l.QueueDepth.P50)))
	j.IODepth, j.NumJobs, j.IOEngine = 1, 1, "psync"
	switch {
	case p.AsyncShare >= 0.5:
		j.IOEngine, j.IODepth = "libaio", depth
	case depth > 1:
		j.NumJobs = min(depth, max(1, p.Threads))
	}

	// Think time: the time with nothing in flight, shared among the I/Os
	// each thread issued.
	if l.SpanS > 0 && l.IdleS/l.SpanS >= 0.05 {
		perThread := float64(l.IOs) / float64(j.NumJobs)
		j.ThinkTimeUs = int64(math.Round(l.IdleS * 1e6 / perThread))
	}
	moved := l.ReadBytes + l.WriteBytes
	j.IOSizeBytes = roundUp(max(1, moved/int64(j.NumJobs)), 4096)
	// Random I/O needs room to be random in: a file of the bytes moved, at
	// least 64 MiB; a sequential stream needs just its bytes.
	j.SizeBytes = roundUp(j.IOSizeBytes, 1<<20)
	if j.RW != "read" && j.RW != "write" && j.RW != "rw" {
		j.SizeBytes = max(j.SizeBytes, 64<<20)
	}
	return j, true
}

// bssplit writes a size histogram as fio's bssplit: each power-of-two
// bucket as its lower bound (at least 4 KiB, for direct I/O), with
// percentages of the I/O count that sum to 100 (largest remainders).
func bssplit(h []profile.SizeBucket) string {
	type part struct {
		size  int64
		count int64
	}
	bySize := map[int64]int64{}
	var total int64
	for _, b := range h {
		if b.Count == 0 || b.From == 0 {
			continue
		}
		size := max(4096, b.From/4096*4096)
		bySize[size] += b.Count
		total += b.Count
	}
	if total == 0 {
		return "4k/100"
	}
	var parts []part
	for s, c := range bySize {
		parts = append(parts, part{s, c})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].size < parts[j].size })
	pct := make([]int, len(parts))
	rem := make([]float64, len(parts))
	sum := 0
	for i, p := range parts {
		exact := 100 * float64(p.count) / float64(total)
		pct[i] = int(exact)
		rem[i] = exact - float64(pct[i])
		sum += pct[i]
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for k := 0; sum < 100; k++ {
		pct[order[k%len(order)]]++
		sum++
	}
	var out []string
	for i, p := range parts {
		if pct[i] > 0 {
			out = append(out, fmt.Sprintf("%s/%d", fioSize(p.size), pct[i]))
		}
	}
	return strings.Join(out, ":")
}

// fioSize writes a byte count in fio's units.
func fioSize(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dm", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dk", n>>10)
	}
	return fmt.Sprint(n)
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// safeName keeps letters, digits, '-', '_' and '.', for job and file names.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "part"
	}
	return b.String()
}

// WriteFioJob writes a fio job file with one job per part. Sequential
// parts (phases, one after another) are separated by stonewall, so fio
// runs them in order; concurrent parts (programs side by side) run
// together. Every job uses direct I/O, so that the drive sees what the
// application asked for. It returns the jobs written.
func WriteFioJob(w io.Writer, title string, parts []JobPart, sequential bool) ([]Job, error) {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "; %s\n; written by ioshape export --fio-job: one job per %s, each with the shape\n; of its recorded I/O. Run it in a directory on the drive to test: fio FILE\n\n",
		title, map[bool]string{true: "phase, in order", false: "program, side by side"}[sequential])
	fmt.Fprintf(bw, "[global]\ndirect=1\nrandrepeat=0\ngroup_reporting=0\n\n")
	var jobs []Job
	for i, p := range parts {
		j, ok := JobOf(i+1, p)
		if !ok {
			continue
		}
		fmt.Fprintf(bw, "; %s, %.2f–%.2f s: %s\n", p.Name, p.StartS, p.EndS, p.Match)
		fmt.Fprintf(bw, "[%s]\n", j.Name)
		if sequential && len(jobs) > 0 {
			fmt.Fprintf(bw, "stonewall\n")
		}
		fmt.Fprintf(bw, "filename=%s\nrw=%s\n", j.FileName, j.RW)
		if j.RWMixRead > 0 {
			fmt.Fprintf(bw, "rwmixread=%d\n", j.RWMixRead)
		}
		if j.PercentRandom > 0 {
			fmt.Fprintf(bw, "percentage_random=%d\n", j.PercentRandom)
		}
		fmt.Fprintf(bw, "bssplit=%s\nioengine=%s\niodepth=%d\n", j.BSSplit, j.IOEngine, j.IODepth)
		if j.NumJobs > 1 {
			fmt.Fprintf(bw, "numjobs=%d\n", j.NumJobs)
		}
		if j.ThinkTimeUs > 0 {
			fmt.Fprintf(bw, "thinktime=%d\n", j.ThinkTimeUs)
		}
		fmt.Fprintf(bw, "size=%s\nio_size=%s\n\n", fioSize(j.SizeBytes), fioSize(j.IOSizeBytes))
		jobs = append(jobs, j)
	}
	return jobs, bw.Flush()
}
