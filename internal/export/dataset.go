package export

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/tracefile"
)

// A fleet's traces as one Parquet dataset, hive-partitioned:
//
//	DIR/host=HOST/date=YYYY-MM-DD/trace=ID/part-0.parquet
//
// which DuckDB (read_parquet('DIR/**/*.parquet', hive_partitioning = true))
// and Spark (spark.read.parquet(DIR)) read as one table with host, date
// and trace columns from the paths. The dataset grows a directory per
// trace; a trace already in it is left as it is.

// DatasetPartition is where a trace's rows go under a dataset's root.
func DatasetPartition(meta tracefile.Meta, id string) string {
	h := meta.Header
	if id == "" {
		id = h.ID
	}
	date := "unknown"
	if start, _ := meta.Start(); !start.IsZero() {
		date = start.UTC().Format(time.DateOnly)
	}
	return filepath.Join("host="+hiveEscape(meta.HostName()), "date="+date, "trace="+hiveEscape(id))
}

// hiveEscape escapes a partition value as Hive does (FileUtils.escapePathName):
// the characters a path or the key=value form cannot hold, as %XX.
func hiveEscape(s string) string {
	if s == "" {
		return "__HIVE_DEFAULT_PARTITION__"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	if v := b.String(); v != "." && v != ".." {
		return v
	}
	return strings.ReplaceAll(b.String(), ".", "%2E")
}

// datasetRow is a Row less the column its path already holds (host): an
// engine refuses a column that is both in the files and in the paths.
type datasetRow struct {
	TraceID    string  `parquet:"trace_id,dict,zstd"`
	Label      string  `parquet:"label,dict,zstd"`
	Layer      string  `parquet:"layer,dict,zstd"`
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
	ByteOffset *int64  `parquet:"byte_offset,optional,zstd"`
	Size       *int64  `parquet:"size,optional,zstd"`
	Bytes      *int64  `parquet:"bytes,optional,zstd"`
	Errno      int32   `parquet:"errno,zstd"`
	Pid        *int64  `parquet:"pid,optional,zstd"`
	Tid        *int64  `parquet:"tid,optional,zstd"`
	Comm       *string `parquet:"comm,optional,dict,zstd"`
	Kernel     bool    `parquet:"kernel"`
}

// NewDatasetWriter writes rows as one part of a dataset: Parquet without
// the host column (see DatasetPartition).
func NewDatasetWriter(w io.Writer) RowWriter {
	return newParquetWriter(w, func(r *Row) datasetRow {
		return datasetRow{TraceID: r.TraceID, Label: r.Label, Layer: r.Layer, Time: r.Time, StartNs: r.StartNs,
			DispatchNs: r.DispatchNs, EndNs: r.EndNs, LatencyNs: r.LatencyNs, Op: r.Op, Call: r.Call, Flags: r.Flags, Device: r.Device,
			Major: r.Major, Minor: r.Minor, Inode: r.Inode, ByteOffset: r.ByteOffset, Size: r.Size, Bytes: r.Bytes, Errno: r.Errno,
			Pid: r.Pid, Tid: r.Tid, Comm: r.Comm, Kernel: r.Kernel}
	})
}
