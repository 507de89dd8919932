package tracefile

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"github.com/ioshape/ioshape/internal/event"
)

// ErrNotTrace is returned for a file that is not an ioshape trace.
var ErrNotTrace = errors.New("not an ioshape trace file")

// Reader streams a trace's events in file order.
type Reader struct {
	f          *os.File
	br         *bufio.Reader
	name       string
	meta       Meta
	zdec       *zstd.Decoder
	dec        decoder
	comp, raw  []byte
	off        int64
	ev         event.Event
	err        error
	done       bool
	incomplete bool
	size       int64
	read       atomic.Int64 // bytes consumed, for progress from another goroutine
	cut        int64        // bytes left out at the end (see Cut)
	// The next chunks are read and decompressed on another goroutine
	// while this one decodes the current: two cores for one trace, the
	// events in the same order.
	ahead    chan chunkResult
	free     chan []byte // decompression buffers the decoder is done with
	quit     chan struct{}
	finished chan struct{}
	holding  []byte // the buffer of the chunk being decoded
	// onSummary takes a summary trace's rows (OnSummary).
	onSummary func(*event.Summary)
}

// chunkResult is one chunk read ahead.
type chunkResult struct {
	kind  byte
	raw   []byte
	err   error
	off   int64 // the position after it (before it, on an error)
	atEOF bool  // on an error: nothing follows in the file
}

// readAhead reads chunks until the footer, the end or an error, handing
// them to Next; it stops early when Close asks.
func (r *Reader) readAhead(off int64) {
	defer close(r.finished)
	defer close(r.ahead)
	var comp []byte
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.quit:
			return
		}
		kind, raw, err := readChunk(r.br, r.zdec, &comp, &buf)
		res := chunkResult{kind: kind, raw: raw, err: err, off: off}
		if err == nil {
			off += frameLen + int64(len(comp))
			r.read.Store(off)
			res.off = off
		} else {
			res.atEOF = r.atEOF()
		}
		select {
		case r.ahead <- res:
		case <-r.quit:
			return
		}
		if err != nil || kind == kindFooter {
			return
		}
	}
}

// Open opens a trace and reads its header and, when the recording
// finished, its footer. Errors name the file and say what is wrong.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &Reader{f: f, name: path}
	if err := r.init(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ReadMeta returns a trace's header and footer without reading its events.
func ReadMeta(path string) (Meta, error) {
	r, err := Open(path)
	if err != nil {
		return Meta{}, err
	}
	defer r.Close()
	return r.meta, nil
}

func (r *Reader) init() error {
	zdec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxChunk))
	if err != nil {
		return err
	}
	r.zdec = zdec
	var pre [preambleLen]byte
	if _, err := io.ReadFull(r.f, pre[:]); err != nil {
		return ErrNotTrace
	}
	if string(pre[:8]) != magic {
		return ErrNotTrace
	}
	if v := binary.LittleEndian.Uint16(pre[8:]); v > Version {
		return fmt.Errorf("trace format version %d is newer than this ioshape reads (%d): upgrade ioshape", v, Version)
	} else if v == 0 {
		return fmt.Errorf("corrupt trace: format version 0")
	}
	r.off = preambleLen
	r.br = bufio.NewReaderSize(r.f, 256<<10)
	kind, raw, err := r.chunk()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, errTruncated) {
			return errors.New("truncated trace: the header is missing")
		}
		return err
	}
	if kind != kindHeader {
		return errors.New("corrupt trace: the first chunk is not a header")
	}
	if err := json.Unmarshal(raw, &r.meta.Header); err != nil {
		return fmt.Errorf("corrupt trace header: %w", err)
	}
	ft, err := r.readFooter()
	if err != nil {
		return err
	}
	r.meta.Footer = ft
	return nil
}

// readFooter reads the footer through the trailer, or returns nil if the
// file has none (it was cut short).
func (r *Reader) readFooter() (*Footer, error) {
	st, err := r.f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	r.size = size
	if size < r.off+trailerLen {
		return nil, nil
	}
	var tr [trailerLen]byte
	if _, err := r.f.ReadAt(tr[:], size-trailerLen); err != nil {
		return nil, err
	}
	if string(tr[:8]) != trailerMagic {
		return nil, nil
	}
	at := int64(binary.LittleEndian.Uint64(tr[8:]))
	if at < r.off || at >= size-trailerLen {
		return nil, errors.New("corrupt trace: footer offset out of range")
	}
	sr := bufio.NewReader(io.NewSectionReader(r.f, at, size-trailerLen-at))
	kind, raw, err := readChunk(sr, r.zdec, nil, nil)
	if err != nil || kind != kindFooter {
		return nil, errors.New("corrupt trace: unreadable footer")
	}
	var ft Footer
	if err := json.Unmarshal(raw, &ft); err != nil {
		return nil, fmt.Errorf("corrupt trace footer: %w", err)
	}
	return &ft, nil
}

var errTruncated = errors.New("truncated")

// chunk reads the next chunk at the reader's position.
func (r *Reader) chunk() (byte, []byte, error) {
	kind, raw, err := readChunk(r.br, r.zdec, &r.comp, &r.raw)
	if err == nil {
		r.off += frameLen + int64(len(r.comp))
		r.read.Store(r.off)
	}
	return kind, raw, err
}

