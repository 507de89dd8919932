package tracefile

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/ioshape/ioshape/internal/event"
)

// An event-columns chunk (format version 3) holds each field of its events
// as a column of fixed-width integers, the width the column's largest value
// needs: decoding an event is then sixteen loads and masks, with no branch
// on a varint's length, at under half the cost of the varint rows of
// version 1 (see FORMAT.md).

// The columns, in the order they are stored.
const (
	colKind = iota
	colFlags
	colStart // delta from the previous event's start, zig-zag
	colDispatch
	colEnd
	colBlocked
	colMajor
	colMinor
	colInode
	colOffset
	colSize
	colBytes
	colErrno
	colPid
	colTid
	colComm
	numColumns
)

// columnPad follows the last column, so that every value is read with one
// 8-byte load.
const columnPad = 8

// maxColumnEvents is the most events a column chunk may hold: what the
// writer puts in one. A reader refuses more rather than allocating for
// a count whose columns may take no bytes.
const maxColumnEvents = eventsPerChunk

// columnEncoder gathers a chunk's events as columns. Events are taken as
// rows into a small block and moved into the columns a block at a time:
// one event's sixteen values stored straight into sixteen columns of half
// a megabyte each would touch sixteen far-apart cache lines (and pages)
// per event, which made writing a trace a quarter slower than varint rows.
type columnEncoder struct {
	names   stringTable
	cols    [numColumns][]uint64
	widest  [numColumns]uint64 // the OR of each column's values
	n       int
	prev    int64
	block   [rowBlock][numColumns]uint64
	inBlock int
}

// rowBlock is how many events wait as rows (16 KB) before they are moved
// into the columns.
const rowBlock = 128

func newColumnEncoder() *columnEncoder {
	c := &columnEncoder{}
	for i := range c.cols {
		c.cols[i] = make([]uint64, 0, eventsPerChunk)
	}
	return c
}

func (c *columnEncoder) reset() {
	c.names.reset()
	for i := range c.cols {
		c.cols[i] = c.cols[i][:0]
	}
	c.widest = [numColumns]uint64{}
	c.n = 0
	c.prev = 0
	c.inBlock = 0
}

func zig(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func (c *columnEncoder) add(e *event.Event) {
	var dispatch, blocked uint64
	if e.Flags&event.FlagDispatched != 0 {
		dispatch = zig(e.Dispatch - e.Start)
	}
	if e.Flags&event.FlagBlocked != 0 {
		blocked = zig(e.Blocked)
	}
	c.block[c.inBlock] = [numColumns]uint64{
		colKind:     uint64(e.Layer) | uint64(e.Op)<<1 | uint64(e.Call)<<4,
		colFlags:    uint64(e.Flags),
		colStart:    zig(e.Start - c.prev),
		colDispatch: dispatch,
		colEnd:      zig(e.End - e.Start),
		colBlocked:  blocked,
		colMajor:    uint64(e.Dev.Major),
		colMinor:    uint64(e.Dev.Minor),
		colInode:    e.Inode,
		colOffset:   zig(e.Offset),
		colSize:     zig(e.Size),
		colBytes:    zig(e.Bytes),
		colErrno:    zig(int64(e.Errno)),
		colPid:      uint64(e.Pid),
		colTid:      uint64(e.Tid),
		colComm:     c.names.of(e.Comm),
	}
	c.prev = e.Start
	c.n++
	if c.inBlock++; c.inBlock == rowBlock {
		c.moveBlock()
	}
}

// moveBlock moves the rows waiting in the block into the columns.
func (c *columnEncoder) moveBlock() {
	rows := c.block[:c.inBlock]
	for k := range c.cols {
		col, widest := c.cols[k], c.widest[k]
		for i := range rows {
			v := rows[i][k]
			col = append(col, v)
			widest |= v
		}
		c.cols[k], c.widest[k] = col, widest
	}
	c.inBlock = 0
}

// payload returns the chunk body: string count, strings, event count, then
// each column as its width in bytes and its values, then the padding.
func (c *columnEncoder) payload(dst []byte) []byte {
	c.moveBlock()
	dst = c.names.appendTo(dst)
	dst = binary.AppendUvarint(dst, uint64(c.n))
	for i, col := range c.cols {
		w := (bits.Len64(c.widest[i]) + 7) / 8
		dst = append(dst, byte(w))
		at := len(dst)
		// Each value is put as 8 bytes, the next overwriting all but its
		// own w: 8 spare at the end, trimmed after.
		dst = slices.Grow(dst, len(col)*w+8)[:at+len(col)*w+8]
		for _, v := range col {
			binary.LittleEndian.PutUint64(dst[at:], v)
			at += w
		}
		dst = dst[:at]
	}
	return append(dst, make([]byte, columnPad)...)
}

// columnReader is where each column of a chunk starts and how wide its
// values are.
type columnReader struct {
	at    [numColumns]int
	width [numColumns]int
	mask  [numColumns]uint64
	i     int // the next event
}

// initColumns reads the column layout from d.buf, which holds what follows
// the event count.
func (d *decoder) initColumns() error {
	if d.left > maxColumnEvents {
		return errBadChunk
	}
	n := int(d.left)
	c := &d.col
	*c = columnReader{}
	at := 0
	for i := range c.at {
		if at >= len(d.buf) || d.buf[at] > 8 {
			return errBadChunk
		}
		w := int(d.buf[at])
		c.width[i], c.at[i] = w, at+1
		c.mask[i] = ^uint64(0) >> (64 - 8*w)
		if w == 0 {
			c.mask[i] = 0
		}
		at += 1 + n*w
	}
	if at+columnPad > len(d.buf) {
		return errBadChunk
	}
	d.columns = true
	return nil
}

// nextColumns decodes event d.col.i from the columns into e.
func (d *decoder) nextColumns(e *event.Event) bool {
	c, b := &d.col, d.buf
	i := c.i
	c.i++
	v := func(k int) uint64 { return binary.LittleEndian.Uint64(b[c.at[k]+i*c.width[k]:]) & c.mask[k] }
	comm := v(colComm)
	if comm >= uint64(len(d.strtab)) {
		d.err = errBadChunk
		return false
	}
	kind := v(colKind)
	e.Layer = event.Layer(kind & 1)
	e.Op = event.Op(kind >> 1 & 7)
	e.Call = event.Call(kind >> 4)
	e.Flags = event.Flags(v(colFlags))
	e.Start = d.prev + unzig(v(colStart))
	d.prev = e.Start
	// Masked by their flags rather than branched on: block and syscall
	// events take turns.
	e.Dispatch = (e.Start + unzig(v(colDispatch))) & flagMask(e.Flags, event.FlagDispatched)
	e.End = e.Start + unzig(v(colEnd))
	e.Blocked = unzig(v(colBlocked)) & flagMask(e.Flags, event.FlagBlocked)
	e.Dev.Major = uint32(v(colMajor))
	e.Dev.Minor = uint32(v(colMinor))
	e.Inode = v(colInode)
	e.Offset = unzig(v(colOffset))
	e.Size = unzig(v(colSize))
	e.Bytes = unzig(v(colBytes))
	e.Errno = int32(unzig(v(colErrno)))
	e.Pid = uint32(v(colPid))
	e.Tid = uint32(v(colTid))
	e.Comm = d.strtab[comm]
	return true
}

// flagMask is all ones if f has flag, else 0.
func flagMask(f, flag event.Flags) int64 {
	if f&flag != 0 {
		return -1
	}
	return 0
}
