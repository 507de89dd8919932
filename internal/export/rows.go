package export

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Row is one I/O as export --parquet and --csv write it (columns in
// docs/export-columns.md). A value the trace cannot show (its format lacks
// it, or it does not apply) is null, never zero.
type Row struct {
	TraceID string `parquet:"trace_id,dict,zstd"`
	Host    string `parquet:"host,dict,zstd"`
	Label   string `parquet:"label,dict,zstd"`
	Layer   string `parquet:"layer,dict,zstd"`
	// Time is the I/O's arrival on the wall clock (the trace's start plus
	// StartNs), in microseconds since 1970 UTC: a TIMESTAMP(MICROS) every
	// engine reads (Spark refuses nanoseconds); StartNs keeps the
	// nanoseconds.
	Time       *int64  `parquet:"time,optional,timestamp(microsecond),zstd"`
	StartNs    *int64  `parquet:"start_ns,optional,zstd"`
	DispatchNs *int64  `parquet:"dispatch_ns,optional,zstd"`
	EndNs      *int64  `parquet:"end_ns,optional,zstd"`
	LatencyNs  *int64  `parquet:"latency_ns,optional,zstd"`
	Op         *string `parquet:"op,optional,dict,zstd"`
	Call       *string `parquet:"call,optional,dict,zstd"`
	Flags      string  `parquet:"flags,dict,zstd"`
	Device     string  `parquet:"device,dict,zstd"`
	Major      int32   `parquet:"major,zstd"`
	Minor      int32   `parquet:"minor,zstd"`
	Inode      *int64  `parquet:"inode,optional,zstd"`
	// ByteOffset is the I/O's offset in bytes ("offset" is a reserved
	// word in SQL).
	ByteOffset *int64  `parquet:"byte_offset,optional,zstd"`
	Size       *int64  `parquet:"size,optional,zstd"`
	Bytes      *int64  `parquet:"bytes,optional,zstd"`
	Errno      int32   `parquet:"errno,zstd"`
	Pid        *int64  `parquet:"pid,optional,zstd"`
	Tid        *int64  `parquet:"tid,optional,zstd"`
	Comm       *string `parquet:"comm,optional,dict,zstd"`
	Kernel     bool    `parquet:"kernel"`
}

// Columns are the column names, in order (the CSV header).
var Columns = []string{"trace_id", "host", "label", "layer", "time", "start_ns", "dispatch_ns", "end_ns", "latency_ns",
	"op", "call", "flags", "device", "major", "minor", "inode", "byte_offset", "size", "bytes", "errno", "pid", "tid", "comm", "kernel"}

// RowMaker turns a trace's events into rows: the trace's identity, its
// device names and what it cannot show are known once.
type RowMaker struct {
	id, host, label string
	start           int64
	devices         map[event.Dev]string
	dated           bool // start is known: rows have absolute times
	noTime, noLat   bool
	noSize, noDir   bool
	noOffset, noPid bool
}

// NewRowMaker prepares rows for the trace meta describes.
func NewRowMaker(meta tracefile.Meta, id string) *RowMaker {
	h := meta.Header
	if id == "" {
		id = h.ID
	}
	m := &RowMaker{id: id, host: meta.HostName(), label: h.Label, devices: map[event.Dev]string{}}
	if start, _ := meta.Start(); !start.IsZero() {
		m.start, m.dated = start.UnixNano(), true
	}
	if meta.Footer != nil {
		for _, d := range meta.Footer.Devices {
			m.devices[event.Dev{Major: d.Major, Minor: d.Minor}] = d.Name
		}
		has := func(metric string) bool {
			return slices.ContainsFunc(meta.Footer.Unavailable, func(u event.Unavailable) bool { return u.Metric == metric })
		}
		m.noTime, m.noLat = has(event.MetricTiming), has(event.MetricLatency)
		m.noSize, m.noDir = has(event.MetricSize), has(event.MetricDirection)
		m.noOffset, m.noPid = has(event.MetricOffset), has(event.MetricProcess)
	}
	return m
}

func i64(v int64) *int64   { return &v }
func str(s string) *string { return &s }

// Row fills r from e.
func (m *RowMaker) Row(e *event.Event, r *Row) {
	*r = Row{TraceID: m.id, Host: m.host, Label: m.label, Layer: e.Layer.String(), Flags: e.Flags.String(),
		Major: int32(e.Dev.Major), Minor: int32(e.Dev.Minor), Errno: e.Errno, Kernel: e.Flags&event.FlagKernel != 0}
	r.Device = m.devices[e.Dev]
	if r.Device == "" {
		r.Device = e.Dev.String()
	}
	if !m.noTime {
		r.StartNs = i64(e.Start)
		if m.dated { // null where nothing says when the capture was made
			r.Time = i64((m.start + e.Start) / 1e3)
		}
	}
	if e.Flags&event.FlagDispatched != 0 && !m.noTime {
		r.DispatchNs = i64(e.Dispatch)
	}
	if !m.noLat {
		r.LatencyNs = i64(e.End - e.Start)
		if !m.noTime {
			r.EndNs = i64(e.End)
		}
	}
	if !m.noDir {
		r.Op = str(e.Op.String())
	}
	if e.Call != event.NoCall {
		r.Call = str(e.Call.String())
	}
	if e.Inode != 0 {
		r.Inode = i64(int64(e.Inode))
	}
	if e.Offset >= 0 && !m.noOffset {
		r.ByteOffset = i64(e.Offset)
	}
	if !m.noSize {
		r.Size, r.Bytes = i64(e.Size), i64(e.Bytes)
	}
	if !m.noPid {
		r.Pid, r.Tid, r.Comm = i64(int64(e.Pid)), i64(int64(e.Tid)), str(e.Comm)
	}
}

// RowWriter writes rows to a file format.
type RowWriter interface {
	Write(*Row) error
	Close() error
}

// rowGroup is how many rows a Parquet row group holds: what the writer
// buffers, so memory stays flat however long the trace.
const rowGroup = 1 << 20

// parquetWriter writes rows as T, batched, in row groups of rowGroup rows.
type parquetWriter[T any] struct {
	w     *parquet.GenericWriter[T]
	batch []T
	n     int
	conv  func(*Row) T
}

func newParquetWriter[T any](w io.Writer, conv func(*Row) T) *parquetWriter[T] {
	return &parquetWriter[T]{w: parquet.NewGenericWriter[T](w, parquet.CreatedBy("ioshape", Version, "")), batch: make([]T, 0, 4096), conv: conv}
}

// Version is the ioshape version files name as their maker (Parquet's
// created_by); the command line sets it.
var Version = "unknown"

// NewParquetWriter writes rows as Parquet (zstd, dictionary-encoded names).
func NewParquetWriter(w io.Writer) RowWriter {
	return newParquetWriter(w, func(r *Row) Row { return *r })
}

func (p *parquetWriter[T]) Write(r *Row) error {
	p.batch = append(p.batch, p.conv(r))
	if len(p.batch) == cap(p.batch) {
		return p.flush()
	}
	return nil
}

func (p *parquetWriter[T]) flush() error {
	if _, err := p.w.Write(p.batch); err != nil {
		return err
	}
	p.n += len(p.batch)
	p.batch = p.batch[:0]
	if p.n >= rowGroup {
		p.n = 0
		return p.w.Flush()
	}
	return nil
}

func (p *parquetWriter[T]) Close() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.w.Close()
}

