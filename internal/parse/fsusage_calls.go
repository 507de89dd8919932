package parse

import (
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
)

// fs_usage's file-system lines (fs_usage.c format_print), as far as they
// are I/O. A data call prints
//
//	read              F=14   B=0x1                       0.000002   Code Helper.11507      (FMT_FD_IO)
//	pread             F=4    B=0x1000     O=0x1000002f9730   0.000021   searchpartyd.2595924   (FMT_PREAD)
//	read              F=14[ 35]                          0.000002   Code Helper.11507      (an error)
//
// The _nocancel variants print their plain name; the name column is 17
// characters wide and cut there.
//
// O= is not the file offset. fs_usage rebuilds it from the call's first
// four arguments as they were on 32-bit systems, where a 64-bit offset
// took two: O = arg3<<32 | low 32 bits of arg4. On 64-bit Macs that is
// nbyte<<32 | offset mod 4 GiB for pread/pwrite(fd, buf, nbyte, offset),
// iovcnt<<32 | offset mod 4 GiB for preadv/pwritev(fd, iov, iovcnt,
// offset), and buf<<32 | nbyte for guarded_pwrite_np(fd, guard, buf,
// nbyte, offset), whose offset is not printed at all. The capture in
// a real capture shows each: "pread B=0x4f7a O=0x4f7a00000000" (offset
// 0), "pread B=0x1000 O=0x1000002f9730" (offset 0x2f9730),
// "guarded_pwrite_np B=0x1018 O=0x6e2ecc0000001018". The high 32 bits of
// an offset are restored from the descriptor's previous position (the
// nearest candidate), so a file read on past 4 GiB keeps counting.
//
// read/write/readv/writev carry no offset: the descriptor's position is
// followed from open (0, unless O_APPEND), lseek (whose O= is the new
// offset) and the bytes each call moved; before the trace knows a
// descriptor's position, the offset is unknown (-1).
type callSpec struct {
	call   event.Call
	op     event.Op
	offset offsetKind
}

type offsetKind uint8

const (
	positional  offsetKind = iota // read, write: the descriptor's position
	nbyteOffset                   // pread, pwrite: O = nbyte<<32 | offset
	countOffset                   // preadv, pwritev: O = iovcnt<<32 | offset
	noOffset                      // guarded_pwrite_np: O = buf<<32 | nbyte
	notData
)

var fsUsageCalls = map[string]callSpec{
	"read": {event.CallRead, event.Read, positional}, "write": {event.CallWrite, event.Write, positional},
	"readv": {event.CallReadv, event.Read, positional}, "writev": {event.CallWritev, event.Write, positional},
	"pread": {event.CallPread64, event.Read, nbyteOffset}, "pwrite": {event.CallPwrite64, event.Write, nbyteOffset},
	"preadv": {event.CallPreadv, event.Read, countOffset}, "pwritev": {event.CallPwritev, event.Write, countOffset},
	"guarded_write_np": {event.CallWrite, event.Write, positional}, "guarded_writev_np": {event.CallWritev, event.Write, positional},
	"guarded_pwrite_np": {event.CallPwrite64, event.Write, noOffset},
	"fsync":             {event.CallFsync, event.Flush, notData}, "fdatasync": {event.CallFdatasync, event.Flush, notData},
	"clonefileat": {event.CallClone, event.Other, notData}, "fclonefileat": {event.CallClone, event.Other, notData},
	"clonefile": {event.CallClone, event.Other, notData}, "copyfile": {event.CallCopyfile, event.Other, notData},
}

// fdKey is one process's descriptor.
type fdKey struct {
	pid uint32
	fd  int
}

// fileState is what the trace knows of a descriptor.
type fileState struct {
	pos     int64 // the next read/write's offset; -1 if unknown
	last    int64 // where the last positioned call ended; -1 if none
	noCache bool  // fcntl(F_NOCACHE, 1): its I/O bypasses the cache
}

// maxFiles bounds the descriptor table: a long capture of a whole system
// opens millions of files, and a forgotten entry costs only an offset.
const maxFiles = 1 << 16

