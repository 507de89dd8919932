package tracefile

import (
	"encoding/binary"

	"github.com/ioshape/ioshape/internal/event"
)

// The varint rows of format version 1 are read, not written: tests write
// them here to read them back.

// encoder appends events to a chunk body: a string table then the events,
// each field a varint, times as deltas (see FORMAT.md).
type encoder struct {
	names stringTable
	body  []byte
	n     int
	prev  int64
}

func newEncoder() *encoder { return &encoder{} }

func (c *encoder) add(e *event.Event) {
	si := c.names.of(e.Comm)
	b := c.body
	b = binary.AppendUvarint(b, uint64(e.Layer)|uint64(e.Op)<<1|uint64(e.Call)<<4)
	b = binary.AppendUvarint(b, uint64(e.Flags))
	b = binary.AppendVarint(b, e.Start-c.prev)
	c.prev = e.Start
	if e.Flags&event.FlagDispatched != 0 {
		b = binary.AppendVarint(b, e.Dispatch-e.Start)
	}
	b = binary.AppendVarint(b, e.End-e.Start)
	if e.Flags&event.FlagBlocked != 0 {
		b = binary.AppendVarint(b, e.Blocked)
	}
	b = binary.AppendUvarint(b, uint64(e.Dev.Major))
	b = binary.AppendUvarint(b, uint64(e.Dev.Minor))
	b = binary.AppendUvarint(b, e.Inode)
	b = binary.AppendVarint(b, e.Offset)
	b = binary.AppendVarint(b, e.Size)
	b = binary.AppendVarint(b, e.Bytes)
	b = binary.AppendVarint(b, int64(e.Errno))
	b = binary.AppendUvarint(b, uint64(e.Pid))
	b = binary.AppendUvarint(b, uint64(e.Tid))
	b = binary.AppendUvarint(b, si)
	c.body = b
	c.n++
}

// payload returns the chunk body: string count, strings, event count, events.
func (c *encoder) payload(dst []byte) []byte {
	dst = c.names.appendTo(dst)
	dst = binary.AppendUvarint(dst, uint64(c.n))
	return append(dst, c.body...)
}
