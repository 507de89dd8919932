package parse

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
)

// Formats of the per-I/O "snoop" tools, each a table under a header line.
const (
	FormatBiosnoop     Format = "biosnoop"          // bcc biosnoop (and libbpf-tools'), with or without -Q
	FormatDisksnoop    Format = "disksnoop"         // bcc disksnoop
	FormatIosnoop      Format = "iosnoop"           // DTraceToolkit iosnoop, with -D -o -s -t -e -N -v columns
	FormatPerfIosnoop  Format = "perftools-iosnoop" // Brendan Gregg's perf-tools iosnoop (ftrace), with -s -t
	FormatBiosnoopBT   Format = "biosnoop.bt"       // bpftrace's biosnoop.bt
	snoopUnknownFormat Format = ""
)

// snoopCol is what a column of a snoop tool's table holds.
type snoopCol uint8

const (
	scSkip    snoopCol = iota // a column ioshape does not use (UID, PPID, INS, DTIME)
	scEndS                    // completion, seconds from the start (bcc TIME(s))
	scEndMs                   // completion, ms from the start (biosnoop.bt TIME(ms))
	scStartS                  // issue, seconds (perf-tools STARTs)
	scEndS2                   // completion, seconds (perf-tools ENDs)
	scStartUs                 // issue, µs (DTraceToolkit STIME)
	scEndUs                   // completion, µs (DTraceToolkit TIME)
	scStrTime                 // a wall-clock date in four words (DTraceToolkit STRTIME)
	scComm
	scPid
	scDisk // a device name
	scDev  // "maj,min"
	scMaj
	scMin
	scDir     // R/W, or an RWBS string
	scSector  // 512-byte sectors
	scBytes   //
	scLatMs   // LAT(ms), LATms
	scQueMs   // QUE(ms): queued in the OS before the device
	scDeltaUs // DTraceToolkit DELTA: issue to completion, µs
	scRest    // PATHNAME, ARGS: the rest of the line
)

var snoopColumns = map[string]snoopCol{
	"TIME(s)": scEndS, "TIME(ms)": scEndMs, "STARTs": scStartS, "ENDs": scEndS2,
	"STIME": scStartUs, "TIME": scEndUs, "STRTIME": scStrTime,
	"COMM": scComm, "PID": scPid, "DISK": scDisk, "DEVICE": scDisk, "DEV": scDev,
	"MAJ": scMaj, "MIN": scMin, "T": scDir, "TYPE": scDir, "D": scDir,
	"SECTOR": scSector, "BLOCK": scSector, "BYTES": scBytes, "SIZE": scBytes,
	"LAT(ms)": scLatMs, "LATms": scLatMs, "QUE(ms)": scQueMs, "DELTA": scDeltaUs,
	"UID": scSkip, "PPID": scSkip, "INS": scSkip, "DTIME": scSkip, "PAT": scSkip, "P": scSkip,
	"MOUNT": scSkip, "FILE": scSkip, "PATH": scSkip, // DTraceToolkit iosnoop -A
	"PATHNAME": scRest, "ARGS": scRest,
}

// snoopTable is a recognised header: its columns and the tool.
type snoopTable struct {
	format Format
	cols   []snoopCol
	names  []string // as the header prints them
	has    map[snoopCol]bool
	// biosnoop.bt's variant prints "DISK ID" over two columns, major and
	// minor, with a second header line "MAJOR MINOR".
	subHeader bool
	// words is how many words a row's fixed columns take; commAt and
	// restAt are the command's and the rest-of-line column's (−1: none).
	words          int
	commAt, restAt int
}

// layout works out, once per header, where a row's words go.
func (t *snoopTable) layout() {
	t.commAt, t.restAt = -1, -1
	for i, c := range t.cols {
		switch c {
		case scStrTime:
			t.words += 4
		case scComm:
			t.commAt = i
		case scRest:
			t.restAt = i
		default:
			t.words++
		}
	}
}

