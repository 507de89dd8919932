package parse

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// The public block-trace corpora, as CSV.
const (
	// MSR Cambridge (SNIA IOTTA): Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
	// with Windows FILETIME timestamps and response times in 100 ns ticks.
	FormatMSR Format = "msr"
	// Alibaba block traces: device_id,opcode,offset,length,timestamp (µs since the epoch).
	FormatAlibaba Format = "alibaba"
	// Tencent CBS traces: Timestamp,Offset,Size,IOType,VolumeID (seconds,
	// 512-byte sectors, 0 read / 1 write).
	FormatTencent Format = "tencent"
)

var csvHeaders = map[Format]string{
	FormatMSR:     "timestamp,hostname,disknumber,type,offset,size,responsetime",
	FormatAlibaba: "device_id,opcode,offset,length,timestamp",
	FormatTencent: "timestamp,offset,size,iotype,volumeid",
}

// CSVColumns describes a corpus's columns, for messages.
func CSVColumns(f Format) string { return csvHeaders[f] }

// BlockCSVReader reads one of the corpora's CSV files: one block I/O a
// line, devices (MSR's host and disk, Alibaba's device, Tencent's volume)
// kept apart. It parses in place, without allocating per line, so that
// files of hundreds of millions of lines import at disk speed.
type BlockCSVReader struct {
	lineScanner
	format Format
	devs   map[string]event.Dev
	names  []string
	folded int64 // I/Os of devices past MaxImportDevices
	base   int64 // the first timestamp, in the format's units
	based  bool
	host   string // MSR's hostname, of the first line
	f      [8][]byte
}

// NewBlockCSVReader reads r in format f (FormatMSR, FormatAlibaba or FormatTencent).
func NewBlockCSVReader(r io.Reader, file string, f Format) *BlockCSVReader {
	return &BlockCSVReader{lineScanner: newLineScanner(r, file), format: f, devs: map[string]event.Dev{}}
}

// Scan reads the next record.
func (p *BlockCSVReader) Scan() bool { return p.scan(p.parse) }

func (p *BlockCSVReader) split(b []byte) int {
	n := 0
	for n < len(p.f) {
		i := bytes.IndexByte(b, ',')
		if i < 0 {
			p.f[n] = bytes.TrimSpace(b)
			return n + 1
		}
		p.f[n] = bytes.TrimSpace(b[:i])
		b = b[i+1:]
		n++
	}
	return n + 1 // too many
}

func (p *BlockCSVReader) parse(b []byte) string {
	n := p.split(b)
	want := strings.Count(csvHeaders[p.format], ",") + 1
	if n != want {
		if p.line == 1 {
			return fmt.Sprintf("not a %s trace: want %d columns (%s), found %d", p.format, want, csvHeaders[p.format], n)
		}
		return fmt.Sprintf("want %d columns, found %d", want, n)
	}
	if p.line == 1 && strings.EqualFold(strings.ReplaceAll(string(b), " ", ""), csvHeaders[p.format]) {
		p.rec.Kind = KindNotice
		return ""
	}
	e := &p.rec.Event
	*e = event.Event{Layer: event.Block}
	var ts, tsUnit int64
	var key []byte
	var ok = true
	num := func(b []byte) int64 {
		v, good := atoi(b)
		ok = ok && good
		return v
	}
	switch p.format {
	case FormatMSR:
		ts, tsUnit = num(p.f[0]), 100
		switch {
		case bytes.EqualFold(p.f[3], []byte("Read")):
			e.Op = event.Read
		case bytes.EqualFold(p.f[3], []byte("Write")):
			e.Op = event.Write
		default:
			return fmt.Sprintf("type %q is neither Read nor Write", p.f[3])
		}
		e.Offset, e.Size = num(p.f[4]), num(p.f[5])
		e.End = num(p.f[6]) * 100 // added to the start below
		key = b[len(p.f[0])+1 : len(p.f[0])+1+len(p.f[1])+1+len(p.f[2])]
	case FormatAlibaba:
		switch {
		case len(p.f[1]) == 1 && p.f[1][0] == 'R':
			e.Op = event.Read
		case len(p.f[1]) == 1 && p.f[1][0] == 'W':
			e.Op = event.Write
		default:
			return fmt.Sprintf("opcode %q is neither R nor W", p.f[1])
		}
		e.Offset, e.Size = num(p.f[2]), num(p.f[3])
		ts, tsUnit = num(p.f[4]), 1000
		key = p.f[0]
	case FormatTencent:
		ts, tsUnit = num(p.f[0]), 1e9
		e.Offset, e.Size = num(p.f[1])*512, num(p.f[2])*512
		switch {
		case len(p.f[3]) == 1 && p.f[3][0] == '0':
			e.Op = event.Read
		case len(p.f[3]) == 1 && p.f[3][0] == '1':
			e.Op = event.Write
		default:
			return fmt.Sprintf("IOType %q is neither 0 (read) nor 1 (write)", p.f[3])
		}
		key = p.f[4]
	}
	if !ok {
		return "a number column does not read as a whole number"
	}
	if !p.based {
		// FILETIME in ns overflows int64: count from the first line instead.
		p.base, p.based = ts, true
		if p.format == FormatMSR {
			p.host = string(p.f[1])
		}
	}
	e.Start = (ts - p.base) * tsUnit
	e.End += e.Start
	e.Bytes = e.Size
	d, found := p.devs[string(key)]
	if !found && len(p.names) >= MaxImportDevices {
		// Past the bound, one device for the rest (see MaxImportDevices).
		d, found = event.Dev{Major: 0, Minor: MaxImportDevices + 1}, true
		p.folded++
	}
	if !found {
		d = event.Dev{Major: 0, Minor: uint32(len(p.names) + 1)}
		name := string(key)
		if p.format == FormatMSR {
			host, disk, _ := strings.Cut(name, ",")
			name = host + " disk " + disk
		} else if p.format == FormatTencent {
			name = "volume " + name
		} else {
			name = "device " + name
		}
		p.devs[string(key)] = d
		if len(name) > maxDeviceName {
			name = name[:maxDeviceName]
		}
		p.names = append(p.names, name)
	}
	e.Dev = d
	p.rec.Kind = KindEvent
	return ""
}

