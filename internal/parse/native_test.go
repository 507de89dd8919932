package parse

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

type nativeFields struct {
	kind, role, op, flags byte
	pid, tid              uint32
	status                int32
	start, dispatch, end  uint64
	dev                   uint32
	offset                int64
	size                  uint64
	ret                   int64
	ino                   uint64
	fflags                uint32
	call, child           uint32
	comm                  string
}

// encode lays a record out as the eBPF programs do: a block request's
// status and a fork's child go where a call's result does.
func (f nativeFields) encode() []byte {
	b := make([]byte, NativeRecordSize)
	le := binary.LittleEndian
	b[0], b[1], b[2], b[3] = f.kind, f.role, f.op, f.flags
	le.PutUint32(b[4:], f.pid)
	le.PutUint32(b[8:], f.tid)
	le.PutUint32(b[12:], f.call)
	ret := f.ret
	switch f.kind {
	case nativeBlock:
		ret = int64(f.status)
	case nativeFork:
		ret = int64(f.child)
	}
	for i, v := range []uint64{f.start, f.dispatch, f.end, uint64(f.offset), f.size, uint64(ret), f.ino} {
		le.PutUint64(b[16+8*i:], v)
	}
	le.PutUint32(b[72:], f.dev)
	le.PutUint32(b[76:], f.fflags)
	copy(b[80:], f.comm)
	return b
}

func TestDecodeNativeBlock(t *testing.T) {
	b := nativeFields{kind: nativeBlock, op: nativeOpWrite, flags: nativeFUA | nativeSync | nativeKthread, pid: 10, tid: 11,
		start: 1000, dispatch: 1500, end: 9000, dev: 259<<20 | 1, offset: 2048, size: 65536, comm: "kworker/u8:1"}.encode()
	rec, err := DecodeNative(b, ODirectFor("amd64"))
	if err != nil {
		t.Fatal(err)
	}
	e := rec.Event
	want := event.Event{Layer: event.Block, Op: event.Write, Start: 1000, Dispatch: 1500, End: 9000, Dev: event.Dev{Major: 259, Minor: 1},
		Offset: 2048 * 512, Size: 65536, Bytes: 65536, Pid: 10, Tid: 11, Comm: "kworker/u8:1",
		Flags: event.FlagDispatched | event.FlagKernel | event.FlagFUA | event.FlagSync}
	if rec.Kind != KindEvent || e != want {
		t.Fatalf("got  %+v\nwant %+v", e, want)
	}

	// Issued without an insert: arrival is the issue. A failed request moves no bytes.
	b = nativeFields{kind: nativeBlock, op: nativeOpRead, status: 10, start: 2000, dispatch: 1900, end: 3000, size: 4096, offset: 8, comm: "fio"}.encode()
	rec, _ = DecodeNative(b, 0)
	if e := rec.Event; e.Start != 1900 || e.Errno != 5 || e.Bytes != 0 || e.Op != event.Read {
		t.Fatalf("direct issue / error: %+v", e)
	}
	// An empty preflush is a flush, with no offset.
	b = nativeFields{kind: nativeBlock, op: 5, flags: nativePreflush, start: 1, end: 2, offset: 99}.encode()
	rec, _ = DecodeNative(b, 0)
	if e := rec.Event; e.Op != event.Flush || e.Offset != -1 || e.Flags&event.FlagPreflush == 0 {
		t.Fatalf("preflush: %+v", e)
	}
}

func TestDecodeNativeSyscall(t *testing.T) {
	b := nativeFields{kind: nativeSyscall, role: 1, pid: 7, tid: 8, start: 10, end: 20, dev: 8<<20 | 2, ino: 1234, offset: 4096,
		size: 1 << 40, ret: 131072, fflags: 0x4000, call: uint32(event.CallCopyFileRange), comm: "cp"}.encode()
	rec, err := DecodeNative(b, ODirectFor("amd64"))
	if err != nil {
		t.Fatal(err)
	}
	e := rec.Event
	if e.Layer != event.Syscall || e.Op != event.Read || e.Flags&event.FlagCopySource == 0 || e.Flags&event.FlagDirect == 0 ||
		e.Size != 131072 || e.Bytes != 131072 || e.Inode != 1234 || e.Dev != (event.Dev{Major: 8, Minor: 2}) || e.Comm != "cp" {
		t.Fatalf("copy source: %+v", e)
	}
	b = nativeFields{kind: nativeSyscall, call: uint32(event.CallAioRead), start: 1, end: 2, size: 4096, ret: -11, offset: 0}.encode()
	rec, _ = DecodeNative(b, 0)
	if e := rec.Event; e.Errno != 11 || e.Bytes != 0 || e.Flags&event.FlagAsync == 0 || e.Op != event.Read {
		t.Fatalf("aio error: %+v", e)
	}
	if _, err := DecodeNative(nativeFields{kind: nativeSyscall, call: 9999}.encode(), 0); err == nil {
		t.Fatal("unknown call accepted")
	}
}

