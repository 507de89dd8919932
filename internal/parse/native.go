package parse

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/ioshape/ioshape/internal/event"
)

// NativeRecordSize is the size of a record from ioshape's eBPF programs
// (struct record in dscripts/ebpf/ioshape.bpf.c):
//
//	0 kind u8, 1 role u8, 2 op u8, 3 flags u8, 4 pid u32, 8 tid u32, 12 call u32,
//	16 start u64, 24 dispatch (syscall: blocked; steal: the time taken) u64, 32 end u64, 40 offset s64,
//	48 size u64, 56 ret s64 (block: status; fork: child; sleep, wait: waker), 64 ino u64,
//	72 dev u32, 76 fflags u32, 80 comm [16]byte
//
// in the host's byte order (little-endian on x86_64 and arm64). Every
// byte is copied through the ring buffer for every I/O, so fields are
// no wider than their values and share where the kinds do not.
const NativeRecordSize = 96

// Record kinds of the native format.
const (
	nativeBlock   = 1
	nativeSyscall = 2
	nativeFork    = 3
	nativeExit    = 4
	nativeWait    = 5
	nativeSleep   = 6
	nativeSteal   = 7
)

// Block ops and flags as the eBPF programs normalise them from the
// kernel's REQ_* values.
const (
	nativeOpRead    = 1
	nativeOpWrite   = 2
	nativeOpFlush   = 3
	nativeOpDiscard = 4

	nativePreflush = 1
	nativeFUA      = 2
	nativeRahead   = 4
	nativeSync     = 8
	nativeMeta     = 16
	nativeKthread  = 32
)

// nativeBlockOp is the event.Op of a block op as the programs normalise it.
func nativeBlockOp(op uint8) event.Op {
	switch op {
	case nativeOpRead:
		return event.Read
	case nativeOpWrite:
		return event.Write
	case nativeOpFlush:
		return event.Flush
	case nativeOpDiscard:
		return event.Discard
	}
	return event.Other
}

// DecodeNative decodes one record. oDirect is the O_DIRECT bit of the
// architecture that recorded it (ODirectFor).
func DecodeNative(b []byte, oDirect uint64) (Record, error) {
	var d NativeDecoder
	return d.Decode(b, oDirect)
}

// NativeDecoder decodes records one after another, keeping the process
// names it has made strings of: a recording has a handful, and a new
// string for every record was half of what the ring buffer's reader
// allocated. It is not safe for concurrent use.
type NativeDecoder struct {
	names [16]struct {
		raw  [16]byte
		name string
	}
}

// name is the process name in raw (NUL-padded), as a string made once.
func (d *NativeDecoder) name(raw []byte) string {
	var key [16]byte
	copy(key[:], raw)
	h := binary.LittleEndian.Uint64(key[:]) ^ binary.LittleEndian.Uint64(key[8:])
	slot := &d.names[(h*0x9E3779B97F4A7C15)>>60]
	if slot.raw == key { // an empty slot holds the empty name's
		return slot.name
	}
	name := raw
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	slot.raw, slot.name = key, string(name)
	return slot.name
}

