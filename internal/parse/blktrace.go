package parse

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ioshape/ioshape/internal/event"
)

// blktrace's binary format: each record is a 48-byte struct blk_io_trace
// (include/uapi/linux/blktrace_api.h) in the recording CPU's byte order,
// followed by pdu_len bytes of payload:
//
//	0 magic u32, 4 sequence u32, 8 time u64 (ns), 16 sector u64,
//	24 bytes u32, 28 action u32, 32 pid u32, 36 device u32 (dev_t),
//	40 cpu u32, 44 error u16, 46 pdu_len u16
const (
	blkTraceSize   = 48
	blkTraceMagic  = 0x65617400
	blkTraceMaxPDU = 1 << 12 // larger ones are corrupt: no tracer writes them

	// action's low 16 bits (__BLK_TA_*) and category bits (BLK_TC_*) above
	blkTCWrite   = 1 << (16 + 1)
	blkTCFlush   = 1 << (16 + 2)
	blkTCSync    = 1 << (16 + 3)
	blkTCPC      = 1 << (16 + 9)
	blkTCNotify  = 1 << (16 + 10)
	blkTCAhead   = 1 << (16 + 11)
	blkTCMeta    = 1 << (16 + 12)
	blkTCDiscard = 1 << (16 + 13)
	blkTCFUA     = 1 << (16 + 15)
	blkTNProcess = 0 // a notify record naming pid's command in its payload
)

// blkTraceLetters are blkparse's letters for __BLK_TA_QUEUE (1) onwards.
const blkTraceLetters = "QMFGSRDCPUTIXBA"

// IsBlktrace reports whether b starts with a blk_io_trace record, in
// either byte order.
func IsBlktrace(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	return binary.LittleEndian.Uint32(b)&^0xff == blkTraceMagic || binary.BigEndian.Uint32(b)&^0xff == blkTraceMagic
}

// BlktraceReader reads the binary files of one blktrace run (one per CPU,
// name.blktrace.N), merged in time order, and rebuilds requests from their
// events as BlkparseReader does. Gaps in a CPU's sequence numbers are
// events blktrace lost.
type BlktraceReader struct {
	srcs    blkSources
	names   map[uint32]string // pid → command, from notify records
	req     *blkRequests
	lastSeq map[blkCPU]uint32
	rec     Record
	held    *blkRaw // a record that came after a gap, still to take
	pending bool
	err     error
}

// blkSource is one per-CPU file and its next record.
type blkSource struct {
	r     *bufio.Reader
	file  string
	order binary.ByteOrder
	n     int // records read
	next  blkRaw
	ok    bool
}

type blkRaw struct {
	seq, bytes, action, pid, device, cpu uint32
	time                                 uint64
	sector                               uint64
	errno                                uint16
	pdu                                  []byte
}

type blkSources []*blkSource

func (s blkSources) Len() int           { return len(s) }
func (s blkSources) Less(i, j int) bool { return s[i].next.time < s[j].next.time }
func (s blkSources) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *blkSources) Push(x any)        { *s = append(*s, x.(*blkSource)) }
func (s *blkSources) Pop() any {
	old := *s
	x := old[len(old)-1]
	*s = old[:len(old)-1]
	return x
}

// NewBlktraceReader reads the files of one run; files names them in errors.
func NewBlktraceReader(rs []io.Reader, files []string) *BlktraceReader {
	p := &BlktraceReader{names: map[uint32]string{}, req: newBlkRequests(), lastSeq: map[blkCPU]uint32{}}
	for i, r := range rs {
		s := &blkSource{r: bufio.NewReaderSize(r, 1<<16), file: files[i]}
		if p.read(s) {
			p.srcs = append(p.srcs, s)
		}
	}
	heap.Init(&p.srcs)
	return p
}

// read fills s.next; false at the end of s or on an error (kept in p.err).
func (p *BlktraceReader) read(s *blkSource) bool {
	var h [blkTraceSize]byte
	if n, err := io.ReadFull(s.r, h[:]); err != nil {
		if s.n == 0 && (n < 4 || !IsBlktrace(h[:n])) {
			p.err = fmt.Errorf("%s: not a blktrace file (no blk_io_trace magic)", s.file)
			return false
		}
		if !errors.Is(err, io.EOF) {
			p.err = fmt.Errorf("%s: record %d: cut short: %w", s.file, s.n+1, err)
		}
		return false
	}
	if s.order == nil {
		switch {
		case binary.LittleEndian.Uint32(h[:])&^0xff == blkTraceMagic:
			s.order = binary.LittleEndian
		case binary.BigEndian.Uint32(h[:])&^0xff == blkTraceMagic:
			s.order = binary.BigEndian
		default:
			p.err = fmt.Errorf("%s: not a blktrace file (no blk_io_trace magic)", s.file)
			return false
		}
	}
	o := s.order
	if o.Uint32(h[0:])&^0xff != blkTraceMagic {
		p.err = fmt.Errorf("%s: record %d (byte %d): bad magic %#x: the file is corrupt", s.file, s.n+1, s.n*blkTraceSize, o.Uint32(h[0:]))
		return false
	}
	s.n++
	r := blkRaw{
		seq: o.Uint32(h[4:]), time: o.Uint64(h[8:]), sector: o.Uint64(h[16:]), bytes: o.Uint32(h[24:]),
		action: o.Uint32(h[28:]), pid: o.Uint32(h[32:]), device: o.Uint32(h[36:]), cpu: o.Uint32(h[40:]),
		errno: o.Uint16(h[44:]),
	}
	if n := int(o.Uint16(h[46:])); n > 0 {
		if n > blkTraceMaxPDU {
			p.err = fmt.Errorf("%s: record %d: payload of %d bytes: the file is corrupt", s.file, s.n, n)
			return false
		}
		r.pdu = make([]byte, n)
		if _, err := io.ReadFull(s.r, r.pdu); err != nil {
			p.err = fmt.Errorf("%s: record %d: payload cut short: %w", s.file, s.n, err)
			return false
		}
	}
	s.next, s.ok = r, true
	return true
}

