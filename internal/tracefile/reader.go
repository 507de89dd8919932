package tracefile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

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
	// The next chunks are read on another goroutine, and decompressed
	// (and, for NextBatch, decoded) on as many as there are cores, while
	// this one takes the current: the events come in the same order.
	ahead    chan *chunkJob // read chunks, in file order
	work     chan *chunkJob // read chunks to decompress, in any order
	jobs     chan *chunkJob // free jobs: how many chunks may be in hand at once
	quit     chan struct{}
	finished sync.WaitGroup
	holding  *chunkJob // the chunk being taken
	batch    bool      // NextBatch: workers decode the events too
	// onSummary takes a summary trace's rows (OnSummary).
	onSummary func(*event.Summary)
	stopped   string // why reading stopped before the end, for CutNote
	// Earlier passes over the same open file (Again), for Access.
	passes     int
	readBefore int64
}

// chunkJob is one chunk read ahead: read and checked in file order, then
// decompressed (and decoded) by a worker; done is closed when it is ready.
type chunkJob struct {
	kind   byte
	rawLen uint32
	comp   []byte
	raw    []byte
	events []event.Event // NextBatch: the chunk's events
	dec    decoder
	err    error // reading, checking or decompressing it
	badAt  bool  // NextBatch: the events after these are malformed
	start  int64 // the position before it
	off    int64 // the position after it
	atEOF  bool  // on a read error: nothing follows in the file
	done   chan struct{}
}

// chunksInHand bounds the chunks read ahead, being worked on or taken:
// memory stays that of a few chunks whatever the trace's length.
func chunksInHand(workers int) int { return workers + 1 }

// readAhead reads chunks until the footer, the end or an error, handing
// them to the workers and, in order, to Next; it stops early when Close
// asks.
func (r *Reader) readAhead(off int64) {
	defer r.finished.Done()
	defer close(r.work)
	defer close(r.ahead)
	for {
		var j *chunkJob
		select {
		case j = <-r.jobs:
		case <-r.quit:
			return
		}
		j.done = make(chan struct{})
		kind, rawLen, err := readFrame(r.br, &j.comp)
		j.kind, j.rawLen, j.err = kind, rawLen, err
		j.start, j.off, j.atEOF = off, off, false
		if err == nil {
			off += frameLen + int64(len(j.comp))
			r.read.Store(off)
			j.off = off
			r.work <- j // never blocks: it holds as many as there are jobs
		} else {
			j.atEOF = r.atEOF()
			close(j.done)
		}
		select {
		case r.ahead <- j:
		case <-r.quit:
			return
		}
		// j is the workers' now: what it was read as decides.
		if err != nil || kind == kindFooter {
			return
		}
	}
}

// decompress is a worker: it decompresses chunks, and decodes event
// chunks' events for NextBatch.
func (r *Reader) decompress() {
	defer r.finished.Done()
	zdec, err := newChunkDecoder()
	if err != nil {
		for j := range r.work {
			j.err = err
			close(j.done)
		}
		return
	}
	defer zdec.Close()
	for j := range r.work {
		j.raw, j.err = inflate(zdec, j.comp, j.rawLen, j.raw)
		if j.err == nil && r.batch && isEvents(j.kind) {
			j.decodeEvents()
		}
		close(j.done)
	}
}

// decodeEvents decodes an event chunk whole; on malformed events it keeps
// those before them and sets badAt.
func (j *chunkJob) decodeEvents() {
	j.events, j.badAt = j.events[:0], false
	if err := j.dec.init(j.kind, j.raw); err != nil {
		j.badAt = true
		return
	}
	// Every event of a varint row takes at least 14 bytes: a count the
	// chunk cannot hold is not allocated for.
	n := int(min(j.dec.left, uint64(len(j.dec.buf)/14+1)))
	if j.dec.columns { // a count the columns bound
		n = int(j.dec.left)
	}
	if cap(j.events) < n+1 { // the loop appends one past the last event
		j.events = make([]event.Event, 0, n+1)
	}
	for {
		j.events = append(j.events, event.Event{})
		if !j.dec.next(&j.events[len(j.events)-1]) {
			j.events = j.events[:len(j.events)-1]
			break
		}
	}
	j.badAt = j.dec.err != nil
}

