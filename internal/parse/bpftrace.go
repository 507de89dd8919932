package parse

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/ioshape/ioshape/internal/event"
)

// Open-file flag bits that matter to ioshape. O_DIRECT differs by
// architecture; O_DSYNC is the same on amd64 and arm64.
const oDsync = 0x1000

// ODirectFor returns O_DIRECT's value on a GOARCH (0 if unknown).
func ODirectFor(goarch string) uint64 {
	switch goarch {
	case "amd64", "386":
		return 0x4000
	case "arm64", "arm":
		return 0x10000
	}
	return 0
}

// BpftraceReader reads the output of dscripts/ioshape.bt.
type BpftraceReader struct {
	lineScanner
	oDirect uint64
}

// NewBpftraceReader reads r. file names the input in syntax errors; goarch
// is the architecture the trace was recorded on (for O_DIRECT).
func NewBpftraceReader(r io.Reader, file, goarch string) *BpftraceReader {
	return &BpftraceReader{lineScanner: newLineScanner(r, file), oDirect: ODirectFor(goarch)}
}

// Scan reads the next record. It returns false at the end of input or on a
// read error (see Err). Blank lines are skipped.
func (r *BpftraceReader) Scan() bool { return r.scan(r.parseLine) }

func (r *BpftraceReader) parseLine(b []byte) string {
	switch {
	case b[0] == 'B' && len(b) > 1 && b[1] == ' ':
		return r.parseBlock(b[2:])
	case b[0] == 'S' && len(b) > 1 && b[1] == ' ':
		return r.parseSyscall(b[2:])
	case b[0] == 'F' && len(b) > 1 && b[1] == ' ':
		f := fields(b[2:], 2)
		if len(f) != 2 {
			return "malformed fork line"
		}
		p, err1 := strconv.Atoi(string(f[0]))
		c, err2 := strconv.Atoi(string(f[1]))
		if err1 != nil || err2 != nil {
			return "malformed fork line"
		}
		r.rec = Record{Kind: KindFork, Pid: p, Child: c}
	case b[0] == 'X' && len(b) > 1 && b[1] == ' ':
		f := fields(b[2:], 2)
		if len(f) != 2 {
			return "malformed exit line"
		}
		p, err := strconv.Atoi(string(f[1]))
		if err != nil {
			return "malformed exit line"
		}
		r.rec = Record{Kind: KindExit, Pid: p}
	case b[0] == 'M' && len(b) > 1 && b[1] == ' ':
		cpu, err := strconv.Atoi(string(bytes.TrimSpace(b[2:])))
		if err != nil || cpu < 0 {
			return "malformed mark line"
		}
		r.rec = Record{Kind: KindMark, N: int64(cpu)}
	case bytes.Equal(b, []byte("READY")):
		r.rec = Record{Kind: KindReady}
	case bytes.HasPrefix(b, []byte("READY ")):
		// The recording machine's architecture: its O_DIRECT bit is the
		// one that counts, not this machine's.
		arch := string(bytes.TrimSpace(b[6:]))
		if ODirectFor(arch) == 0 {
			return "unknown architecture in READY line"
		}
		r.oDirect = ODirectFor(arch)
		r.rec = Record{Kind: KindReady}
	case len(b) > 12 && bytes.HasPrefix(b, []byte("Lost ")) && bytes.HasSuffix(b, []byte(" events")):
		n, err := strconv.ParseInt(string(b[5:len(b)-7]), 10, 64)
		if err != nil {
			return "malformed lost-events line"
		}
		r.rec = Record{Kind: KindLost, N: n}
	case bytes.HasPrefix(b, []byte("@rq[")), bytes.HasPrefix(b, []byte("@rqb[")):
		// A block request still in the tracer's map at exit: issued, its
		// completion never seen. Only a tracked one is the recording's.
		tracked, ok := inFlightTracked(b)
		if !ok {
			return "malformed in-flight request"
		}
		r.rec = Record{Kind: KindSkip}
		if tracked {
			r.rec = Record{Kind: KindCounter, Name: CounterUnfinished, N: 1}
		}
	case bytes.HasPrefix(b, []byte("@aio[")):
		// A libaio I/O still in the tracer's map at exit: submitted, its
		// reaping never seen (only the traced processes' are kept).
		r.rec = Record{Kind: KindCounter, Name: CounterUnreaped, N: 1}
	case isStateEntry(b):
		// Other in-flight state the script's END clears; bpftrace prints
		// what probes firing during its exit put back.
		r.rec = Record{Kind: KindSkip}
	case b[0] == '@':
		i := bytes.Index(b, []byte(": "))
		if i < 0 {
			return "malformed map line"
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(b[i+2:])), 10, 64)
		if err != nil {
			return "malformed counter " + string(b[1:i])
		}
		r.rec = Record{Kind: KindCounter, Name: string(b[1:i]), N: n}
	case bytes.HasPrefix(b, []byte("Attaching ")):
		r.rec = Record{Kind: KindNotice, Text: string(b)}
	default:
		return fmt.Sprintf("unrecognised line %q", truncate(b, 60))
	}
	return ""
}