func readChunk(br *bufio.Reader, zdec *zstd.Decoder, compBuf, rawBuf *[]byte) (byte, []byte, error) {
	var fr [frameLen]byte
	if _, err := io.ReadFull(br, fr[:]); err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		return 0, nil, errTruncated
	}
	if fr[0] != frameMagic {
		if string(fr[:8]) == trailerMagic {
			return 0, nil, io.EOF
		}
		return 0, nil, errors.New("corrupt trace: bad chunk frame")
	}
	rawLen := binary.LittleEndian.Uint32(fr[4:])
	compLen := binary.LittleEndian.Uint32(fr[8:])
	if rawLen > maxChunk || compLen > maxChunk {
		return 0, nil, errors.New("corrupt trace: chunk length out of range")
	}
	var comp []byte
	if compBuf != nil {
		comp = growTo(*compBuf, int(compLen))
		*compBuf = comp
	} else {
		comp = make([]byte, compLen)
	}
	if _, err := io.ReadFull(br, comp); err != nil {
		return 0, nil, errTruncated
	}
	if crc32.Checksum(comp, crcTable) != binary.LittleEndian.Uint32(fr[12:]) {
		return 0, nil, errChecksum
	}
	var dst []byte
	if rawBuf != nil {
		dst = (*rawBuf)[:0]
	}
	raw, err := zdec.DecodeAll(comp, dst)
	if err != nil || len(raw) != int(rawLen) {
		return 0, nil, errors.New("corrupt trace: chunk does not decompress")
	}
	if rawBuf != nil {
		*rawBuf = raw
	}
	return fr[1], raw, nil
}

var errChecksum = errors.New("corrupt trace: chunk checksum mismatch")

func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// Progress reports how many of the file's bytes have been read; it may be
// called from another goroutine.
func (r *Reader) Progress() (done, total int64) { return r.read.Load(), r.size }

// Name is the file's path.
func (r *Reader) Name() string { return r.name }

// Meta returns the header and, if present, the footer.
func (r *Reader) Meta() Meta { return r.meta }

// Cut is how many bytes at the end of an unfinished trace could not be
// read (zeros, or half-written data) and were left out; 0 if none.
func (r *Reader) Cut() int64 { return r.cut }

// CutNote says what Cut left out, for the user ("" if nothing).
func (r *Reader) CutNote() string {
	if r.cut == 0 {
		return ""
	}
	return fmt.Sprintf("the last %d bytes of the file (from byte %d) are not a valid chunk (zeros, as a power cut leaves them, or half-written data): the trace is read up to the last complete chunk before them", r.cut, r.off)
}

// Incomplete reports that the events ended without a footer: the recorder
// stopped before finishing. It is meaningful once Next has returned false.
func (r *Reader) Incomplete() bool { return r.incomplete || r.meta.Footer == nil }

// Next advances to the next event.
func (r *Reader) Next() bool {
	for {
		if r.dec.next(&r.ev) {
			return true
		}
		if r.dec.err != nil {
			r.err = fmt.Errorf("%s: corrupt trace: malformed events near byte %d", r.name, r.off)
			return false
		}
		if r.done || r.err != nil {
			return false
		}
		if r.ahead == nil {
			r.ahead, r.free = make(chan chunkResult, 2), make(chan []byte, 3)
			r.quit, r.finished = make(chan struct{}), make(chan struct{})
			for range 3 {
				r.free <- nil
			}
			go r.readAhead(r.off)
		}
		if r.holding != nil {
			r.free <- r.holding // done with it: the reader may fill it again
			r.holding = nil
		}
		res, ok := <-r.ahead
		if !ok {
			r.done = true
			return false
		}
		kind, raw, err := res.kind, res.raw, res.err
		r.holding = raw
		atEOF := res.atEOF
		r.off = res.off
		switch {
		case err == io.EOF:
			r.done = true
			r.incomplete = r.meta.Footer == nil
			return false
		case err == errTruncated || (err == errChecksum && r.meta.Footer == nil && atEOF):
			// A crash cut the last chunk: everything before it stands.
			r.done, r.incomplete = true, true
			return false
		case err != nil && r.meta.Footer == nil:
			// An unfinished recording whose tail is not a chunk (zeros, as
			// a power cut leaves them): read up to the last valid chunk, and
			// say what was cut.
			r.done, r.incomplete = true, true
			r.cut = r.size - r.off
			return false
		case err != nil:
			r.err = fmt.Errorf("%s: %w (near byte %d)", r.name, err, r.off)
			return false
		}
		switch kind {
		case kindEvents:
			if err := r.dec.init(raw); err != nil {
				r.err = fmt.Errorf("%s: corrupt trace: %w (near byte %d)", r.name, err, r.off)
				return false
			}
		case kindSummary:
			if err := r.summaries(raw); err != nil {
				r.err = fmt.Errorf("%s: corrupt trace: malformed summary near byte %d: %v", r.name, r.off, err)
				return false
			}
		case kindFooter:
			r.done = true
			return false
		}
	}
}

func (r *Reader) atEOF() bool {
	_, err := r.br.Peek(1)
	return err == io.EOF
}

// OnSummary sets what is done with a summary trace's rows (record
// --summary): Next calls fn for each, in file order, as it reads their
// chunk. Without it they are skipped.
func (r *Reader) OnSummary(fn func(*event.Summary)) { r.onSummary = fn }

// Summary reports whether the trace holds summary rows rather than events.
func (r *Reader) Summary() bool { return r.meta.Header.Target.Summary }

func (r *Reader) summaries(raw []byte) error {
	if r.onSummary == nil {
		return nil
	}
	var rows []event.Summary
	if err := json.Unmarshal(raw, &rows); err != nil {
		return err
	}
	for i := range rows {
		r.onSummary(&rows[i])
	}
	return nil
}

// Event returns the current event; it is overwritten by the next call to Next.
func (r *Reader) Event() *event.Event { return &r.ev }

// Err returns the error that stopped Next, if any.
func (r *Reader) Err() error { return r.err }

// Close closes the file.
func (r *Reader) Close() error {
	if r.quit != nil {
		close(r.quit)
		<-r.finished
	}
	r.zdec.Close()
	return r.f.Close()
}
