package parse

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/ioshape/ioshape/internal/event"
)

// BlkparseReader reads blkparse's default text output,
//
//	maj,min cpu seq sec.nsec pid action RWBS sector + n [comm]
//
// and rebuilds requests from its events (see blkRequests): one event per
// request the device was dispatched, timed from its first bio's queueing
// through dispatch to completion. Its summary's "Skips" are lost events.
type BlkparseReader struct {
	lineScanner
	req *blkRequests
	// cpuOffset re-bases CPUs whose clock blktrace did not normalise.
	cpuOffset map[blkCPU]int64
	seenCPU   map[blkCPU]bool
	last      int64
	any       bool
	warnings  []string
	pending   bool // moreCovered may have more events for the last completion
	// Runs: blkparse output of several traces one after another. Each
	// CPU's times and sequence numbers restart at a new run; it is placed
	// after the last (runBase is added to its times).
	lastSeq  map[blkCPU]uint64
	lastTime map[blkCPU]int64
	runs     int
	runBase  int64
	maxTime  int64
}

type blkCPU struct {
	dev event.Dev
	cpu uint32
}

// NewBlkparseReader reads r, naming file in syntax errors.
func NewBlkparseReader(r io.Reader, file string) *BlkparseReader {
	return &BlkparseReader{lineScanner: newLineScanner(r, file), req: newBlkRequests(), cpuOffset: map[blkCPU]int64{}, seenCPU: map[blkCPU]bool{},
		lastSeq: map[blkCPU]uint64{}, lastTime: map[blkCPU]int64{}, runs: 1}
}

// runGap is the time put between one run and the next: their real
// distance is not in the output.
const runGap = int64(1e9)

// newRun notices a new run: a CPU's sequence number and time both going
// back (blkparse sorts each run by time, numbering each CPU's events from
// 1). What the last run left in flight is counted unfinished, and the new
// run is placed a second after the last one's end.
func (p *BlkparseReader) newRun(c blkCPU, t int64, seq uint64) {
	last, seen := p.lastSeq[c]
	if seen && seq < last && t < p.lastTime[c] {
		p.runs++
		p.req.endRun()
		p.runBase = p.maxTime + runGap
		clear(p.lastSeq)
		clear(p.lastTime)
		clear(p.seenCPU)
		clear(p.cpuOffset)
		p.any = false
	}
	p.lastSeq[c], p.lastTime[c] = seq, t
}

// Scan reads the next record.
func (p *BlkparseReader) Scan() bool {
	if p.req.covered(&p.rec, &p.pending) {
		return true
	}
	return p.scan(p.parse)
}