// Scan reads the next record.
func (p *BlktraceReader) Scan() bool {
	if p.req.covered(&p.rec, &p.pending) {
		return true
	}
	if p.held != nil {
		raw := *p.held
		p.held = nil
		p.rec = Record{}
		if p.take(&raw) {
			return true
		}
	}
	for p.err == nil && len(p.srcs) > 0 {
		s := p.srcs[0]
		raw := s.next
		if p.read(s) {
			heap.Fix(&p.srcs, 0)
		} else {
			heap.Pop(&p.srcs)
		}
		p.rec = Record{}
		if p.take(&raw) {
			return true
		}
	}
	return false
}

// take turns one raw record into p.rec; false if it makes no record.
func (p *BlktraceReader) take(r *blkRaw) bool {
	dev := event.DevFromKernel(uint64(r.device))
	c := blkCPU{dev, r.cpu}
	if last, ok := p.lastSeq[c]; ok && r.seq > last+1 {
		p.lastSeq[c] = r.seq
		p.rec.Kind, p.rec.N = KindLost, int64(r.seq-last-1)
		held := *r // the record itself is taken on the next Scan
		p.held = &held
		return true
	}
	p.lastSeq[c] = r.seq
	if r.action&blkTCNotify != 0 {
		if r.action&0xffff == blkTNProcess {
			if i := bytes.IndexByte(r.pdu, 0); i >= 0 {
				r.pdu = r.pdu[:i]
			}
			p.names[r.pid] = string(r.pdu)
		}
		return false
	}
	code := int(r.action & 0xffff)
	if code < 1 || code > len(blkTraceLetters) || r.action&blkTCPC != 0 {
		return false // driver data, aborts, and SCSI passthrough
	}
	a := blkAction{
		dev: dev, time: int64(r.time), pid: r.pid, comm: p.names[r.pid], action: blkTraceLetters[code-1],
		sector: int64(r.sector), sectors: int64(r.bytes >> 9), errno: int32(r.errno),
	}
	// As blkparse's fill_rwbs.
	switch {
	case r.action&blkTCDiscard != 0:
		a.op = event.Discard
	case r.action&blkTCWrite != 0:
		a.op = event.Write
	case r.bytes > 0:
		a.op = event.Read
	}
	if r.action&blkTCFlush != 0 {
		a.flags |= event.FlagPreflush
		if a.op == event.Other {
			a.op = event.Flush
		}
	}
	for _, f := range []struct {
		bit  uint32
		flag event.Flags
	}{{blkTCFUA, event.FlagFUA}, {blkTCAhead, event.FlagReadahead}, {blkTCSync, event.FlagSync}, {blkTCMeta, event.FlagMeta}} {
		if r.action&f.bit != 0 {
			a.flags |= f.flag
		}
	}
	if r.bytes == 0 && (a.op == event.Flush || a.op == event.Other) {
		a.sector = -1
	}
	if a.action == 'X' && len(r.pdu) >= 8 {
		a.split = int64(binary.BigEndian.Uint64(r.pdu)) // the kernel writes it big-endian
	}
	if a.action == 'A' && len(r.pdu) >= 16 {
		// struct blk_io_trace_remap, big-endian: device_from, device_to,
		// sector_from.
		a.fromDev = event.DevFromKernel(uint64(binary.BigEndian.Uint32(r.pdu)))
		a.fromSector = int64(binary.BigEndian.Uint64(r.pdu[8:]))
	}
	if p.req.add(&a, &p.rec.Event) {
		p.rec.Kind = KindEvent
		p.pending = true
		return true
	}
	return false
}

// Record returns the record read by the last Scan.
func (p *BlktraceReader) Record() *Record { return &p.rec }

// Err returns the first error reading the files.
func (p *BlktraceReader) Err() error { return p.err }

// Counts is what rebuilding requests saw (see BlkparseReader.Counts).
func (p *BlktraceReader) Counts() BlkCounts { return p.req.counts() }
