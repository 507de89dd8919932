package published

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/drive"
)

// The DiskMarks print a test a line: a label naming the access, the
// direction (or the section does), the block size and the queue, then a
// colon and the figures.
//
//	CrystalDiskMark 7, 8, KDiskMark   SEQ    1MiB (Q=  8, T= 1):   384.064 MB/s [    366.3 IOPS] < 21765.43 us>
//	                                  Sequential 1 MiB (Q= 8, T= 1):   528.053 MB/s [ 528.1 IOPS] < 14449.94 us>
//	CrystalDiskMark 5, 6              Random Read 4KiB (Q= 32,T= 1) :    33.730 MB/s [  8234.9 IOPS]
//	                                  Sequential Read (Q= 32,T= 1) :   140.647 MB/s   (128 KiB blocks)
//	                                  Sequential Read (T= 1) :   156.034 MB/s          (1 MiB, one at a time)
//	CrystalDiskMark 3                 Random Read 4KB (QD=32) :   271.859 MB/s [ 66371.9 IOPS]
//	AmorphousDiskMark                 Sequential Read 1MiB (QD=  32) :    471.21 MB/s [  96167.0 IOPS]
var (
	labelRe  = regexp.MustCompile(`(?i)^(seq|sequ[ae]ntial|rnd|random|512k|4k)[^:]*?:`)
	sizeRe   = regexp.MustCompile(`(?i)(?:^|[\s(]|seq|rnd)(\d+(?:\.\d+)?)\s*(KiB|MiB|KB|MB|K|M)\b`)
	queueRe  = regexp.MustCompile(`(?i)\bQD?\s*=?\s*(\d+)`)
	threadRe = regexp.MustCompile(`(?i)(?:\b|\d)T\s*=?\s*(\d+)`)
	rateRe   = regexp.MustCompile(`(?i)([\d,]+(?:\.\d+)?)\s*(MB/s|GB/s|KB/s)`)
	iopsRe   = regexp.MustCompile(`(?i)\[?\s*([\d,]+(?:\.\d+)?)\s*IOPS`)
	latRe    = regexp.MustCompile(`(?i)([\d,]+(?:\.\d+)?)\s*(us|µs|μs|ms)\b`)
	headerRe = regexp.MustCompile(`(?i)^(CrystalDiskMark|KDiskMark|AmorphousDiskMark)\s*\(?\s*v?(\d[\w.]*)?`)
	metaRe   = regexp.MustCompile(`^(Profile|Test|Date|Device|Comment|Volume)\s*:\s*(.*)$`)
	testRe   = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(GiB|MiB|GB|MB)`)
)

// testLabel is a test line's label (before the colon), if l is one.
func testLabel(l string) (string, bool) {
	m := labelRe.FindString(l)
	if m == "" {
		return "", false
	}
	return strings.TrimSuffix(m, ":"), true
}

func parseDiskMark(ls []line) (*drive.Provenance, error) {
	p := &drive.Provenance{Tool: "CrystalDiskMark"}
	section := ""     // read, write, mix
	var oldStyle bool // CrystalDiskMark 5 and 6: sequential tests name no block size
	for _, l := range ls {
		t := l.text
		if m := headerRe.FindStringSubmatch(t); m != nil && len(p.Tests) == 0 {
			p.Tool, p.Version = canonicalTool(m[1]), strings.TrimRight(m[2], ".")
			if p.Tool == "CrystalDiskMark" && (strings.HasPrefix(p.Version, "5") || strings.HasPrefix(p.Version, "6")) {
				oldStyle = true
			}
			if i := strings.Index(strings.ToLower(t), "edition"); i > 0 && p.Tool == "CrystalDiskMark" {
				// "CrystalDiskMark 8.0.4 Shizuku Edition x64": the edition is the version's.
				p.Version = strings.TrimSpace(t[len(m[0]) : i+len("edition")])
				p.Version = strings.TrimSpace(m[2] + " " + p.Version)
			}
			continue
		}
		switch low := strings.ToLower(t); {
		case strings.HasPrefix(low, "[read]"):
			section = "read"
			continue
		case strings.HasPrefix(low, "[write]"):
			section = "write"
			continue
		case strings.HasPrefix(low, "[mix]"):
			section = "mix"
			continue
		}
		if m := metaRe.FindStringSubmatch(t); m != nil {
			v := strings.TrimSpace(m[2])
			switch m[1] {
			case "Profile":
				p.Profile = v
			case "Test":
				p.TestSize = v
				if s := testRe.FindStringSubmatch(v); s != nil {
					p.TestBytes, _ = sizeBytes(s[1], s[2])
					p.TestSize = s[1] + " " + s[2]
				}
			case "Date":
				p.Date = v
			case "Device", "Comment":
				p.Device = v
			}
			continue
		}
		label, ok := testLabel(t)
		if !ok {
			continue
		}
		if section == "mix" || strings.Contains(strings.ToLower(label), "mix") {
			continue // a read/write mix is no one direction's figure
		}
		test, err := diskMarkTest(l.n, label, t[len(label)+1:], section, oldStyle)
		if err != nil {
			return nil, err
		}
		p.Tests = append(p.Tests, test)
	}
	return p, nil
}

func canonicalTool(s string) string {
	for _, t := range []string{"CrystalDiskMark", "KDiskMark", "AmorphousDiskMark"} {
		if strings.EqualFold(s, t) {
			return t
		}
	}
	return s
}

// diskMarkTest reads one test line: its label and its figures.
func diskMarkTest(n int, label, figures, section string, oldStyle bool) (drive.Test, error) {
	low := strings.ToLower(label)
	t := drive.Test{Op: section, Access: "rand", Depth: 1, Threads: 1, Line: n}
	if strings.HasPrefix(low, "seq") {
		t.Access = "seq"
	}
	switch {
	case strings.Contains(low, "read"):
		t.Op = "read"
	case strings.Contains(low, "write"):
		t.Op = "write"
	}
	if t.Op == "" {
		return t, syntaxf(n, "%q names neither reads nor writes, and no [Read] or [Write] section holds it", label)
	}
	if m := queueRe.FindStringSubmatch(label); m != nil {
		t.Depth = boundedInt(m[1])
	}
	if m := threadRe.FindStringSubmatch(label); m != nil {
		t.Threads = boundedInt(m[1])
	}
	switch m := sizeRe.FindStringSubmatch(label); {
	case m != nil:
		var ok bool
		if t.SizeBytes, ok = sizeBytes(m[1], m[2]); !ok {
			return t, syntaxf(n, "%q: expected a block size such as 4KiB or 1MiB", label)
		}
	case strings.HasPrefix(low, "512k"):
		t.SizeBytes = 512 << 10
	case strings.HasPrefix(low, "4k"):
		t.SizeBytes = 4 << 10
	case t.Access == "seq" && oldStyle && queueRe.MatchString(label):
		t.SizeBytes = 128 << 10 // CrystalDiskMark 5 and 6: "Seq Q32T1" reads 128 KiB blocks
	case t.Access == "seq":
		t.SizeBytes = 1 << 20
	default:
		return t, syntaxf(n, "%q: expected a block size such as 4KiB", label)
	}
	if t.Depth <= 0 || t.Threads <= 0 || t.Depth > 1<<16 || t.Threads > 1<<12 {
		return t, syntaxf(n, "%q: expected a queue depth and threads of at least 1", label)
	}
	var iops float64
	if m := rateRe.FindStringSubmatch(figures); m != nil {
		v, err := number(m[1])
		if err != nil {
			return t, syntaxf(n, "%q is not a rate", m[0])
		}
		switch strings.ToLower(m[2]) {
		case "gb/s":
			v *= 1000
		case "kb/s":
			v /= 1000
		}
		t.MBs = v
	}
	if m := iopsRe.FindStringSubmatch(figures); m != nil {
		iops, _ = number(m[1])
	}
	if m := latRe.FindStringSubmatch(figures); m != nil && (strings.Contains(figures, "<") || t.MBs == 0 && iops == 0) {
		v, _ := number(m[1])
		if strings.EqualFold(m[2], "ms") {
			v *= 1000
		}
		t.LatUs = v
	}
	switch {
	case t.MBs > 0:
	case iops > 0:
		t.MBs = iops * float64(t.SizeBytes) / 1e6
	case t.LatUs > 0:
		t.MBs = float64(t.InFlight()) * float64(t.SizeBytes) / t.LatUs
	default:
		return t, syntaxf(n, "%s: expected a figure after the colon — MB/s, GB/s, IOPS or µs", strings.TrimSpace(label))
	}
	return t, nil
}

// boundedInt reads a queue depth or thread count; -1 for one no tool
// prints (the callers refuse it with the line).
func boundedInt(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil || v > 1<<20 {
		return -1
	}
	return v
}