// parseSnoopHeader recognises a snoop tool's header line.
func parseSnoopHeader(line []byte) (snoopTable, bool) {
	f := bytes.Fields(line)
	t := snoopTable{has: map[snoopCol]bool{}}
	for i := 0; i < len(f); i++ {
		name := string(f[i])
		if name == "DISK" && i+1 < len(f) && string(f[i+1]) == "ID" {
			t.cols = append(t.cols, scMaj, scMin)
			t.names = append(t.names, "MAJOR", "MINOR")
			t.has[scMaj], t.has[scMin], t.subHeader = true, true, true
			i++
			continue
		}
		c, ok := snoopColumns[name]
		if !ok {
			return t, false
		}
		if c == scRest && i != len(f)-1 && !(name == "PATHNAME" && string(f[i+1]) == "ARGS" && i+1 == len(f)-1) {
			return t, false
		}
		if c == scRest && t.has[scRest] {
			continue // PATHNAME ARGS: both in the rest
		}
		t.cols = append(t.cols, c)
		t.names = append(t.names, name)
		t.has[c] = true
	}
	switch {
	case bytes.Contains(line, []byte("UID")) && t.has[scSector]:
		t.format = FormatIosnoop // DTraceToolkit prints UID unless -A
	case t.has[scDev] && t.has[scLatMs] && t.has[scDir]:
		t.format = FormatPerfIosnoop
	case t.has[scEndS] && t.has[scSector] && t.has[scComm]:
		t.format = FormatBiosnoop
	case t.has[scEndS] && t.has[scBytes] && !t.has[scComm]:
		t.format = FormatDisksnoop
	case t.has[scEndMs] && t.has[scLatMs] && t.has[scComm]:
		t.format = FormatBiosnoopBT
	default:
		return t, false
	}
	t.layout()
	return t, true
}

var snoopLost = regexp.MustCompile(`(?i)(?:possibly )?lost (\d+) (?:samples|events)`)

// SnoopReader reads the table a snoop tool prints: a header line names the
// columns, each later line is one I/O (at completion). Lines outside the
// table (banners, a tool's prose, "[...]") are skipped; a line that starts
// like a row but does not read is a syntax error.
type SnoopReader struct {
	lineScanner
	want    Format // "": any snoop tool
	table   *snoopTable
	devs    nameTable
	skipSub bool
	rows    int64
	tables  []snoopTable // every header read: a file may hold several tables
	unit    blockUnit    // DTraceToolkit iosnoop's BLOCK unit
	out     []Record
}

// NewSnoopReader reads r; want restricts it to one tool's table ("" for any).
// blockSize, if not 0, is the size of iosnoop's BLOCK unit; 0: found from
// the capture (BlockUnit says how).
func NewSnoopReader(r io.Reader, file string, want Format, blockSize int64) *SnoopReader {
	return &SnoopReader{lineScanner: newLineScanner(r, file), want: want, devs: newNameTable(),
		unit: blockUnit{size: blockSize, given: blockSize > 0, last: map[event.Dev][2]int64{}}}
}

// BlockUnit says in what unit DTraceToolkit iosnoop's BLOCK column was
// read, and why ("" for other tools, and before a row was read).
func (p *SnoopReader) BlockUnit() string {
	if p.table == nil || p.table.format != FormatIosnoop || p.rows == 0 {
		return ""
	}
	if p.unit.given {
		return fmt.Sprintf("iosnoop BLOCK read as %d-byte units, as --block-size says", p.unit.size)
	}
	return p.unit.why
}

// Scan reads the next record.
func (p *SnoopReader) Scan() bool {
	for {
		if len(p.out) > 0 {
			p.rec = p.out[0]
			p.out = p.out[1:]
			return true
		}
		if !p.scan(p.parse) {
			if p.unit.held() {
				p.out = p.unit.decide(p.out)
				continue
			}
			return false
		}
		if p.rec.Kind == KindEvent && p.table.format == FormatIosnoop {
			p.out = p.unit.add(p.rec, p.out)
			continue
		}
		return true
	}
}