// isEvents reports whether a chunk of this kind holds events.
func isEvents(kind byte) bool { return kind == kindEvents || kind == kindColumns }

// Open opens a trace and reads its header and, when the recording
// finished, its footer. Errors name the file and say what is wrong.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &Reader{f: f, name: path, passes: 1}
	if err := r.init(); err != nil {
		r.stop()
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

// Again returns a reader of the same open file from its start, for a
// second pass over a trace without opening it again; r is spent, and the
// new reader is the one to close (also when Again fails).
func (r *Reader) Again() (*Reader, error) {
	r.stop()
	n := &Reader{f: r.f, name: r.name, passes: r.passes + 1, readBefore: r.readBefore + r.read.Load()}
	r.f = nil
	if _, err := n.f.Seek(0, io.SeekStart); err != nil {
		return n, fmt.Errorf("%s: %w", n.name, err)
	}
	if err := n.init(); err != nil {
		return n, fmt.Errorf("%s: %w", n.name, err)
	}
	return n, nil
}

// Access is what one open of a trace file read, told to the observer (see
// Observe) when it is closed.
type Access struct {
	Path   string
	Passes int   // reads from the start: 1, or more through Again
	Read   int64 // bytes read through the events, all passes together
	Size   int64 // the file's size
}

var observer atomic.Pointer[func(Access)]

// Observe calls fn with each trace file's Access as its reader closes, so
// that tests can count how often a command opens and reads a trace; nil
// stops it.
func Observe(fn func(Access)) {
	if fn == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&fn)
}

func (r *Reader) init() error {
	zdec, err := newChunkDecoder()
	if err != nil {
		return err
	}
	r.zdec = zdec
	var pre [preambleLen]byte
	if n, err := io.ReadFull(r.f, pre[:]); err != nil {
		// A file that starts as a trace does but ends within its first
		// 16 bytes is a cut trace, not some other file.
		if n > 0 && strings.HasPrefix(magic, string(pre[:min(n, len(magic))])) {
			return fmt.Errorf("truncated trace: %d bytes, cut within its preamble", n)
		}
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
	if len(raw) > maxMetaChunk {
		return fmt.Errorf("corrupt trace: a header of %d bytes (ioshape writes well under %d)", len(raw), maxMetaChunk)
	}
	cut, err := decodeJSONBounded(raw, &r.meta.Header)
	if err != nil {
		return fmt.Errorf("corrupt trace header: %w", err)
	}
	ft, ftCut, err := r.readFooter()
	if err != nil {
		return err
	}
	r.meta.Footer = ft
	if cut || ftCut {
		r.meta.Notes = append(r.meta.Notes, fmt.Sprintf("the trace's header or footer holds more than ioshape reads (%d entries a list, %d bytes a string): the rest was left out", maxJSONItems, maxJSONString))
	}
	return nil
}

// readFooter reads the footer through the trailer, or returns nil if the
// file has none (it was cut short).
func (r *Reader) readFooter() (*Footer, bool, error) {
	st, err := r.f.Stat()
	if err != nil {
		return nil, false, err
	}
	size := st.Size()
	r.size = size
	if size < r.off+trailerLen {
		return nil, false, nil
	}
	var tr [trailerLen]byte
	if _, err := r.f.ReadAt(tr[:], size-trailerLen); err != nil {
		return nil, false, err
	}
	if string(tr[:8]) != trailerMagic {
		return nil, false, nil
	}
	at := int64(binary.LittleEndian.Uint64(tr[8:]))
	if at < r.off || at >= size-trailerLen {
		return nil, false, errors.New("corrupt trace: footer offset out of range")
	}
	sr := bufio.NewReader(io.NewSectionReader(r.f, at, size-trailerLen-at))
	kind, raw, err := readChunk(sr, r.zdec, nil, nil)
	if err != nil || kind != kindFooter {
		return nil, false, errors.New("corrupt trace: unreadable footer")
	}
	if len(raw) > maxMetaChunk {
		return nil, false, fmt.Errorf("corrupt trace: a footer of %d bytes (ioshape writes well under %d)", len(raw), maxMetaChunk)
	}
	var ft Footer
	cut, err := decodeJSONBounded(raw, &ft)
	if err != nil {
		return nil, false, fmt.Errorf("corrupt trace footer: %w", err)
	}
	return &ft, cut, nil
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
	var comp []byte
	if compBuf != nil {
		comp = *compBuf
	}
	kind, rawLen, err := readFrame(br, &comp)
	if compBuf != nil {
		*compBuf = comp
	}
	if err != nil {
		return 0, nil, err
	}
	var dst []byte
	if rawBuf != nil {
		dst = *rawBuf
	}
	raw, err := inflate(zdec, comp, rawLen, dst)
	if err != nil {
		return 0, nil, err
	}
	if rawBuf != nil {
		*rawBuf = raw
	}
	return kind, raw, nil
}

// readFrame reads a chunk's frame and compressed body into *comp, and
// checks it; it returns the chunk's kind and decompressed length.
func readFrame(br *bufio.Reader, comp *[]byte) (byte, uint32, error) {
	var fr [frameLen]byte
	if _, err := io.ReadFull(br, fr[:]); err != nil {
		if err == io.EOF {
			return 0, 0, io.EOF
		}
		return 0, 0, errTruncated
	}
	if fr[0] != frameMagic {
		if string(fr[:8]) == trailerMagic {
			return 0, 0, io.EOF
		}
		return 0, 0, errors.New("corrupt trace: bad chunk frame")
	}
	rawLen := binary.LittleEndian.Uint32(fr[4:])
	compLen := binary.LittleEndian.Uint32(fr[8:])
	if rawLen > maxChunk || compLen > maxChunk {
		return 0, 0, errors.New("corrupt trace: chunk length out of range")
	}
	*comp = growTo(*comp, int(compLen))
	if _, err := io.ReadFull(br, *comp); err != nil {
		return 0, 0, errTruncated
	}
	if crc32.Checksum(*comp, crcTable) != binary.LittleEndian.Uint32(fr[12:]) {
		return 0, 0, errChecksum
	}
	return fr[1], rawLen, nil
}

// newChunkDecoder is a zstd decoder for one goroutine's chunks. It skips
// zstd's own checksum of the decompressed bytes: readFrame has checked the
// chunk's CRC-32C over the compressed ones, which the decompression
// determines.
func newChunkDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxChunk), zstd.IgnoreChecksum(true))
}