// A sleep says who woke it (the waker's thread ID in ret)
// and whether it is its thread's creation; a wait, who woke it if a
// traced thread did.
func TestDecodeNativeSleepAndWait(t *testing.T) {
	b := nativeFields{kind: nativeSleep, role: 1, pid: 20, tid: 21, start: 100, dispatch: 100, end: 180, ret: 9, comm: "chromium"}.encode()
	rec, err := DecodeNative(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := event.Event{Layer: event.Syscall, Call: event.CallSleep, Op: event.Other, Start: 100, Dispatch: 100, End: 180, Offset: -1,
		Inode: 9, Pid: 20, Tid: 21, Comm: "chromium", Flags: event.FlagDispatched | event.FlagBorn}
	if e := rec.Event; rec.Kind != KindEvent || e != want || e.Waker() != 9 || !e.IsSleep() || e.IsIO() {
		t.Fatalf("got  %+v\nwant %+v", e, want)
	}
	// Never woken before the recording stopped: no waker.
	rec, _ = DecodeNative(nativeFields{kind: nativeSleep, start: 100, end: 180}.encode(), 0)
	if e := rec.Event; e.Flags != 0 || e.Waker() != 0 {
		t.Fatalf("sleep not woken: %+v", e)
	}
	if _, err := DecodeNative(nativeFields{kind: nativeSleep, start: 100, dispatch: 200, end: 180}.encode(), 0); err == nil {
		t.Error("a sleep woken after it ended accepted")
	}
	rec, _ = DecodeNative(nativeFields{kind: nativeWait, pid: 3, tid: 3, start: 10, dispatch: 40, end: 50, ret: 5}.encode(), 0)
	if e := rec.Event; !e.IsWait() || e.Blocked != 40 || e.Dispatch != 40 || e.Waker() != 5 || e.Flags&event.FlagDispatched == 0 {
		t.Fatalf("wait woken by a thread: %+v", e)
	}
	rec, _ = DecodeNative(nativeFields{kind: nativeWait, start: 10, dispatch: 40, end: 50}.encode(), 0)
	if e := rec.Event; e.Flags&event.FlagDispatched != 0 || e.Waker() != 0 {
		t.Fatalf("wait woken by no thread: %+v", e)
	}
}

// A steal says how much of a thread's stretches on a CPU, from start to
// end, was not its own run time; never more than the span.
func TestDecodeNativeSteal(t *testing.T) {
	rec, err := DecodeNative(nativeFields{kind: nativeSteal, pid: 7, tid: 8, start: 1000, dispatch: 300, end: 5000, comm: "grep"}.encode(), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := event.Event{Layer: event.Syscall, Call: event.CallSteal, Op: event.Other, Flags: event.FlagBlocked,
		Start: 1000, End: 5000, Blocked: 300, Offset: -1, Pid: 7, Tid: 8, Comm: "grep"}
	if e := rec.Event; rec.Kind != KindEvent || e != want || !e.IsSteal() || e.IsIO() || e.IsSleep() || e.IsWait() {
		t.Fatalf("got  %+v\nwant %+v", e, want)
	}
	for _, bad := range []nativeFields{{kind: nativeSteal, start: 100, dispatch: 81, end: 180}, {kind: nativeSteal, start: 200, end: 180}} {
		if _, err := DecodeNative(bad.encode(), 0); err == nil {
			t.Errorf("%d ns taken from %d to %d accepted", bad.dispatch, bad.start, bad.end)
		}
	}
}

func TestDecodeNativeForkExitAndBadInput(t *testing.T) {
	rec, _ := DecodeNative(nativeFields{kind: nativeFork, pid: 3, child: 4}.encode(), 0)
	if rec.Kind != KindFork || rec.Pid != 3 || rec.Child != 4 {
		t.Fatalf("fork %+v", rec)
	}
	rec, _ = DecodeNative(nativeFields{kind: nativeExit, pid: 5, end: 77}.encode(), 0)
	if rec.Kind != KindExit || rec.Pid != 5 {
		t.Fatalf("exit %+v", rec)
	}
	if _, err := DecodeNative(make([]byte, 50), 0); err == nil {
		t.Error("short record accepted")
	}
	if _, err := DecodeNative(nativeFields{kind: 99}.encode(), 0); err == nil {
		t.Error("unknown kind accepted")
	}
}

func FuzzDecodeNative(f *testing.F) {
	f.Add(nativeFields{kind: nativeBlock, size: 4096}.encode())
	f.Add(nativeFields{kind: nativeSyscall, call: uint32(event.CallRead)}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeNative(b, 0x4000) // must not panic
	})
}

// A decoder that keeps the names it made gives every record the name its
// bytes hold — names sharing a slot, sharing a prefix, with bytes after
// their NUL, empty, or a full 16 bytes without one.
func TestNativeDecoderNames(t *testing.T) {
	var d NativeDecoder
	names := []string{"fio", "fio2", "cp", "", "kworker/u8:0", "sixteen-bytes-xx", "Final Cut Pro"}
	for i := range 2000 {
		want := names[i%len(names)]
		if i%5 == 0 {
			want = fmt.Sprintf("p%d", i%37)
		}
		b := nativeFields{kind: nativeBlock, op: nativeOpRead, start: 1, end: 2, size: 512, comm: want}.encode()
		if want != "" && len(want) < 15 && i%3 == 0 {
			b[80+len(want)+1] = byte(i) // after the NUL: not part of the name
		}
		rec, err := d.Decode(b, 0)
		if err != nil || rec.Event.Comm != want {
			t.Fatalf("record %d: name %q, want %q (%v)", i, rec.Event.Comm, want, err)
		}
	}
}