// Format is the tool whose table was read ("" before its header).
func (p *SnoopReader) Format() Format {
	if p.table == nil {
		return snoopUnknownFormat
	}
	return p.table.format
}

func (p *SnoopReader) parse(b []byte) string {
	if t, ok := parseSnoopHeader(b); ok && (p.want == "" || p.want == t.format) {
		if p.table != nil && p.table.format != t.format && p.rows > 0 {
			return fmt.Sprintf("a %s table after a %s one: import each tool's output on its own", t.format, p.table.format)
		}
		p.table, p.skipSub = &t, t.subHeader
		p.tables = append(p.tables, t)
		p.rec.Kind = KindNotice
		return ""
	}
	if m := snoopLost.FindSubmatch(b); m != nil {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		p.rec.Kind, p.rec.N = KindLost, n
		return ""
	}
	if p.table == nil {
		p.rec.Kind = KindSkip
		return ""
	}
	if p.skipSub && bytes.Equal(bytes.Join(bytes.Fields(b), []byte(" ")), []byte("MAJOR MINOR")) {
		p.skipSub = false
		p.rec.Kind = KindSkip
		return ""
	}
	msg, row := p.row(bytes.Fields(b))
	switch {
	case msg == "":
		p.rows++
		p.rec.Kind = KindEvent
	case row:
		return msg
	default:
		p.rec.Kind = KindSkip
	}
	return ""
}

