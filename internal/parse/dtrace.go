package parse

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
)

// b_flags bits (xnu bsd/sys/buf.h; tracing.md §1.3). B_WRITE is 0: the
// direction is B_READ or not.
const (
	bRead   = 0x0001
	bAsync  = 0x0002
	bPhys   = 0x0020
	bPageIO = 0x0080
	bMeta   = 0x0100
	bFUA    = 0x0400
)

// DTraceReader reads the output of dscripts/ioshape.d.
type DTraceReader struct {
	lineScanner
	blockSize int64
}

// NewDTraceReader reads r; blockSize converts block numbers to offsets.
func NewDTraceReader(r io.Reader, file string, blockSize int64) *DTraceReader {
	if blockSize <= 0 {
		blockSize = 4096
	}
	return &DTraceReader{lineScanner: newLineScanner(r, file), blockSize: blockSize}
}

// Scan reads the next record; blank lines are skipped.
func (r *DTraceReader) Scan() bool {
	return r.scan(func(b []byte) string { return r.parseLine(string(b)) })
}

func (r *DTraceReader) parseLine(s string) string {
	switch {
	case strings.HasPrefix(s, "I "):
		return r.parseIO(s[2:])
	case strings.HasPrefix(s, "C "):
		return r.parseCall(s[2:])
	case strings.HasPrefix(s, "READY"):
		// "READY dtrace <timestamp>": the script's clock when tracing began.
		r.rec = Record{Kind: KindReady}
		if f := strings.Fields(s); len(f) == 3 {
			r.rec.N, _ = strconv.ParseInt(f[2], 10, 64)
		}
	case strings.HasPrefix(s, "@"):
		name, v, ok := strings.Cut(s[1:], ":")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || err != nil {
			return "malformed counter"
		}
		r.rec = Record{Kind: KindCounter, Name: name, N: n}
	default:
		return fmt.Sprintf("unrecognised line %q", truncate([]byte(s), 60))
	}
	return ""
}

func splitN(s string, n int) []string {
	f := strings.SplitN(strings.TrimLeft(s, " "), " ", n)
	return f
}

func ints(f []string, out []int64) bool {
	for i := range out {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(f[i], 10, 64)
			if uerr != nil {
				return false
			}
			v = int64(u)
		}
		out[i] = v
	}
	return true
}

// parseIO reads: start done major minor blkno bcount bytes error flags pid tid comm
func (r *DTraceReader) parseIO(s string) string {
	f := splitN(s, 12)
	if len(f) != 12 {
		return "io line has too few fields"
	}
	var n [11]int64
	if !ints(f, n[:]) {
		return "io line: a field is not a number"
	}
	flags := n[8]
	e := &r.rec.Event
	*e = event.Event{
		Layer: event.Block, Op: event.Write, Start: n[0], End: n[1],
		Dev: event.Dev{Major: uint32(n[2]), Minor: uint32(n[3])}, Offset: n[4] * r.blockSize,
		Size: n[5], Bytes: n[6], Errno: int32(n[7]), Pid: uint32(n[9]), Tid: uint32(n[10]), Comm: f[11],
	}
	if flags&bRead != 0 {
		e.Op = event.Read
	}
	if flags&bAsync != 0 {
		e.Flags |= event.FlagAsync
	} else {
		e.Flags |= event.FlagSync
	}
	if flags&bPhys != 0 {
		e.Flags |= event.FlagDirect
	}
	if flags&bMeta != 0 {
		e.Flags |= event.FlagMeta
	}
	if flags&bFUA != 0 {
		e.Flags |= event.FlagFUA
	}
	if e.Pid == 0 { // kernel_task: delayed writes, page-outs
		e.Flags |= event.FlagKernel
	}
	if e.Errno != 0 {
		e.Bytes = 0
	}
	r.rec.Kind = KindEvent
	return ""
}

// dtraceCalls maps the script's call names to the event model's.
var dtraceCalls = map[string]event.Call{
	"read": event.CallRead, "write": event.CallWrite, "pread": event.CallPread64, "pwrite": event.CallPwrite64,
	"readv": event.CallReadv, "writev": event.CallWritev, "preadv": event.CallPreadv, "pwritev": event.CallPwritev,
	"fsync": event.CallFsync, "fcntl_fullfsync": event.CallFullFsync, "fcntl_nocache": event.CallNoCache,
	"clonefileat": event.CallClone, "fclonefileat": event.CallClone, "copyfile": event.CallCopyfile,
}

// parseCall reads: call entry return pid tid fd size offset ret errno comm
func (r *DTraceReader) parseCall(s string) string {
	f := splitN(s, 11)
	if len(f) != 11 {
		return "call line has too few fields"
	}
	call, ok := dtraceCalls[f[0]]
	if !ok {
		return fmt.Sprintf("unknown call %q", f[0])
	}
	var n [9]int64
	if !ints(f[1:], n[:]) {
		return "call line: a field is not a number"
	}
	ret, errno := n[7], n[8]
	e := &r.rec.Event
	*e = event.Event{
		Layer: event.Syscall, Call: call, Op: callOp(call), Start: n[0], End: n[1],
		Pid: uint32(n[2]), Tid: uint32(n[3]), Inode: uint64(n[4] + 1), // no file identity without kernel memory: one stream per fd
		Size: n[5], Offset: n[6], Comm: f[10],
	}
	if ret < 0 || errno != 0 && ret == -1 {
		e.Errno = int32(errno)
	} else if e.Op.IsData() {
		e.Bytes = ret
	}
	if e.Size < 0 { // vectored: the size is what moved
		e.Size = e.Bytes
	}
	if !e.Op.IsData() {
		e.Offset = -1
	}
	r.rec.Kind = KindEvent
	return ""
}

// KnownDTraceCall reports whether the parser knows a call name the D
// script prints.
func KnownDTraceCall(name string) bool {
	_, ok := dtraceCalls[name]
	return ok
}