// Decode decodes one record, as DecodeNative.
func (d *NativeDecoder) Decode(b []byte, oDirect uint64) (Record, error) {
	var rec Record
	if len(b) < NativeRecordSize {
		return rec, fmt.Errorf("native record of %d bytes, want %d", len(b), NativeRecordSize)
	}
	le := binary.LittleEndian
	u32 := func(off int) uint32 { return le.Uint32(b[off:]) }
	u64 := func(off int) uint64 { return le.Uint64(b[off:]) }
	comm := d.name(b[80:96])
	switch b[0] {
	case nativeBlock:
		// The program sees the kernel's blk_status_t, whose values differ
		// between versions; a failed request is reported as EIO.
		errno := int64(0)
		if u64(56) != 0 {
			errno = -5
		}
		e := &rec.Event
		fillBlock(e, int64(u64(16)), int64(u64(24)), int64(u64(32)), uint64(u32(72)), int64(u64(40)), int64(u64(48)), errno,
			u32(4), u32(8), b[3]&nativeKthread != 0, comm)
		var flags event.Flags
		e.Op = nativeBlockOp(b[2])
		for _, f := range []struct {
			bit  byte
			flag event.Flags
		}{{nativePreflush, event.FlagPreflush}, {nativeFUA, event.FlagFUA}, {nativeRahead, event.FlagReadahead}, {nativeSync, event.FlagSync}, {nativeMeta, event.FlagMeta}} {
			if b[3]&f.bit != 0 {
				flags |= f.flag
			}
		}
		if e.Op == event.Other && flags&event.FlagPreflush != 0 { // an empty preflush is a flush
			e.Op = event.Flush
		}
		finishBlock(e, flags)
		rec.Kind = KindEvent
	case nativeSyscall:
		if c := u32(12); c > 0xff {
			return rec, fmt.Errorf("native record: unknown call %d", c)
		}
		if msg := fillSyscall(&rec.Event, event.Call(u32(12)), int64(u64(16)), int64(u64(32)), u32(4), u32(8), uint64(u32(72)), u64(64),
			int64(u64(40)), int64(u64(48)), int64(u64(56)), uint64(u32(76)), int64(b[1]), comm, oDirect); msg != "" {
			return rec, fmt.Errorf("native record: %s", msg)
		}
		if !rec.Event.Call.IsAsync() {
			// The programs time every call's uninterruptible sleep.
			rec.Event.Flags |= event.FlagBlocked
			rec.Event.Blocked = int64(u64(24))
		}
		rec.Kind = KindEvent
	case nativeWait:
		start, end := int64(u64(16)), int64(u64(32))
		rec.Event = event.Event{Layer: event.Syscall, Call: event.CallWait, Op: event.Other, Flags: event.FlagBlocked,
			Start: start, End: end, Blocked: end - start, Offset: -1, Pid: u32(4), Tid: u32(8), Comm: comm}
		// ret: the traced thread that woke it, if one did (a lock's holder).
		if woken, waker := int64(u64(24)), uint32(u64(56)); woken >= start && woken <= end && waker != 0 {
			rec.Event.Flags |= event.FlagDispatched
			rec.Event.Dispatch, rec.Event.Inode = woken, uint64(waker)
		}
		rec.Kind = KindEvent
	case nativeSleep:
		// ret holds the waker's thread ID; role, whether the
		// sleep is the thread's creation.
		e := event.Event{Layer: event.Syscall, Call: event.CallSleep, Op: event.Other,
			Start: int64(u64(16)), End: int64(u64(32)), Offset: -1, Pid: u32(4), Tid: u32(8), Comm: comm}
		if woken := int64(u64(24)); woken != 0 {
			e.Flags |= event.FlagDispatched
			e.Dispatch = woken
			e.Inode = uint64(uint32(u64(56)))
		}
		if b[1] != 0 {
			e.Flags |= event.FlagBorn
		}
		if e.End < e.Start || e.Flags&event.FlagDispatched != 0 && (e.Dispatch < e.Start || e.Dispatch > e.End) {
			return rec, fmt.Errorf("native record: a sleep from %d to %d woken at %d", e.Start, e.End, e.Dispatch)
		}
		rec.Event, rec.Kind = e, KindEvent
	case nativeSteal:
		// dispatch holds how much of the thread's stretches on a CPU
		// from start to end was not its own run time.
		e := event.Event{Layer: event.Syscall, Call: event.CallSteal, Op: event.Other, Flags: event.FlagBlocked,
			Start: int64(u64(16)), End: int64(u64(32)), Blocked: int64(u64(24)), Offset: -1, Pid: u32(4), Tid: u32(8), Comm: comm}
		if e.End < e.Start || e.Blocked < 0 || e.Blocked > e.End-e.Start {
			return rec, fmt.Errorf("native record: %d ns taken from %d to %d", e.Blocked, e.Start, e.End)
		}
		rec.Event, rec.Kind = e, KindEvent
	case nativeFork:
		rec = Record{Kind: KindFork, Pid: int(u32(4)), Child: int(u64(56))}
	case nativeExit:
		rec = Record{Kind: KindExit, Pid: int(u32(4))}
	default:
		return rec, fmt.Errorf("native record of unknown kind %d", b[0])
	}
	return rec, nil
}