// inflate decompresses a chunk's body into dst's storage.
func inflate(zdec *zstd.Decoder, comp []byte, rawLen uint32, dst []byte) ([]byte, error) {
	raw, err := zdec.DecodeAll(comp, dst[:0])
	if err != nil || len(raw) != int(rawLen) {
		return dst, errors.New("corrupt trace: chunk does not decompress")
	}
	return raw, nil
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
	if r.stopped != "" {
		return r.stopped
	}
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
		j := r.advance(false)
		if j == nil {
			return false
		}
		if isEvents(j.kind) {
			if err := r.dec.init(j.kind, j.raw); err != nil {
				r.err = fmt.Errorf("%s: corrupt trace: %w (near byte %d)", r.name, err, r.off)
				return false
			}
		}
	}
}

// NextBatch returns the next chunk's events, decoded on another goroutine
// (chunks are decoded on as many cores as there are, and come in file
// order). They are valid until the next call. It returns nil at the end,
// or on an error (see Err). A reader is read with Next or NextBatch, not
// both.
func (r *Reader) NextBatch() []event.Event {
	for {
		j := r.advance(true)
		if j == nil {
			return nil
		}
		if !isEvents(j.kind) {
			continue
		}
		if j.badAt {
			r.err = fmt.Errorf("%s: corrupt trace: malformed events near byte %d", r.name, r.off)
			if len(j.events) == 0 {
				return nil
			}
			r.done = true
		}
		if len(j.events) > 0 {
			return j.events
		}
	}
}