func (r *FsUsageReader) file(k fdKey) *fileState {
	f := r.files[k]
	if f == nil {
		if len(r.files) >= maxFiles {
			clear(r.files)
		}
		f = &fileState{pos: -1, last: -1}
		r.files[k] = f
	}
	return f
}

// parseCall reads a file-system line; name is the call column, rest what
// follows it.
func (r *FsUsageReader) parseCall(name, rest string, completion int64) string {
	name = strings.TrimSuffix(name, "_nocancel")
	switch name {
	case "PAGE_IN_FILE", "PAGE_IN":
		r.PageIns++
		r.rec = Record{Kind: KindSkip}
		return ""
	case "open", "openat", "open_extended", "guarded_open_np", "open_dprotected", "guarded_open_dprot",
		"close", "guarded_close_np", "lseek", "fcntl", "dup", "dup2":
		return r.trackFile(name, rest, completion)
	}
	spec, ok := fsUsageCalls[name]
	if !ok {
		r.rec = Record{Kind: KindSkip}
		return ""
	}
	body, elapsed, comm, tid, ok := tail(rest)
	if !ok {
		return "no elapsed time"
	}
	end := r.clock(completion)
	e := &r.rec.Event
	*e = event.Event{Layer: event.Syscall, Call: spec.call, Op: spec.op, Start: end - elapsed, End: end, Offset: -1,
		Tid: tid, Comm: comm}
	e.Pid = r.pidOf(tid, comm)
	r.rec.Kind = KindEvent
	if spec.offset == notData && !strings.HasPrefix(strings.TrimSpace(rest), "F=") {
		// clonefileat, copyfile: a path, maybe an error before it.
		if len(body) > 0 && strings.HasPrefix(body[0], "[") {
			errno, ok := bracketErrno(body)
			if !ok {
				return "bad error field"
			}
			e.Errno = int32(errno)
		}
		return ""
	}
	f, ok := parseFDBody(body)
	if !ok {
		return "expected F=<fd> [B=0x<bytes>] [O=0x<offset>]"
	}
	e.Errno = int32(f.errno)
	e.Inode = uint64(f.fd) + 1 // no file identity in fs_usage: one stream per descriptor
	if spec.offset == notData {
		e.Flags |= event.FlagSync
		return ""
	}
	st := r.file(fdKey{e.Pid, f.fd})
	if st.noCache {
		e.Flags |= event.FlagDirect
	}
	if f.errno != 0 {
		return ""
	}
	if !f.hasBytes {
		return "expected B=0x<bytes>"
	}
	e.Size, e.Bytes = f.bytes, f.bytes
	switch spec.offset {
	case positional:
		if st.pos >= 0 {
			e.Offset = st.pos
			st.pos += f.bytes
		}
	case nbyteOffset, countOffset:
		if !f.hasOffset {
			return "expected O=0x<offset>"
		}
		hi := f.offset >> 32
		if spec.offset == nbyteOffset && hi >= uint64(f.bytes) {
			e.Size = int64(hi) // what was asked for; B= is what moved
		}
		near := st.last
		if near < 0 {
			near = st.pos
		}
		e.Offset = unwrap32(f.offset&0xffffffff, near)
		st.last = e.Offset + f.bytes // the position stays; the next positioned call most likely goes on from here
	}
	return ""
}

// fdBody is a parsed "F=<fd>[errno] B=0x.. O=0x.." body.
type fdBody struct {
	fd                  int
	errno               int
	bytes               int64
	offset              uint64
	hasBytes, hasOffset bool
	angle               string // "<...>", fcntl's command
}