func (p *BlkparseReader) parse(b []byte) string {
	f := bytes.Fields(b)
	if len(f) >= 3 && string(f[0]) == "Skips:" {
		// "Skips: 12 forward (4 - 0.1%)": events blktrace lost.
		n, err := strconv.ParseInt(string(bytes.ReplaceAll(f[1], []byte(","), nil)), 10, 64)
		if err != nil {
			return "unreadable Skips line"
		}
		p.rec.Kind, p.rec.N = KindLost, n
		if n == 0 { // the trailer of every complete output: nothing lost
			p.rec.Kind = KindNotice
		}
		return ""
	}
	if len(f) < 6 || !isDevNumber(f[0]) {
		// The summary blkparse prints at the end, or a message.
		p.rec.Kind, p.rec.Text = KindSkip, string(b)
		return ""
	}
	var a blkAction
	var err error
	if a.dev, err = parseDevPair(f[0]); err != nil {
		return "bad device " + strconv.Quote(string(f[0]))
	}
	cpu, err1 := strconv.ParseUint(string(f[1]), 10, 32)
	t, err2 := parseSecNano(f[3])
	pid, err3 := strconv.ParseUint(string(f[4]), 10, 32)
	seq, err4 := strconv.ParseUint(string(f[2]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(f[5]) != 1 {
		return "want 'maj,min cpu seq sec.nsec pid action RWBS …'"
	}
	p.newRun(blkCPU{a.dev, uint32(cpu)}, t, seq)
	a.pid, a.action, a.sector = uint32(pid), f[5][0], -1
	if a.action == 'm' || len(f) < 7 {
		p.rec.Kind = KindSkip // a scheduler's message
		return ""
	}
	a.op, a.flags = decodeRWBS(f[6], 0)
	rest := f[7:]
	if len(rest) >= 3 && (string(rest[1]) == "+" || string(rest[1]) == "/") {
		s, e1 := strconv.ParseInt(string(rest[0]), 10, 64)
		n, e2 := strconv.ParseInt(string(rest[2]), 10, 64)
		if e1 != nil || e2 != nil {
			return "bad sector range"
		}
		a.sector = s
		if string(rest[1]) == "+" {
			a.sectors = n
		} else {
			a.split = n
		}
		rest = rest[3:]
	}
	if a.action == 'A' {
		// "A W 384 + 256 <- (253,0) 0": where the bio was before the remap.
		if len(rest) < 3 || string(rest[0]) != "<-" {
			return "a remap (A) without '<- (maj,min) sector'"
		}
		d, err := parseDevPair(bytes.Trim(rest[1], "()"))
		s, err2 := strconv.ParseInt(string(rest[2]), 10, 64)
		if err != nil || err2 != nil {
			return "bad remap origin"
		}
		a.fromDev, a.fromSector = d, s
		rest = nil
	}
	if len(rest) > 0 && rest[0][0] == '[' {
		inner := string(bytes.Trim(bytes.Join(rest, []byte(" ")), "[]"))
		if i := bytes.IndexByte([]byte(inner), ']'); i >= 0 {
			inner = inner[:i]
		}
		if a.action == 'C' {
			if n, err := strconv.ParseInt(inner, 10, 32); err == nil {
				a.errno = int32(n)
			}
		} else {
			a.comm = inner
		}
	}
	a.time = p.normalise(blkCPU{a.dev, uint32(cpu)}, t)
	p.rec = Record{}
	if p.req.add(&a, &p.rec.Event) {
		p.rec.Kind = KindEvent
		p.pending = true
		return ""
	}
	p.rec.Kind = KindSkip
	return ""
}

// normalise re-bases a CPU whose first time is more than a day away from
// the others': blktrace sometimes leaves one CPU's clock unnormalised.
func (p *BlkparseReader) normalise(c blkCPU, t int64) int64 {
	if !p.seenCPU[c] {
		p.seenCPU[c] = true
		if d := p.last - t; p.any && (d > 86400e9 || d < -86400e9) {
			p.cpuOffset[c] = d
			p.warnings = append(p.warnings, fmt.Sprintf("blkparse: CPU %d's times (%d:%d) are %.0f s from the others' (blktrace did not normalise them): re-based to start where it first appears", c.cpu, c.dev.Major, c.dev.Minor, float64(-d)/1e9))
		}
	}
	t += p.cpuOffset[c]
	p.last, p.any = t, true
	t += p.runBase
	p.maxTime = max(p.maxTime, t)
	return t
}

// Warnings are what the reader had to assume, and what it followed.
func (p *BlkparseReader) Warnings() []string {
	w := p.warnings
	if p.runs > 1 {
		w = append(w, fmt.Sprintf("blkparse: %d runs one after another (each CPU's times and sequence numbers restart): read as one trace, each run a second after the last one's end (their real distance is not in the output); requests a run left in flight are counted unfinished", p.runs))
	}
	if r := p.req; r.merges+r.splits+r.requeues+r.remaps > 0 {
		w = append(w, fmt.Sprintf("blkparse: requests followed through %d merges (M, F), %d splits (X), %d requeues (R) and %d remaps (A); each request's size is what was dispatched", r.merges, r.splits, r.requeues, r.remaps))
	}
	return w
}

// Runs is how many traces the output held one after another.
func (p *BlkparseReader) Runs() int { return p.runs }

// Counts returns completions of no request, requests never completed,
// dispatches whose queueing was not seen, and events made from a
// completion alone (no latency).
func (p *BlkparseReader) Counts() BlkCounts { return p.req.counts() }

// BlkCounts is what rebuilding requests from blktrace events saw.
type BlkCounts struct {
	Unmatched, Unfinished, Dropped, CompletionOnly int64
}

func (b *blkRequests) counts() BlkCounts {
	return BlkCounts{Unmatched: b.unmatched, Unfinished: b.unfinished(), Dropped: b.dropped, CompletionOnly: b.completionOnly}
}

// Missing says what a capture rebuilt from blktrace events cannot show.
func (c BlkCounts) Missing(tool string) []event.Unavailable {
	if c.CompletionOnly == 0 {
		return nil
	}
	why := tool + " output with completions only (no queue or dispatch events): no latency, no queue depth, and the pid on a completion is whoever was on the CPU"
	return []event.Unavailable{
		{Metric: event.MetricLatency, Why: why},
		{Metric: event.MetricProcess, Why: why},
	}
}

func isDevNumber(b []byte) bool {
	i := bytes.IndexByte(b, ',')
	return i > 0 && i < len(b)-1 && isDigits(b[:i]) && isDigits(b[i+1:])
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func parseDevPair(b []byte) (event.Dev, error) {
	i := bytes.IndexByte(b, ',')
	if i < 0 {
		return event.Dev{}, fmt.Errorf("no comma")
	}
	ma, err1 := strconv.ParseUint(string(b[:i]), 10, 32)
	mi, err2 := strconv.ParseUint(string(b[i+1:]), 10, 32)
	if err1 != nil || err2 != nil {
		return event.Dev{}, fmt.Errorf("bad number")
	}
	return event.Dev{Major: uint32(ma), Minor: uint32(mi)}, nil
}

// parseSecNano reads "sec.nsec" (any number of fraction digits) as ns.
func parseSecNano(b []byte) (int64, error) {
	sec, frac, _ := bytes.Cut(b, []byte("."))
	s, err := strconv.ParseInt(string(sec), 10, 64)
	if err != nil {
		return 0, err
	}
	var ns int64
	scale := int64(1e8)
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad fraction")
		}
		ns += int64(c-'0') * scale
		scale /= 10
	}
	return s*1e9 + ns, nil
}