// atoi reads a non-negative decimal integer.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// Devices names the devices or volumes the file held.
func (p *BlockCSVReader) Devices() []event.Device {
	out := make([]event.Device, len(p.names), len(p.names)+1)
	for i, n := range p.names {
		out[i] = event.Device{Major: 0, Minor: uint32(i + 1), Name: n}
	}
	if p.folded > 0 {
		out = append(out, event.Device{Major: 0, Minor: MaxImportDevices + 1, Name: fmt.Sprintf("other (I/Os of devices past the first %d, together)", MaxImportDevices)})
	}
	return out
}

// Missing says what the corpus's format cannot show.
func (p *BlockCSVReader) Missing() []event.Unavailable {
	proc := event.Unavailable{Metric: event.MetricProcess, Why: string(p.format) + " traces name devices, not processes"}
	queue := event.Unavailable{Metric: event.MetricQueueTime, Why: string(p.format) + " traces do not split queueing from the device"}
	noLat := event.Unavailable{Metric: event.MetricLatency, Why: string(p.format) + " traces hold issue times only: no latency, no queue depth"}
	switch p.format {
	case FormatMSR:
		return []event.Unavailable{proc, queue}
	case FormatTencent:
		return []event.Unavailable{noLat, {Metric: event.MetricFineTiming, Why: "tencent traces time I/O to the second: no gaps between I/Os"}, proc, queue}
	}
	return []event.Unavailable{noLat, proc, queue}
}

// DetectCSV recognises a corpus from a file's first line (its header, if
// it has one, or its first row).
func DetectCSV(line string) Format {
	l := strings.TrimSpace(line)
	for f, h := range csvHeaders {
		if strings.EqualFold(strings.ReplaceAll(l, " ", ""), h) {
			return f
		}
	}
	c := strings.Split(l, ",")
	allNum := func(idx ...int) bool {
		for _, i := range idx {
			if _, ok := atoi([]byte(strings.TrimSpace(c[i]))); !ok {
				return false
			}
		}
		return true
	}
	switch {
	case len(c) == 7 && (strings.EqualFold(c[3], "Read") || strings.EqualFold(c[3], "Write")) && allNum(0, 2, 4, 5, 6):
		return FormatMSR
	case len(c) == 5 && (c[1] == "R" || c[1] == "W") && allNum(0, 2, 3, 4):
		return FormatAlibaba
	case len(c) == 5 && (c[3] == "0" || c[3] == "1") && allNum(0, 1, 2, 3, 4):
		return FormatTencent
	}
	return FormatUnknown
}

// Origin is the first line's time: each corpus stamps its I/O with an
// absolute time (MSR: Windows FILETIME, 100 ns ticks since 1601; Alibaba:
// µs since 1970; Tencent: seconds since 1970). False before a line was read.
func (p *BlockCSVReader) Origin() (time.Time, bool) {
	if !p.based {
		return time.Time{}, false
	}
	switch p.format {
	case FormatMSR:
		const ticksTo1970 = 116444736000000000 // FILETIME of 1970-01-01
		t := p.base - ticksTo1970
		return time.Unix(t/1e7, t%1e7*100).UTC(), true
	case FormatAlibaba:
		return time.UnixMicro(p.base).UTC(), true
	case FormatTencent:
		return time.Unix(p.base, 0).UTC(), true
	}
	return time.Time{}, false
}

// Host is the machine the capture names (MSR's hostname column), or "".
func (p *BlockCSVReader) Host() string { return p.host }