// parseBlock reads: arrive dispatch complete dev sector bytes error rwbs pid tid kthread comm
func (r *BpftraceReader) parseBlock(b []byte) string {
	f := fields(b, 12)
	if len(f) != 12 {
		return "block line has too few fields"
	}
	var n [11]int64
	for i, idx := range []int{0, 1, 2, 3, 4, 5, 6, 8, 9, 10} {
		v, err := strconv.ParseInt(string(f[idx]), 10, 64)
		if err != nil {
			return fmt.Sprintf("block line field %d: not a number", idx+1)
		}
		n[i] = v
	}
	e := &r.rec.Event
	fillBlock(e, n[0], n[1], n[2], uint64(n[3]), n[4], n[5], n[6], uint32(n[7]), uint32(n[8]), n[9] != 0, string(f[11]))
	var flags event.Flags
	e.Op, flags = decodeRWBS(f[7], 0)
	finishBlock(e, flags)
	r.rec.Kind = KindEvent
	return ""
}

// fillBlock makes a block-layer event from a completed request (shared by
// the text and binary decoders). errno is the tracer's: negative, or a
// positive block status.
func fillBlock(e *event.Event, arrive, dispatch, complete int64, dev uint64, sector, size, errno int64, pid, tid uint32, kthread bool, comm string) {
	*e = event.Event{
		Layer:  event.Block,
		Start:  arrive,
		End:    complete,
		Dev:    event.DevFromKernel(dev),
		Offset: sector * 512,
		Size:   size,
		Bytes:  size,
		Errno:  int32(-errno),
		Pid:    pid,
		Tid:    tid,
		Comm:   comm,
	}
	if errno != 0 {
		e.Bytes = 0
		if errno > 0 {
			e.Errno = int32(errno)
		}
	}
	if dispatch > 0 {
		e.Dispatch = dispatch
		e.Flags |= event.FlagDispatched
		if dispatch < arrive { // issue without insert: arrival is the issue
			e.Start = dispatch
		}
	}
	if kthread {
		e.Flags |= event.FlagKernel
	}
}

// finishBlock applies the request's op flags once e.Op is set.
func finishBlock(e *event.Event, flags event.Flags) {
	e.Flags |= flags
	if e.Size == 0 && e.Op.IsData() {
		// An empty request moves no data: with a preflush it only flushes the
		// cache; otherwise it is some other command.
		e.Op = event.Other
		if e.Flags&event.FlagPreflush != 0 {
			e.Op = event.Flush
		}
	}
	if e.Op == event.Flush || e.Size == 0 {
		e.Offset = -1
	}
}

// decodeRWBS reads the kernel's rwbs string (blk_fill_rwbs): an optional F
// for a preflush, the op letter(s), then F (FUA), A (readahead), S (sync), M
// (meta) and other letters ioshape ignores.
func decodeRWBS(s []byte, f event.Flags) (event.Op, event.Flags) {
	op := event.Other
	i := 0
	if len(s) > 1 && s[0] == 'F' {
		f |= event.FlagPreflush
		i = 1
	}
	if i < len(s) {
		switch s[i] {
		case 'R':
			op = event.Read
		case 'W':
			op = event.Write
		case 'D':
			op = event.Discard
			if i+1 < len(s) && s[i+1] == 'E' { // secure erase
				i++
			}
		case 'F':
			op = event.Flush
		}
		i++
	}
	if op == event.Other && f&event.FlagPreflush != 0 { // a lone "F" is a flush
		op = event.Flush
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case 'F':
			f |= event.FlagFUA
		case 'A':
			f |= event.FlagReadahead
		case 'S':
			f |= event.FlagSync
		case 'M':
			f |= event.FlagMeta
		}
	}
	return op, f
}

// parseSyscall reads: call enter exit pid tid fd dev ino offset count ret fflags role comm
func (r *BpftraceReader) parseSyscall(b []byte) string {
	f := fields(b, 14)
	if len(f) != 14 {
		return "syscall line has too few fields"
	}
	var n [13]int64
	for i := 0; i < 13; i++ {
		var v int64
		var err error
		if i == 6 || i == 9 || i == 11 { // ino, count, fflags are unsigned
			var u uint64
			u, err = strconv.ParseUint(string(f[i]), 10, 64)
			v = int64(u)
		} else {
			v, err = strconv.ParseInt(string(f[i]), 10, 64)
		}
		if err != nil {
			return fmt.Sprintf("syscall line field %d: not a number", i+1)
		}
		n[i] = v
	}
	if msg := fillSyscall(&r.rec.Event, event.Call(n[0]), n[1], n[2], uint32(n[3]), uint32(n[4]), uint64(n[6]), uint64(n[7]), n[8], n[9], n[10], uint64(n[11]), n[12], string(f[13]), r.oDirect); msg != "" {
		return msg
	}
	r.rec.Kind = KindEvent
	return ""
}

