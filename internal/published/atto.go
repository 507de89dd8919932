package published

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/drive"
)

// ATTO Disk Benchmark measures sequential transfers of each size from
// 512 B to 64 MiB at one queue depth (4 unless changed), and shows a table
// of transfer size, write and read; its rates are pasted as text or saved
// as CSV:
//
//	Transfer Size   Write         Read
//	512 B           30.13 MB/s    35.71 MB/s
//	64 MB           1.21 GB/s     1.67 GB/s
var (
	attoRowRe    = regexp.MustCompile(`(?i)^(\d+(?:\.\d+)?)\s*(B|KB|KiB|K|MB|MiB|M)\b[\s,;|\t]*(.*)$`)
	attoValueRe  = regexp.MustCompile(`(?i)([\d,]*\.?\d+)\s*(GB/s|MB/s|KB/s|IO/s|IOPS)?`)
	attoQueueRe  = regexp.MustCompile(`(?i)queue\s*depth\s*[:=]?\s*(\d+)`)
	attoLengthRe = regexp.MustCompile(`(?i)total\s*length\s*[:=]?\s*(\d+(?:\.\d+)?)\s*(GB|MB|GiB|MiB|KB)`)
	attoToolRe   = regexp.MustCompile(`(?i)ATTO\s+Disk\s+Benchmark\s*v?(\d[\w.]*)?`)
)

// attoDefaultQueue is the queue depth ATTO Disk Benchmark uses unless
// told otherwise.
const attoDefaultQueue = 4

func parseATTO(ls []line) (*drive.Provenance, error) {
	p := &drive.Provenance{Tool: "ATTO Disk Benchmark"}
	writeFirst, unit := true, "mb/s" // ATTO's own order: Write, then Read
	depth, saidDepth := attoDefaultQueue, false
	var rows []line
	for _, l := range ls {
		t, low := l.text, strings.ToLower(l.text)
		if m := attoToolRe.FindStringSubmatch(t); m != nil && p.Version == "" {
			p.Version = m[1]
		}
		if m := attoQueueRe.FindStringSubmatch(t); m != nil {
			depth, saidDepth = boundedInt(m[1]), true
		}
		if m := attoLengthRe.FindStringSubmatch(t); m != nil {
			p.TestBytes, _ = sizeBytes(m[1], m[2])
			p.TestSize = m[1] + " " + m[2]
		}
		w, r := strings.Index(low, "write"), strings.Index(low, "read")
		if w >= 0 && r >= 0 && !attoRowRe.MatchString(t) {
			writeFirst = w < r
			for _, u := range []string{"gb/s", "mb/s", "kb/s", "io/s", "iops"} {
				if strings.Contains(low, u) {
					unit = u
				}
			}
			continue
		}
		if attoRowRe.MatchString(t) {
			rows = append(rows, l)
		}
	}
	if depth <= 0 || depth > 1<<10 {
		return nil, syntaxf(1, "expected a queue depth of at least 1")
	}
	if !saidDepth {
		p.Profile = "queue depth 4 (ATTO's default: the table does not say)"
	} else {
		p.Profile = "queue depth " + strconv.Itoa(depth)
	}
	for _, l := range rows {
		m := attoRowRe.FindStringSubmatch(l.text)
		size, ok := sizeBytes(m[1], m[2])
		vals := attoValueRe.FindAllStringSubmatch(m[3], -1)
		if !ok || len(vals) < 2 {
			return nil, syntaxf(l.n, "expected a transfer size, then its write and read rates (\"4 KB  120.5 MB/s  300.1 MB/s\")")
		}
		for k, v := range vals[:2] {
			mbs, err := number(v[1])
			if err != nil || !(mbs > 0) {
				return nil, syntaxf(l.n, "%q: expected a positive rate", v[0])
			}
			u := strings.ToLower(v[2])
			if u == "" {
				u = unit
			}
			switch u {
			case "gb/s":
				mbs *= 1000
			case "kb/s":
				mbs /= 1000
			case "io/s", "iops":
				mbs *= float64(size) / 1e6
			}
			op := "read"
			if (k == 0) == writeFirst {
				op = "write"
			}
			p.Tests = append(p.Tests, drive.Test{Op: op, Access: "seq", SizeBytes: size, Depth: depth, Threads: 1, MBs: mbs, Line: l.n})
		}
	}
	return p, nil
}