// advance hands back the chunk taken last and takes the next, dealing
// with errors, summaries and the footer; nil at the end or on an error.
func (r *Reader) advance(batch bool) *chunkJob {
	if r.done || r.err != nil {
		return nil
	}
	if r.ahead == nil {
		r.start(batch)
	}
	if r.holding != nil {
		r.jobs <- r.holding // done with it: it may be filled again
		r.holding = nil
	}
	j, ok := <-r.ahead
	if !ok {
		r.done = true
		return nil
	}
	<-j.done
	r.holding = j
	err := j.err
	r.off = j.off
	if err != nil {
		r.off = j.start
	}
	switch {
	case err == io.EOF:
		r.done = true
		r.incomplete = r.meta.Footer == nil
		return nil
	case err == errTruncated || (err == errChecksum && r.meta.Footer == nil && j.atEOF):
		// A crash cut the last chunk: everything before it stands.
		r.done, r.incomplete = true, true
		return nil
	case err != nil && r.meta.Footer == nil:
		// An unfinished recording whose tail is not a chunk (zeros, as a
		// power cut leaves them): read up to the last valid chunk, and say
		// what was cut.
		r.done, r.incomplete = true, true
		r.cut = r.size - r.off
		return nil
	case err == errChecksum:
		// A damaged chunk in a finished trace: what came before it is
		// intact (each chunk is checked), so it stands, and the user is
		// told where reading stopped.
		r.done = true
		r.stopped = fmt.Sprintf("a chunk at byte %d of %d failed its checksum (the file is damaged): the trace is read up to it", r.off, r.size)
		return nil
	case err != nil:
		r.err = fmt.Errorf("%s: %w (near byte %d)", r.name, err, r.off)
		return nil
	}
	switch j.kind {
	case kindSummary:
		if err := r.summaries(j.raw); err != nil {
			r.err = fmt.Errorf("%s: corrupt trace: malformed summary near byte %d: %v", r.name, r.off, err)
			return nil
		}
	case kindFooter:
		r.done = true
		return nil
	}
	return j
}

// start starts the read-ahead and its workers.
func (r *Reader) start(batch bool) {
	// One core is the caller's: on two, one worker decodes while the
	// caller profiles (more would only contend with it).
	workers := max(1, min(runtime.GOMAXPROCS(0)-1, 4))
	n := chunksInHand(workers)
	r.batch = batch
	r.ahead, r.work, r.jobs = make(chan *chunkJob, n), make(chan *chunkJob, n), make(chan *chunkJob, n)
	r.quit = make(chan struct{})
	for range n {
		r.jobs <- &chunkJob{}
	}
	r.finished.Add(1 + workers)
	go r.readAhead(r.off)
	for range workers {
		go r.decompress()
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
	// Rows one at a time, from the chunk clamped to what a writer puts in
	// one (rows, and histogram buckets): never the chunk's rows at once.
	clamped, cut, err := clampJSON(raw, summariesPerChunk, maxJSONString)
	if err != nil {
		return err
	}
	if cut {
		return errTooManyRows
	}
	dec := json.NewDecoder(bytes.NewReader(clamped))
	if _, err := dec.Token(); err != nil { // [
		return err
	}
	var row event.Summary
	for dec.More() {
		row = event.Summary{}
		if err := dec.Decode(&row); err != nil {
			return err
		}
		r.onSummary(&row)
	}
	return nil
}

// Event returns the current event; it is overwritten by the next call to Next.
func (r *Reader) Event() *event.Event { return &r.ev }

// Err returns the error that stopped Next, if any.
func (r *Reader) Err() error { return r.err }

// stop ends the read-ahead and its workers.
func (r *Reader) stop() {
	if r.quit != nil {
		close(r.quit)
		r.finished.Wait()
		r.quit = nil
	}
	if r.zdec != nil {
		r.zdec.Close()
		r.zdec = nil
	}
}

// Close closes the file.
func (r *Reader) Close() error {
	r.stop()
	if r.f == nil {
		return nil
	}
	if fn := observer.Load(); fn != nil {
		(*fn)(Access{Path: r.name, Passes: r.passes, Read: r.readBefore + r.read.Load(), Size: r.size})
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// InProgress reports whether a trace file is being written now: its writer
// holds a lock on it (an unfinished file without one was cut short).
func InProgress(path string) bool {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	err = syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(fd, syscall.LOCK_UN)
		return false
	}
	return err == syscall.EWOULDBLOCK
}

// CountEvents reads a trace file's header and counts the events it holds
// as far as it can be read (for an unfinished one, which has no footer to
// say); the meta is there whenever the header could be read.
func CountEvents(path string) (Meta, int64, error) {
	r, err := Open(path)
	if err != nil {
		return Meta{}, 0, err
	}
	defer r.Close()
	var n int64
	for b := r.NextBatch(); b != nil; b = r.NextBatch() {
		n += int64(len(b))
	}
	return r.Meta(), n, r.Err()
}