// row reads one table row into p.rec.Event. A message with row false
// means the line is not a row at all (prose), with row true a bad row.
func (p *SnoopReader) row(f [][]byte) (msg string, row bool) {
	t := p.table
	commAt, restAt := t.commAt, t.restAt
	need := t.words
	if commAt >= 0 {
		need++
	}
	if len(f) < need || (commAt < 0 && restAt < 0 && len(f) != need) {
		return "too few columns", false
	}
	// Columns before the command read from the left; after it, from the
	// right unless a rest-of-line column follows (then the command is one
	// word). A command may hold spaces.
	vals := make([][]byte, len(t.cols))
	i := 0
	for ci, c := range t.cols {
		if c == scComm || c == scRest || (commAt >= 0 && ci > commAt && restAt < 0) {
			break
		}
		if c == scStrTime {
			i += 4
			continue
		}
		vals[ci] = f[i]
		i++
	}
	if commAt >= 0 && restAt < 0 {
		j := len(f)
		for ci := len(t.cols) - 1; ci > commAt; ci-- {
			j--
			vals[ci] = f[j]
		}
		if j <= i {
			return "too few columns", false
		}
		vals[commAt] = bytes.Join(f[i:j], []byte(" "))
	} else if commAt >= 0 {
		// The command, then the rest of the line (DTraceToolkit prints
		// "%10s %s"): a name with spaces ends where the path begins, at
		// the first word that starts like one ("/…", "??/…", "<none>").
		end := i + 1
		if restAt == commAt+1 {
			for j := i + 1; j < len(f); j++ {
				if w := f[j]; w[0] == '/' || w[0] == '<' || bytes.HasPrefix(w, []byte("??")) {
					end = j
					break
				}
			}
		}
		vals[commAt] = bytes.Join(f[i:end], []byte(" "))
		i = end
		for ci := commAt + 1; ci < len(t.cols); ci++ {
			if t.cols[ci] == scRest {
				break
			}
			if i >= len(f) {
				return "too few columns", false
			}
			vals[ci] = f[i]
			i++
		}
	}
	// A row's first numeric column must read, or this is prose.
	first := true
	e := &p.rec.Event
	*e = event.Event{Layer: event.Block, Op: event.Read, Offset: -1}
	var start, end, lat, que int64
	var haveStart, haveEnd, haveLat, haveQue bool
	var dev event.Dev
	var disk string
	var maj, min uint64
	for ci, c := range t.cols {
		v := vals[ci]
		if v == nil && c != scStrTime {
			continue
		}
		var err error
		num := func(unit int64) int64 {
			var n int64
			n, err = parseFixed(v, unit)
			return n
		}
		switch c {
		case scEndS, scEndS2:
			end, haveEnd = num(1e9), true
		case scEndMs:
			end, haveEnd = num(1e6), true
		case scStartS:
			start, haveStart = num(1e9), true
		case scStartUs:
			start, haveStart = num(1e3), true
		case scEndUs:
			end, haveEnd = num(1e3), true
		case scLatMs:
			lat, haveLat = num(1e6), true
		case scQueMs:
			que, haveQue = num(1e6), true
		case scDeltaUs:
			lat, haveLat = num(1e3), true
		case scPid:
			var n uint64
			n, err = strconv.ParseUint(string(v), 10, 32)
			e.Pid, e.Tid = uint32(n), uint32(n)
		case scComm:
			e.Comm = string(v)
		case scDisk:
			disk = string(v)
			p.unit.noteDevice(disk)
		case scDev:
			dev, err = parseDevPair(v)
		case scMaj:
			maj, err = strconv.ParseUint(string(v), 10, 32)
		case scMin:
			min, err = strconv.ParseUint(string(v), 10, 32)
		case scDir:
			switch {
			case len(v) == 1 && v[0] == 'R':
				e.Op = event.Read
			case len(v) == 1 && v[0] == 'W':
				e.Op = event.Write
			case len(v) == 1 && v[0] == 'M': // disksnoop: no bytes, no write flag
				e.Op = event.Flush
			default:
				op, fl := decodeRWBS(v, 0)
				if op == event.Other && !bytes.ContainsAny(v, "N") {
					err = fmt.Errorf("direction %q", v)
				}
				e.Op, e.Flags = op, fl
			}
		case scSector:
			var n int64
			n, err = strconv.ParseInt(string(v), 10, 64)
			e.Offset = n * 512
			if t.format == FormatIosnoop {
				e.Offset = n // in units found later (blockUnit)
			}
		case scBytes:
			e.Size, err = strconv.ParseInt(string(v), 10, 64)
			e.Bytes = e.Size
		}
		if err != nil {
			if first {
				return "not a row", false
			}
			return fmt.Sprintf("bad %s value %q", t.names[ci], v), true
		}
		if c != scComm && c != scDisk && c != scRest {
			first = false
		}
	}
	switch {
	case t.has[scDev]:
	case t.has[scMaj]:
		dev = event.Dev{Major: uint32(maj), Minor: uint32(min)}
	case t.has[scDisk]:
		dev = p.devs.dev(disk)
	default:
		dev = p.devs.dev("")
	}
	e.Dev = dev
	switch {
	case haveStart && haveEnd:
	case haveEnd && haveLat:
		start = end - lat
	case haveStart && haveLat:
		end = start + lat
	case haveEnd:
		start = end
	case haveStart:
		end = start
	default: // no times: only the latency
		start, end = 0, lat
	}
	e.Start, e.End = start, end
	if haveQue {
		e.Dispatch, e.Flags = start, e.Flags|event.FlagDispatched
		e.Start = start - que
	}
	if !e.Op.IsData() {
		e.Offset = -1
	}
	if isLinuxKernelThread(e.Comm) || (t.format == FormatIosnoop && e.Pid == 0) {
		e.Flags |= event.FlagKernel
	}
	return "", true
}

// Missing says what the tables read cannot show: what any of them lacks
// (a file whose tables differ cannot show a metric for all of its I/O).
func (p *SnoopReader) Missing() []event.Unavailable {
	var m []event.Unavailable
	for _, t := range p.tables {
		for _, u := range t.missing() {
			if !slices.ContainsFunc(m, func(x event.Unavailable) bool { return x.Metric == u.Metric }) {
				m = append(m, u)
			}
		}
	}
	return m
}

