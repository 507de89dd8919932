package parse

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// Raw b_flags bits, as scripts before the platform word printed them: xnu's
// (bsd/sys/buf.h; B_WRITE is 0) and the Solaris values
// Oracle DTrace for Linux uses (seen in its real output).
const (
	xnuRead   = 0x0001
	xnuAsync  = 0x0002
	xnuPhys   = 0x0020
	xnuPageIO = 0x0080
	xnuMeta   = 0x0100
	xnuFUA    = 0x0400

	linuxPhys  = 0x0020
	linuxRead  = 0x0040
	linuxWrite = 0x0100
	linuxAsync = 0x0400
)

// The flags today's script prints, whatever the platform: it tests b_flags
// with the system's own B_* constants.
const (
	dRead = 1 << iota
	dAsync
	dPhys
	dPaging
	dMeta
	dFUA
)

// Platforms the D script runs on.
const (
	PlatformDarwin = "darwin"
	PlatformLinux  = "linux"
)

// DTraceReader reads the output of dscripts/ioshape.d.
//
// Today's script names its platform on the READY line and prints flags
// already decoded. Output of earlier scripts (READY with no platform)
// carries raw b_flags, whose bits differ by platform: Platform, if set,
// says which; otherwise the reader recognises it from the first block
// events (Linux's always have B_PHYS and exactly one of B_READ and
// B_WRITE, at 0x20, 0x40 and 0x100; xnu's reads have 0x1), holding them
// back until it knows.
type DTraceReader struct {
	lineScanner
	// Platform is the recording system's, when the output does not say.
	Platform string
	// ReadyWall is the wall-clock time of the READY line, when the script
	// printed it: the time zero of a trace counted from READY.
	ReadyWall time.Time
	blockSize int64
	decoded   bool // the READY line named a platform: flags are decoded

	held   []heldIO              // block events held while the platform is unknown
	out    []Record              // records to return before reading on
	aio    aioMatch              // libaio submissions and reapings, matched in time order
	ready  int64                 // the READY line's timestamp; 0 before it
	recent map[uint32]*startRing // per thread, the starts of its latest requests
	window staleWindow           // block records of the last second
	passed []Record              // records through the window, to return
}

// heldIO is a block line read before its platform was known.
type heldIO struct {
	rec   Record
	flags int64
}

// NewDTraceReader reads r. blockSize converts block numbers to offsets; 0
// takes the platform's unit (512-byte sectors on Linux, 4096-byte blocks
// on macOS, where DTrace does not give the device's).
func NewDTraceReader(r io.Reader, file string, blockSize int64) *DTraceReader {
	return &DTraceReader{lineScanner: newLineScanner(r, file), blockSize: blockSize, aio: newAioMatch(),
		recent: map[uint32]*startRing{}, window: newStaleWindow()}
}

// kindHold is a line whose records come later (held or queued).
const kindHold Kind = 200

// Scan reads the next record; blank lines are skipped. Block records pass
// through a window of a second, so that a start found shared by two
// requests drops both (see staleWindow).
func (r *DTraceReader) Scan() bool {
	for {
		if len(r.passed) > 0 {
			r.rec = r.passed[0]
			r.passed = r.passed[1:]
			return true
		}
		if !r.scanLine() {
			if r.window.len() == 0 {
				return false
			}
			r.passed = r.window.flush(math.MaxInt64, r.passed)
			continue
		}
		if r.rec.Kind == KindEvent { // calls too, to keep the order they came in
			r.passed = r.window.add(r.rec, r.passed)
			continue
		}
		return true
	}
}

// scanLine reads the next record of the lines.
func (r *DTraceReader) scanLine() bool {
	for {
		if len(r.out) > 0 {
			r.rec = r.out[0]
			r.out = r.out[1:]
			return true
		}
		if !r.scan(func(b []byte) string { return r.parseLine(string(b)) }) {
			if len(r.held) > 0 { // the end came first: decide on what there is
				r.decide()
				continue
			}
			if r.aio.pending() { // every reaping left is matched now
				r.out = append(r.out, r.aio.match(math.MaxInt64)...)
				continue
			}
			return false
		}
		if r.rec.Kind != kindHold {
			return true
		}
	}
}

