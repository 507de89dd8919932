package parse

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/ioshape/ioshape/internal/event"
)

// FormatFioIolog is fio's iolog (write_iolog=, or read_iolog= input).
const FormatFioIolog Format = "fio-iolog"

// FioIologReader reads a fio iolog, version 2 ("file action [offset
// length]") or 3 ("µs file action [offset length]"): what fio asked for,
// one I/O a line, as syscall-layer events. Each file is kept apart as a
// device of its own. An iolog holds issue times (version 3) but not
// completions.
type FioIologReader struct {
	lineScanner
	version int
	files   nameTable
	clock   int64 // version 2: the sum of "wait" delays, ns
	sawWait bool
}

// NewFioIologReader reads r, naming file in syntax errors.
func NewFioIologReader(r io.Reader, file string) *FioIologReader {
	return &FioIologReader{lineScanner: newLineScanner(r, file), files: newNameTable()}
}

// Scan reads the next record.
func (p *FioIologReader) Scan() bool { return p.scan(p.parse) }

// Version is the iolog's version, once its header was read.
func (p *FioIologReader) Version() int { return p.version }

func (p *FioIologReader) parse(b []byte) string {
	if p.version == 0 {
		switch string(bytes.TrimSpace(b)) {
		case "fio version 2 iolog":
			p.version = 2
		case "fio version 3 iolog":
			p.version = 3
		default:
			return "not a fio iolog: the first line must be 'fio version 2 iolog' or 'fio version 3 iolog'"
		}
		p.rec.Kind = KindNotice
		return ""
	}
	f := bytes.Fields(b)
	var at int64
	if p.version == 3 {
		if len(f) < 3 {
			return "want 'time file action [offset length]'"
		}
		us, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return fmt.Sprintf("bad time %q", f[0])
		}
		at, f = us*1000, f[1:]
	} else if len(f) < 2 {
		return "want 'file action [offset length]'"
	}
	name, act := string(f[0]), string(f[1])
	var op event.Op
	switch act {
	case "add", "open", "close":
		p.files.dev(name)
		p.rec.Kind = KindSkip
		return ""
	case "read":
		op = event.Read
	case "write":
		op = event.Write
	case "trim":
		op = event.Discard
	case "sync", "datasync":
		op = event.Flush
	case "wait":
		if len(f) < 3 {
			return "wait without a delay"
		}
		us, err := strconv.ParseInt(string(f[2]), 10, 64)
		if err != nil {
			return fmt.Sprintf("bad wait %q", f[2])
		}
		p.clock += us * 1000
		p.sawWait = true
		p.rec.Kind = KindSkip
		return ""
	default:
		return fmt.Sprintf("unknown action %q", act)
	}
	var off, n int64
	if len(f) >= 4 {
		var err1, err2 error
		off, err1 = strconv.ParseInt(string(f[2]), 10, 64)
		n, err2 = strconv.ParseInt(string(f[3]), 10, 64)
		if err1 != nil || err2 != nil {
			return "bad offset or length"
		}
	} else if op != event.Flush {
		return act + " without offset and length"
	}
	if p.version == 2 {
		at = p.clock
	}
	dev := p.files.dev(name)
	p.rec.Kind = KindEvent
	p.rec.Event = event.Event{
		Layer: event.Syscall, Op: op, Start: at, End: at, Dev: dev, Inode: uint64(dev.Minor),
		Offset: off, Size: n, Bytes: n, Comm: "fio",
	}
	if op == event.Flush {
		p.rec.Event.Offset, p.rec.Event.Size, p.rec.Event.Bytes = -1, 0, 0
	}
	return ""
}

// Devices names the iolog's files.
func (p *FioIologReader) Devices() []event.Device { return p.files.devices() }

// Missing says what an iolog cannot show.
func (p *FioIologReader) Missing() []event.Unavailable {
	m := []event.Unavailable{
		{Metric: event.MetricLatency, Why: "a fio iolog holds when fio issued each I/O, not when it completed: no latency, no queue depth"},
		{Metric: event.MetricProcess, Why: "a fio iolog is one fio job's: every I/O is fio's"},
	}
	if p.version == 2 {
		m = append(m, event.Unavailable{Metric: event.MetricTiming, Why: "a version 2 fio iolog has no times (only 'wait' delays)"})
	}
	return m
}