type csvWriter struct {
	w      *csv.Writer
	rec    []string
	header bool
}

// NewCSVWriter writes rows as CSV with a header line; null is an empty field.
func NewCSVWriter(w io.Writer) RowWriter {
	return &csvWriter{w: csv.NewWriter(w), rec: make([]string, len(Columns))}
}

func (c *csvWriter) Write(r *Row) error {
	if !c.header {
		c.header = true
		if err := c.w.Write(Columns); err != nil {
			return err
		}
	}
	n := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	s := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	t := ""
	if r.Time != nil {
		t = time.UnixMicro(*r.Time).UTC().Format(time.RFC3339Nano)
	}
	copy(c.rec, []string{r.TraceID, r.Host, r.Label, r.Layer, t, n(r.StartNs), n(r.DispatchNs), n(r.EndNs), n(r.LatencyNs),
		s(r.Op), s(r.Call), r.Flags, r.Device, strconv.Itoa(int(r.Major)), strconv.Itoa(int(r.Minor)), n(r.Inode), n(r.ByteOffset),
		n(r.Size), n(r.Bytes), strconv.Itoa(int(r.Errno)), n(r.Pid), n(r.Tid), s(r.Comm), strconv.FormatBool(r.Kernel)})
	return c.w.Write(c.rec)
}

func (c *csvWriter) Close() error {
	if !c.header {
		c.w.Write(Columns)
	}
	c.w.Flush()
	return c.w.Error()
}