func (r *DTraceReader) parseLine(s string) string {
	switch {
	case strings.HasPrefix(s, "I "):
		return r.parseIO(s[2:])
	case strings.HasPrefix(s, "C "):
		return r.parseCall(s[2:])
	case strings.HasPrefix(s, "READY"):
		// "READY dtrace <timestamp> [platform]": the script's clock when
		// tracing began, and since the platform word, decoded flags.
		r.rec = Record{Kind: KindReady}
		f := strings.Fields(s)
		if len(f) >= 3 {
			r.rec.N, _ = strconv.ParseInt(f[2], 10, 64)
			r.ready = r.rec.N
		}
		if len(f) >= 4 {
			if f[3] != PlatformDarwin && f[3] != PlatformLinux {
				return fmt.Sprintf("unknown platform %q", f[3])
			}
			r.Platform, r.decoded = f[3], true
		}
		if len(f) >= 5 { // walltimestamp: ns since 1970
			if w, err := strconv.ParseInt(f[4], 10, 64); err == nil && w > 0 {
				r.ReadyWall = time.Unix(0, w).UTC()
			}
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
	// The size is b_bcount at io:::start: at io:::done, b_bcount - b_resid
	// describes only the last part of a request the kernel split (Linux).
	if why := r.checkIO(n); why != "" {
		r.rec = Record{Kind: KindCounter, Name: CounterCorrupt, N: 1, Text: why}
		return ""
	}
	r.rec = Record{Kind: KindEvent, Event: event.Event{
		Layer: event.Block, Op: event.Write, Start: n[0], End: n[1],
		Dev: event.Dev{Major: uint32(n[2]), Minor: uint32(n[3])}, Offset: n[4],
		Size: n[5], Bytes: n[5], Errno: int32(n[7]), Pid: uint32(n[9]), Tid: uint32(n[10]), Comm: f[11],
	}, Text: r.stale(uint32(n[10]), n[0])}
	if r.Platform == "" {
		if r.Platform = recognisePlatform(n[8], f[11]); r.Platform == "" {
			r.held = append(r.held, heldIO{r.rec, n[8]})
			if len(r.held) == maxHeld {
				r.decide()
			}
			r.rec.Kind = kindHold
			return ""
		}
	}
	r.finishIO(&r.rec.Event, n[8])
	if len(r.held) > 0 { // decided on this line: the held ones go first
		r.flushHeld()
		r.out = append(r.out, r.rec)
		r.rec.Kind = kindHold
	}
	return ""
}

// maxHeld bounds the events held while recognising a platform.
const maxHeld = 64

// recognisePlatform tells raw b_flags apart where one line can: bits
// outside Linux's (B_PHYS|B_READ|B_WRITE|B_ASYNC) or a missing B_PHYS or
// direction say xnu, a kernel thread's name says Linux. "" is not sure.
func recognisePlatform(flags int64, comm string) string {
	if isLinuxKernelThread(comm) {
		return PlatformLinux
	}
	dir := flags & (linuxRead | linuxWrite)
	if flags&^(linuxPhys|linuxRead|linuxWrite|linuxAsync) != 0 || flags&linuxPhys == 0 || dir == 0 || dir == linuxRead|linuxWrite {
		return PlatformDarwin
	}
	return ""
}

// decide settles the platform of held events: every one looked like
// Linux's, so Linux.
func (r *DTraceReader) decide() {
	if r.Platform == "" {
		r.Platform = PlatformLinux
	}
	r.flushHeld()
}

func (r *DTraceReader) flushHeld() {
	held := r.held
	r.held = nil
	for i := range held {
		r.finishIO(&held[i].rec.Event, held[i].flags)
		r.out = append(r.out, held[i].rec)
	}
}

// finishIO decodes flags and the block number once the platform is known.
func (r *DTraceReader) finishIO(e *event.Event, flags int64) {
	if !r.decoded {
		flags = decodeRawFlags(flags, r.Platform)
	}
	unit := r.blockSize
	if unit <= 0 {
		unit = 4096 // macOS: device blocks, size not given
		if r.Platform == PlatformLinux {
			unit = 512 // Linux's b_blkno counts sectors
		}
	}
	e.Offset *= unit
	if flags&dRead != 0 {
		e.Op = event.Read
	}
	if flags&dAsync != 0 {
		e.Flags |= event.FlagAsync
	} else {
		e.Flags |= event.FlagSync
	}
	if flags&dPhys != 0 {
		e.Flags |= event.FlagDirect
	}
	if flags&dPaging != 0 {
		e.Flags |= event.FlagPaging
	}
	if flags&dMeta != 0 {
		e.Flags |= event.FlagMeta
	}
	if flags&dFUA != 0 {
		e.Flags |= event.FlagFUA
	}
	if e.Pid == 0 || r.Platform == PlatformLinux && isLinuxKernelThread(e.Comm) { // writeback, journal, page-outs
		e.Flags |= event.FlagKernel
	}
	if e.Errno != 0 {
		e.Bytes = 0
	}
}

// decodeRawFlags turns a platform's raw b_flags into the decoded bits.
// Linux's B_PHYS is set on every request, page cache or not, so it says
// nothing there.
func decodeRawFlags(raw int64, platform string) int64 {
	var f int64
	if platform == PlatformLinux {
		if raw&linuxRead != 0 {
			f |= dRead
		}
		if raw&linuxAsync != 0 {
			f |= dAsync
		}
		return f
	}
	for _, b := range []struct{ raw, dec int64 }{
		{xnuRead, dRead}, {xnuAsync, dAsync}, {xnuPhys, dPhys}, {xnuPageIO, dPaging}, {xnuMeta, dMeta}, {xnuFUA, dFUA},
	} {
		if raw&b.raw != 0 {
			f |= b.dec
		}
	}
	return f
}

// isLinuxKernelThread knows the kernel threads that issue I/O on others'
// behalf: Linux's have pids of their own, not 0.
func isLinuxKernelThread(comm string) bool {
	for _, p := range []string{"kworker/", "jbd2/", "kswapd", "flush-", "writeback", "xfsaild", "btrfs-", "kcompactd", "khugepaged"} {
		if strings.HasPrefix(comm, p) {
			return true
		}
	}
	// loop0, md127: followed by a number (mdworker is a Mac's Spotlight).
	for _, p := range []string{"loop", "md"} {
		if rest, ok := strings.CutPrefix(comm, p); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return true
		}
	}
	return false
}

// dtraceCalls maps the script's call names (both platforms') to the event
// model's.
var dtraceCalls = map[string]event.Call{
	"read": event.CallRead, "write": event.CallWrite, "pread": event.CallPread64, "pwrite": event.CallPwrite64,
	"readv": event.CallReadv, "writev": event.CallWritev, "preadv": event.CallPreadv, "pwritev": event.CallPwritev,
	"fsync": event.CallFsync, "fcntl_fullfsync": event.CallFullFsync, "fcntl_nocache": event.CallNoCache,
	"clonefileat": event.CallClone, "fclonefileat": event.CallClone, "copyfile": event.CallCopyfile,
	"pread64": event.CallPread64, "pwrite64": event.CallPwrite64, "preadv2": event.CallPreadv2, "pwritev2": event.CallPwritev2,
	"fdatasync": event.CallFdatasync, "copy_file_range": event.CallCopyFileRange, "copy_file_range_src": event.CallCopyFileRange,
	"aio_read": event.CallAioRead, "aio_write": event.CallAioWrite, "aio_fsync": event.CallAioFsync, "io_getevents": event.NoCall,
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
		Layer: event.Syscall, Call: call, Op: CallOp(call), Start: n[0], End: n[1],
		Pid: uint32(n[2]), Tid: uint32(n[3]), Inode: uint64(n[4] + 1), // no file identity without kernel memory: one stream per fd
		Size: n[5], Offset: n[6], Comm: f[10],
	}
	r.rec.Kind = KindEvent
	failed := ret < 0 || errno != 0 && ret == -1
	switch {
	case call.IsAsync():
		// io_submit: ret requests went in; each becomes an event when
		// io_getevents reaps it.
		if !failed {
			r.aio.submit(e, ret)
		}
		r.out = append(r.out, r.aio.match(e.End-aioWindow)...)
		r.rec.Kind = kindHold
		return ""
	case f[0] == "io_getevents":
		if !failed {
			r.aio.reap(e.Pid, e.End, ret)
		}
		r.out = append(r.out, r.aio.match(e.End-aioWindow)...)
		r.rec.Kind = kindHold
		return ""
	}
	if failed {
		e.Errno = int32(errno)
	} else if e.Op.IsData() {
		e.Bytes = ret
	}
	switch {
	case f[0] == "copy_file_range_src":
		e.Flags |= event.FlagCopySource
		e.Size = e.Bytes // asked for "everything": what moved is the size
	case call == event.CallCopyFileRange:
		e.Op = event.Write
		e.Size = e.Bytes
	}
	if e.Size < 0 { // vectored: the size is what moved
		e.Size = e.Bytes
	}
	if !e.Op.IsData() {
		e.Offset = -1
	}
	return ""
}

// KnownDTraceCall reports whether the parser knows a call name the D
// script prints.
func KnownDTraceCall(name string) bool {
	_, ok := dtraceCalls[name]
	return ok
}
