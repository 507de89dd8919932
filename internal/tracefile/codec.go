package tracefile

import (
	"encoding/binary"
	"errors"

	"github.com/ioshape/ioshape/internal/event"
)

var errBadChunk = errors.New("malformed event chunk")

// stringTable numbers a chunk's process names in the order they first
// come: both event layouts (rows and columns) open with it, and events
// name their process by its number.
type stringTable struct {
	index map[string]uint64
	names []string
}

// of is name's number, given it on first sight. A name is kept to
// maxNameLen bytes, as a reader keeps it.
func (t *stringTable) of(name string) uint64 {
	if len(name) > maxNameLen {
		name = truncUTF8(name, maxNameLen)
	}
	i, ok := t.index[name]
	if !ok {
		if t.index == nil {
			t.index = map[string]uint64{}
		}
		i = uint64(len(t.names))
		t.index[name] = i
		t.names = append(t.names, name)
	}
	return i
}

func (t *stringTable) reset() {
	clear(t.index)
	t.names = t.names[:0]
}

// appendTo appends the table as a chunk opens with it: the count, then
// each name's length and bytes.
func (t *stringTable) appendTo(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(t.names)))
	for _, s := range t.names {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// decoder walks one decompressed event chunk.
type decoder struct {
	buf     []byte
	strtab  []string
	left    uint64
	prev    int64
	err     error
	columns bool // an event-columns chunk (columns.go); else varint rows
	col     columnReader
}

// init starts on a decompressed chunk of events of the given kind.
func (d *decoder) init(kind byte, p []byte) error {
	*d = decoder{buf: p, strtab: d.strtab[:0]}
	// A chunk names no more processes than it holds events (a writer's
	// table numbers only the names its events use), each at most
	// maxNameLen bytes as kept: a count or a length from the file is
	// bounded before it allocates.
	ns := d.uvarint()
	if ns > eventsPerChunk {
		return errBadChunk
	}
	for i := uint64(0); i < ns && d.err == nil; i++ {
		l := d.uvarint()
		if d.err != nil || l > uint64(len(d.buf)) {
			return errBadChunk
		}
		d.strtab = append(d.strtab, truncUTF8(string(d.buf[:min(l, maxNameLen)]), maxNameLen))
		d.buf = d.buf[l:]
	}
	d.left = d.uvarint()
	if d.err == nil && kind == kindColumns {
		return d.initColumns()
	}
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

// next decodes one event into e; false when the chunk is exhausted or bad.
// Its varints are read in one loop whose one-byte case (most fields:
// kinds, flags, devices, small deltas) costs a comparison: decoding is a
// third of what reading a trace costs.
func (d *decoder) next(e *event.Event) bool {
	if d.left == 0 || d.err != nil {
		return false
	}
	d.left--
	if d.columns {
		return d.nextColumns(e)
	}
	b := d.buf
	// kind, flags, start, [dispatch], end, [blocked], major, minor, inode,
	// offset, size, bytes, errno, pid, tid, string.
	var f [16]uint64
	n, i := 2, 0
	for k := 0; k < n; k++ {
		if i < len(b) && b[i] < 0x80 {
			f[k] = uint64(b[i])
			i++
		} else {
			f[k], i = uvSlow(b, i)
		}
		if k == 1 { // the flags say which optional fields follow
			n = 14
			if event.Flags(f[1])&event.FlagDispatched != 0 {
				n++
			}
			if event.Flags(f[1])&event.FlagBlocked != 0 {
				n++
			}
		}
	}
	if i > len(b) || f[n-1] >= uint64(len(d.strtab)) {
		d.err = errBadChunk
		return false
	}
	d.buf = b[i:]
	e.Layer = event.Layer(f[0] & 1)
	e.Op = event.Op(f[0] >> 1 & 7)
	e.Call = event.Call(f[0] >> 4)
	e.Flags = event.Flags(f[1])
	e.Start = d.prev + unzig(f[2])
	d.prev = e.Start
	k := 3
	e.Dispatch = 0
	if e.Flags&event.FlagDispatched != 0 {
		e.Dispatch = e.Start + unzig(f[k])
		k++
	}
	e.End = e.Start + unzig(f[k])
	k++
	e.Blocked = 0
	if e.Flags&event.FlagBlocked != 0 {
		e.Blocked = unzig(f[k])
		k++
	}
	rest := f[k : k+10 : k+10]
	e.Dev.Major = uint32(rest[0])
	e.Dev.Minor = uint32(rest[1])
	e.Inode = rest[2]
	e.Offset = unzig(rest[3])
	e.Size = unzig(rest[4])
	e.Bytes = unzig(rest[5])
	e.Errno = int32(unzig(rest[6]))
	e.Pid = uint32(rest[7])
	e.Tid = uint32(rest[8])
	e.Comm = d.strtab[rest[9]]
	return true
}

// uvSlow reads the unsigned varint at b[i:] and returns it with the index
// after it. A malformed or cut varint returns an index past len(b), which
// every later read keeps: one check at the end of an event finds it.
func uvSlow(b []byte, i int) (uint64, int) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if i >= len(b) {
			break
		}
		c := b[i]
		i++
		if c < 0x80 {
			if shift == 63 && c > 1 { // past 64 bits
				break
			}
			return v | uint64(c)<<shift, i
		}
		v |= uint64(c&0x7f) << shift
	}
	return 0, len(b) + 1
}

// unzig undoes a signed varint's zig-zag encoding (binary.AppendVarint).
func unzig(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
