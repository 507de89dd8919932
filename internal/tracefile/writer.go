package tracefile

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/ioshape/ioshape/internal/event"
)

const (
	magic        = "IOSHAPE\x00"
	trailerMagic = "IOSHEND\x00"
	preambleLen  = 16
	frameLen     = 16
	trailerLen   = 16
	frameMagic   = 0xC5

	kindHeader = 1
	kindEvents = 2
	kindFooter = 3
	// kindSummary is a JSON array of event.Summary rows (record --summary).
	kindSummary = 4
	// kindColumns holds events as columns (version 3; kindEvents holds them
	// as varint rows, as version 1 wrote them).
	kindColumns = 5

	// maxChunk bounds what a reader will allocate for one chunk, so a corrupt
	// length cannot make it allocate gigabytes.
	maxChunk = 64 << 20
	// eventsPerChunk keeps chunks well under maxChunk (an event encodes to at
	// most ~90 bytes).
	eventsPerChunk = 1 << 16
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// PartialSuffix marks a trace still being written, or cut short.
const PartialSuffix = ".partial"

// Writer writes a trace file. It writes to path+".partial" and renames the
// file to path in Close, so a finished trace appears atomically and a crash
// leaves a readable .partial file.
type Writer struct {
	f         *os.File
	path      string
	enc       *columnEncoder
	zenc      *zstd.Encoder
	raw, comp []byte
	off       int64
	events    int64
	summaries []event.Summary // buffered until the next Flush
	rows      int64
	lastFlush time.Time
	closed    bool
}

// Create starts a trace at path. The header's format version is set here.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.OpenFile(path+PartialSuffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	// Held while the file is written, so a listing can tell a recording
	// in progress from one cut short (InProgress).
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	zenc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{f: f, path: path, enc: newColumnEncoder(), zenc: zenc, lastFlush: time.Now()}
	// Each trace is written as the lowest version that reads it: a summary
	// trace (no events) needs one that knows summary chunks, events need
	// one that knows event columns.
	version := uint16(3)
	if h.Target.Summary {
		version = 2
	}
	var pre [preambleLen]byte
	copy(pre[:], magic)
	binary.LittleEndian.PutUint16(pre[8:], version)
	if err := w.write(pre[:]); err != nil {
		w.abandon()
		os.Remove(path + PartialSuffix) // nothing readable: leave nothing
		return nil, err
	}
	h.FormatVersion = int(version)
	if err := w.writeJSON(kindHeader, h); err != nil {
		w.abandon()
		os.Remove(path + PartialSuffix)
		return nil, err
	}
	return w, nil
}

// Path is where the finished trace will be.
func (w *Writer) Path() string { return w.path }

// Events is the number of events written so far.
func (w *Writer) Events() int64 { return w.events }

// Write adds an event. It is buffered until the next Flush, which happens by
// itself every 65,536 events.
func (w *Writer) Write(e *event.Event) error {
	w.enc.add(e)
	w.events++
	if w.enc.n >= eventsPerChunk {
		return w.Flush()
	}
	return nil
}

// WriteSummary adds a summary row, buffered until the next Flush.
func (w *Writer) WriteSummary(s *event.Summary) error {
	w.summaries = append(w.summaries, *s)
	w.rows++
	if len(w.summaries) >= summariesPerChunk {
		return w.Flush()
	}
	return nil
}

// summariesPerChunk keeps summary chunks well under maxChunk (a row's JSON
// is at most ~5 KB).
const summariesPerChunk = 4096

// FlushIfDue flushes if the last flush was at least d ago.
func (w *Writer) FlushIfDue(d time.Duration) error {
	if time.Since(w.lastFlush) < d {
		return nil
	}
	return w.Flush()
}

// Flush writes buffered events as one chunk, and buffered summary rows as
// another.
func (w *Writer) Flush() error {
	w.lastFlush = time.Now()
	if len(w.summaries) > 0 {
		b, err := json.Marshal(w.summaries)
		if err != nil {
			return err
		}
		w.summaries = w.summaries[:0]
		if err := w.writeChunk(kindSummary, b); err != nil {
			return err
		}
	}
	if w.enc.n == 0 {
		return nil
	}
	w.raw = w.enc.payload(w.raw[:0])
	w.enc.reset()
	return w.writeChunk(kindColumns, w.raw)
}

// Close writes the footer, syncs and renames the file into place. Events in
// the footer is filled in here.
func (w *Writer) Close(ft Footer) error {
	if w.closed {
		return nil
	}
	if err := w.Flush(); err != nil {
		w.abandon()
		return err
	}
	ft.Events = w.events
	ft.SummaryRows = w.rows
	footerAt := w.off
	if err := w.writeJSON(kindFooter, ft); err != nil {
		w.abandon()
		return err
	}
	var tr [trailerLen]byte
	copy(tr[:], trailerMagic)
	binary.LittleEndian.PutUint64(tr[8:], uint64(footerAt))
	if err := w.write(tr[:]); err != nil {
		w.abandon()
		return err
	}
	w.closed = true
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	return os.Rename(w.path+PartialSuffix, w.path)
}

// Abandon closes the file without a footer, as a crash would, leaving the
// .partial file as it stands (for tests of what readers make of one).
func (w *Writer) Abandon() { w.abandon() }

// abandon closes the file, leaving the .partial file for inspection.
func (w *Writer) abandon() {
	if !w.closed {
		w.closed = true
		w.f.Close()
	}
}

func (w *Writer) writeJSON(kind byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.writeChunk(kind, b)
}

func (w *Writer) writeChunk(kind byte, raw []byte) error {
	w.comp = w.zenc.EncodeAll(raw, w.comp[:0])
	if len(w.comp) > maxChunk || len(raw) > maxChunk {
		return fmt.Errorf("chunk of %d bytes is over the format's limit", len(raw))
	}
	var fr [frameLen]byte
	fr[0] = frameMagic
	fr[1] = kind
	binary.LittleEndian.PutUint32(fr[4:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(fr[8:], uint32(len(w.comp)))
	binary.LittleEndian.PutUint32(fr[12:], crc32.Checksum(w.comp, crcTable))
	if err := w.write(fr[:]); err != nil {
		return err
	}
	return w.write(w.comp)
}

func (w *Writer) write(b []byte) error {
	n, err := w.f.Write(b)
	w.off += int64(n)
	return err
}