// fillSyscall makes a syscall-layer event (shared by the text and binary
// decoders). role: 0 plain; 1 copy source whose destination follows; 2
// copy destination; 3 copy source alone.
func fillSyscall(e *event.Event, call event.Call, start, end int64, pid, tid uint32, dev, ino uint64, offset, size, ret int64, fflags uint64, role int64, comm string, oDirect uint64) string {
	if !call.Valid() {
		return fmt.Sprintf("unknown call %d", call)
	}
	*e = event.Event{
		Layer:  event.Syscall,
		Call:   call,
		Op:     CallOp(call),
		Start:  start,
		End:    end,
		Pid:    pid,
		Tid:    tid,
		Dev:    event.DevFromKernel(dev),
		Inode:  ino,
		Offset: offset,
		Size:   size,
		Comm:   comm,
	}
	if ret >= 0 {
		e.Bytes = ret
	} else {
		e.Errno = int32(-ret)
	}
	switch role {
	case 1:
		e.Op, e.Flags = event.Read, e.Flags|event.FlagCopySource
	case 3:
		e.Op = event.Read
	case 2:
		e.Op = event.Write
	}
	if call == event.CallCopyFileRange || call == event.CallSendfile {
		// The requested length of a copy is usually "everything" (SSIZE_MAX):
		// what was moved is the useful size.
		e.Size = e.Bytes
	}
	if call == event.CallFadvise {
		// The tracers put the advice where a call's size goes.
		switch size {
		case adviceSequential:
			e.Flags |= event.FlagAdviceSequential
		case adviceRandom:
			e.Flags |= event.FlagAdviceRandom
		}
		e.Size, e.Bytes = 0, 0
	}
	if !e.Op.IsData() {
		e.Offset = -1
	}
	if oDirect != 0 && fflags&oDirect != 0 {
		e.Flags |= event.FlagDirect
	}
	if fflags&oDsync != 0 {
		e.Flags |= event.FlagSync
	}
	if call.IsAsync() {
		e.Flags |= event.FlagAsync
	}
	return ""
}

// Linux's POSIX_FADV_RANDOM and POSIX_FADV_SEQUENTIAL.
const (
	adviceRandom     = 1
	adviceSequential = 2
)

// CallOp is the direction of a call's I/O.
func CallOp(c event.Call) event.Op {
	switch c {
	case event.CallRead, event.CallPread64, event.CallReadv, event.CallPreadv, event.CallPreadv2, event.CallAioRead, event.CallUringRead:
		return event.Read
	case event.CallWrite, event.CallPwrite64, event.CallWritev, event.CallPwritev, event.CallPwritev2, event.CallAioWrite, event.CallUringWrite:
		return event.Write
	case event.CallFsync, event.CallFdatasync, event.CallSyncFileRange, event.CallAioFsync, event.CallUringFsync, event.CallFullFsync:
		return event.Flush
	case event.CallCopyFileRange, event.CallSendfile:
		return event.Read
	}
	return event.Other
}

// fields splits b on spaces into at most n fields; the last keeps the rest
// of the line (a process name may contain spaces).
func fields(b []byte, n int) [][]byte {
	out := make([][]byte, 0, n)
	for len(out) < n-1 {
		b = bytes.TrimLeft(b, " ")
		if len(b) == 0 {
			return out
		}
		i := bytes.IndexByte(b, ' ')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
	if len(b) > 0 || n == len(out)+1 {
		out = append(out, b)
	}
	return out
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// inFlightTracked reads the flags of an in-flight request bpftrace printed
// at exit, "@rq[dev, sector]: (arrival, pid, tid, flags, bytes, comm)":
// bit 2 marks a request of the recording's target (or a kernel thread's).
func inFlightTracked(b []byte) (tracked, ok bool) {
	i := bytes.Index(b, []byte("]: ("))
	if i < 0 {
		return false, false
	}
	fields := bytes.SplitN(b[i+4:], []byte(", "), 5)
	if len(fields) < 5 {
		return false, false
	}
	flags, err := strconv.ParseUint(string(fields[3]), 10, 8)
	if err != nil {
		return false, false
	}
	return flags&2 != 0, true
}

// stateMaps are the script's in-flight maps other than @rq.
var stateMaps = [][]byte{[]byte("@rqd["), []byte("@sc["), []byte("@sco["),
	[]byte("@aioev["), []byte("@uring["), []byte("@track["), []byte("@root[")}

func isStateEntry(b []byte) bool {
	for _, m := range stateMaps {
		if bytes.HasPrefix(b, m) {
			return true
		}
	}
	return false
}
