package tracefile

import (
	"encoding/binary"
	"errors"

	"github.com/ioshape/ioshape/internal/event"
)

// encoder appends events to a chunk body: a string table then the events,
// each field a varint, times as deltas (see FORMAT.md).
type encoder struct {
	strings map[string]uint64
	strtab  []string
	body    []byte
	n       int
	prev    int64
}

func newEncoder() *encoder { return &encoder{strings: map[string]uint64{}} }

func (c *encoder) reset() {
	clear(c.strings)
	c.strtab = c.strtab[:0]
	c.body = c.body[:0]
	c.n = 0
	c.prev = 0
}

func (c *encoder) add(e *event.Event) {
	si, ok := c.strings[e.Comm]
	if !ok {
		si = uint64(len(c.strtab))
		c.strings[e.Comm] = si
		c.strtab = append(c.strtab, e.Comm)
	}
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
	dst = binary.AppendUvarint(dst, uint64(len(c.strtab)))
	for _, s := range c.strtab {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendUvarint(dst, uint64(c.n))
	return append(dst, c.body...)
}

var errBadChunk = errors.New("malformed event chunk")

// decoder walks one decompressed event chunk.
type decoder struct {
	buf    []byte
	strtab []string
	left   uint64
	prev   int64
	err    error
}

func (d *decoder) init(p []byte) error {
	*d = decoder{buf: p, strtab: d.strtab[:0]}
	ns := d.uvarint()
	for i := uint64(0); i < ns && d.err == nil; i++ {
		l := d.uvarint()
		if d.err != nil || l > uint64(len(d.buf)) {
			return errBadChunk
		}
		d.strtab = append(d.strtab, string(d.buf[:l]))
		d.buf = d.buf[l:]
	}
	d.left = d.uvarint()
	return d.err
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errBadChunk
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = errBadChunk
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// next decodes one event into e; false when the chunk is exhausted or bad.
func (d *decoder) next(e *event.Event) bool {
	if d.left == 0 || d.err != nil {
		return false
	}
	d.left--
	kind := d.uvarint()
	e.Layer = event.Layer(kind & 1)
	e.Op = event.Op(kind >> 1 & 7)
	e.Call = event.Call(kind >> 4)
	e.Flags = event.Flags(d.uvarint())
	e.Start = d.prev + d.varint()
	d.prev = e.Start
	e.Dispatch = 0
	if e.Flags&event.FlagDispatched != 0 {
		e.Dispatch = e.Start + d.varint()
	}
	e.End = e.Start + d.varint()
	e.Blocked = 0
	if e.Flags&event.FlagBlocked != 0 {
		e.Blocked = d.varint()
	}
	e.Dev.Major = uint32(d.uvarint())
	e.Dev.Minor = uint32(d.uvarint())
	e.Inode = d.uvarint()
	e.Offset = d.varint()
	e.Size = d.varint()
	e.Bytes = d.varint()
	e.Errno = int32(d.varint())
	e.Pid = uint32(d.uvarint())
	e.Tid = uint32(d.uvarint())
	si := d.uvarint()
	if d.err != nil || si >= uint64(len(d.strtab)) {
		d.err = errBadChunk
		return false
	}
	e.Comm = d.strtab[si]
	return true
}
