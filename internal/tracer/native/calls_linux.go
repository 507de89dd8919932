//go:build linux && (amd64 || arm64)

package native

import (
	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
)

// Values of ioshapeCallSpec fields (see struct call_spec in
// dscripts/ebpf/ioshape.bpf.c).
const (
	kindPlain       = 0
	kindAioSubmit   = 1
	kindAioGetevent = 2

	posFile = 0 // the file's position
	posArg  = 1 // an argument
	posUser = 2 // a user pointer argument, or the file's position if null
	posNone = 3

	noArg = 0xff
)

// nativeCallTable is the syscall table the eBPF programs trace, by this
// architecture's syscall numbers: the same calls, arguments and offsets as
// the bpftrace script's scriptCalls.
func nativeCallTable() map[int]ioshapeCallSpec {
	plain := func(c event.Call, count uint8, pos, posArg uint8) ioshapeCallSpec {
		return ioshapeCallSpec{Call: uint8(c), Op: uint8(parse.CallOp(c)), FdArg: 0, CountArg: count, Pos: pos, PosArg: posArg, OutArg: noArg}
	}
	// data: a read or write whose buffer (or iovec array) is argument 1,
	// whose data is sampled.
	data := func(s ioshapeCallSpec) ioshapeCallSpec {
		s.Sample = 1
		return s
	}
	vec := func(c event.Call, pos uint8) ioshapeCallSpec {
		s := plain(c, noArg, pos, 3)
		s.Vec = 1
		return s
	}
	return map[int]ioshapeCallSpec{
		unix.SYS_READ:     data(plain(event.CallRead, 2, posFile, 0)),
		unix.SYS_WRITE:    data(plain(event.CallWrite, 2, posFile, 0)),
		unix.SYS_PREAD64:  data(plain(event.CallPread64, 2, posArg, 3)),
		unix.SYS_PWRITE64: data(plain(event.CallPwrite64, 2, posArg, 3)),
		unix.SYS_READV:    data(vec(event.CallReadv, posFile)),
		unix.SYS_WRITEV:   data(vec(event.CallWritev, posFile)),
		unix.SYS_PREADV:   data(vec(event.CallPreadv, posArg)),
		unix.SYS_PWRITEV:  data(vec(event.CallPwritev, posArg)),
		unix.SYS_PREADV2:  data(vec(event.CallPreadv2, posArg)),
		unix.SYS_PWRITEV2: data(vec(event.CallPwritev2, posArg)),
		unix.SYS_COPY_FILE_RANGE: {Call: uint8(event.CallCopyFileRange), Op: uint8(event.Read), FdArg: 0, CountArg: 4, Pos: posUser, PosArg: 1,
			OutArg: 2, OutPos: posUser, OutPosArg: 3},
		unix.SYS_SENDFILE: {Call: uint8(event.CallSendfile), Op: uint8(event.Read), FdArg: 1, CountArg: 3, Pos: posUser, PosArg: 2,
			OutArg: 0, OutPos: posFile},
		unix.SYS_FSYNC:           plain(event.CallFsync, noArg, posNone, 0),
		unix.SYS_FDATASYNC:       plain(event.CallFdatasync, noArg, posNone, 0),
		unix.SYS_SYNC_FILE_RANGE: plain(event.CallSyncFileRange, 2, posArg, 1),
		// The advice goes where a call's size does (the parser makes it a
		// flag).
		unix.SYS_FADVISE64:     plain(event.CallFadvise, 3, posNone, 0),
		unix.SYS_IO_SUBMIT:     {Call: 1, Kind: kindAioSubmit, OutArg: noArg},
		unix.SYS_IO_GETEVENTS:  {Call: 1, Kind: kindAioGetevent, OutArg: noArg},
		unix.SYS_IO_PGETEVENTS: {Call: 1, Kind: kindAioGetevent, OutArg: noArg},
	}
}