func parseFDBody(fields []string) (fdBody, bool) {
	var b fdBody
	s := strings.Join(fields, " ")
	if !strings.HasPrefix(s, "F=") {
		return b, false
	}
	s = s[2:]
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	fd, err := strconv.Atoi(s[:i])
	if err != nil {
		return b, false
	}
	b.fd = fd
	s = strings.TrimLeft(s[i:], " ")
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return b, false
		}
		if b.errno, err = strconv.Atoi(strings.TrimSpace(s[1:end])); err != nil || b.errno < 0 {
			return b, false
		}
		s = s[end+1:]
	}
	for _, f := range strings.Fields(s) {
		switch {
		case strings.HasPrefix(f, "B=0x") && !b.hasBytes:
			v, err := strconv.ParseInt(f[4:], 16, 64)
			if err != nil || v < 0 {
				return b, false
			}
			b.bytes, b.hasBytes = v, true
		case strings.HasPrefix(f, "O=0x") && !b.hasOffset:
			v, err := strconv.ParseUint(f[4:], 16, 64)
			if err != nil {
				return b, false
			}
			b.offset, b.hasOffset = v, true
		case strings.HasPrefix(f, "<") && b.angle == "":
			b.angle = s[strings.Index(s, f):]
			if end := strings.IndexByte(b.angle, '>'); end >= 0 {
				b.angle = b.angle[:end+1]
			}
		}
	}
	return b, true
}

// unwrap32 restores the high bits of an offset known modulo 4 GiB: the
// candidate nearest the descriptor's position, or the low bits alone when
// the position is unknown.
func unwrap32(lo uint64, pos int64) int64 {
	if pos < 0 {
		return int64(lo)
	}
	const span = 1 << 32
	base := pos &^ (span - 1)
	best := base + int64(lo)
	for _, c := range []int64{best - span, best + span} {
		if c >= 0 && abs64(c-pos) < abs64(best-pos) {
			best = c
		}
	}
	return best
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// trackFile follows what open, close, lseek, dup and fcntl do to a
// descriptor. fcntl(F_FULLFSYNC) is a flush, and F_NOCACHE an event of its
// own; the rest are not I/O.
func (r *FsUsageReader) trackFile(name, rest string, completion int64) string {
	body, elapsed, comm, tid, ok := tail(rest)
	if !ok {
		return "no elapsed time"
	}
	r.rec = Record{Kind: KindSkip}
	if len(body) == 0 || !strings.HasPrefix(body[0], "F=") {
		return "" // a failed open: "[  2] (R___) path"
	}
	f, ok := parseFDBody(body)
	if !ok {
		return "expected F=<fd>"
	}
	if f.errno != 0 {
		return ""
	}
	pid := r.pidOf(tid, comm)
	k := fdKey{pid, f.fd}
	switch name {
	case "close", "guarded_close_np":
		delete(r.files, k)
	case "lseek":
		if f.hasOffset {
			r.file(k).pos = int64(f.offset)
		}
	case "dup", "dup2":
		delete(r.files, k) // the new descriptor shares an offset the trace does not know
	case "fcntl":
		call := event.NoCall
		switch {
		case strings.HasPrefix(f.angle, "<FULLFSYNC"):
			call = event.CallFullFsync
		case strings.HasPrefix(f.angle, "<CACHING OFF"):
			call = event.CallNoCache
			r.file(k).noCache = true
		case strings.HasPrefix(f.angle, "<CACHING ON"):
			call = event.CallNoCache
			r.file(k).noCache = false
		}
		if call == event.NoCall {
			return ""
		}
		end := r.clock(completion)
		op := event.Other
		if call == event.CallFullFsync {
			op = event.Flush
		}
		r.rec = Record{Kind: KindEvent, Event: event.Event{Layer: event.Syscall, Call: call, Op: op, Start: end - elapsed, End: end,
			Offset: -1, Inode: uint64(f.fd) + 1, Pid: pid, Tid: tid, Comm: comm, Flags: event.FlagSync}}
	default: // an open: a new descriptor at offset 0, unless it appends
		st := &fileState{pos: 0, last: -1}
		if mode := parenthesized(body); strings.ContainsRune(mode, 'A') {
			st.pos = -1
		}
		if len(r.files) >= maxFiles {
			clear(r.files)
		}
		r.files[k] = st
	}
	return ""
}

// parenthesized is the "(R_____)" open-mode field, if any.
func parenthesized(fields []string) string {
	for _, f := range fields {
		if strings.HasPrefix(f, "(") && strings.HasSuffix(f, ")") {
			return f
		}
	}
	return ""
}