func (t *snoopTable) missing() []event.Unavailable {
	tool := string(t.format)
	var m []event.Unavailable
	add := func(metric, why string) { m = append(m, event.Unavailable{Metric: metric, Why: tool + " " + why}) }
	times := t.has[scEndS] || t.has[scEndMs] || t.has[scStartS] || t.has[scEndS2] || t.has[scStartUs] || t.has[scEndUs]
	if !times {
		add(event.MetricTiming, "output without times (perf-tools: -s/-t; DTraceToolkit: -s/-t) says how long each I/O took but not when it came")
	}
	lat := t.has[scLatMs] || t.has[scDeltaUs] || (t.has[scStartS] && t.has[scEndS2]) || (t.has[scStartUs] && t.has[scEndUs])
	if !lat {
		add(event.MetricLatency, "output without a latency column (DTraceToolkit: -D, or both -s and -t)")
	}
	if !t.has[scQueMs] {
		add(event.MetricQueueTime, "output has no queue time (bcc biosnoop: -Q)")
	}
	if !t.has[scBytes] {
		add(event.MetricSize, "output has no size column")
	}
	if !t.has[scDir] {
		add(event.MetricDirection, "output does not say read or write")
	}
	if !t.has[scSector] {
		add(event.MetricOffset, "output has no sector: sequential share and seeks cannot be computed")
	}
	if !t.has[scPid] && !t.has[scComm] {
		add(event.MetricProcess, "output does not say which process issued the I/O")
	}
	return m
}

// Devices names the devices the table named (dev numbers it made up).
func (p *SnoopReader) Devices() []event.Device { return p.devs.devices() }

// nameTable gives device names (or volume IDs) numbers of their own, for
// formats that name devices rather than number them: major 0, minor from 1.
type nameTable struct {
	ids    map[string]event.Dev
	names  []string
	folded int // devices past MaxImportDevices, counted as one
}

// MaxImportDevices bounds the devices an import names: past it, the rest
// are one device, "other" (a trace's footer keeps 4,096 entries a list).
// A device's name is kept to maxDeviceName bytes.
const (
	MaxImportDevices = 4095
	maxDeviceName    = 256
)

func newNameTable() nameTable { return nameTable{ids: map[string]event.Dev{}} }

func (t *nameTable) dev(name string) event.Dev {
	if d, ok := t.ids[name]; ok {
		return d
	}
	if len(t.names) >= MaxImportDevices {
		t.folded++
		return event.Dev{Major: 0, Minor: MaxImportDevices + 1}
	}
	d := event.Dev{Major: 0, Minor: uint32(len(t.names) + 1)}
	t.ids[name] = d
	if len(name) > maxDeviceName {
		name = name[:maxDeviceName]
	}
	t.names = append(t.names, name)
	return d
}

func (t *nameTable) devices() []event.Device {
	out := make([]event.Device, 0, len(t.names)+1)
	for i, n := range t.names {
		if n == "" {
			n = "(not recorded)"
		}
		out = append(out, event.Device{Major: 0, Minor: uint32(i + 1), Name: n})
	}
	if t.folded > 0 {
		out = append(out, event.Device{Major: 0, Minor: MaxImportDevices + 1, Name: fmt.Sprintf("other (I/Os of devices past the first %d, together)", MaxImportDevices)})
	}
	return out
}

// parseFixed reads a decimal number, with an optional fraction, in units of
// 1/unit (unit 1e6 turns milliseconds into nanoseconds), without floats.
func parseFixed(b []byte, unit int64) (int64, error) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	whole, frac, _ := bytes.Cut(b, []byte("."))
	if len(whole) == 0 && len(frac) == 0 {
		return 0, fmt.Errorf("empty number")
	}
	var n int64
	for _, c := range whole {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number")
		}
		n = n*10 + int64(c-'0')
	}
	n *= unit
	scale := unit / 10
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number")
		}
		n += int64(c-'0') * scale
		scale /= 10
	}
	if neg {
		n = -n
	}
	return n, nil
}

// snoopHeaderIn finds a snoop tool's header among lines.
func snoopHeaderIn(lines []string) Format {
	for _, l := range lines {
		if t, ok := parseSnoopHeader([]byte(strings.TrimSpace(l))); ok {
			return t.format
		}
	}
	return ""
}
