package session

import (
	"bufio"
	"io"
	"sync"

	"github.com/ioshape/ioshape/internal/parse"
)

// RecordScanner is what the tracers' output readers have in common.
type RecordScanner interface {
	Scan() bool
	Record() *parse.Record
}

// batchSize is how many records go to the loop at once.
const batchSize = 256

// StreamRecords parses a tracer's output and sends its records in batches.
// A batch goes out when it is full, and also whenever the parser has used
// up the input it has and is about to wait for more: a quiet tracer's few
// records (its readiness, a launch's last I/O) must not wait for a batch to
// fill.
func StreamRecords(p RecordScanner, flushOnRead *FlushingReader, send func([]parse.Record)) {
	batch := make([]parse.Record, 0, batchSize)
	flush := func() {
		if len(batch) > 0 {
			send(batch)
			batch = make([]parse.Record, 0, batchSize)
		}
	}
	if flushOnRead != nil {
		flushOnRead.flush = flush
	}
	for p.Scan() {
		batch = append(batch, *p.Record())
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
}

// FlushingReader is a tracer's output that hands the records parsed so far
// to the loop before each read: the parser reads only when it has nothing
// left to parse, so that is when they should go.
type FlushingReader struct {
	r     io.Reader
	flush func()
}

// NewFlushingReader wraps a tracer's output (and, if raw is set, copies
// what is read to it).
func NewFlushingReader(r io.Reader, raw io.Writer) *FlushingReader {
	if raw != nil {
		r = io.TeeReader(r, raw)
	}
	return &FlushingReader{r: r}
}

func (f *FlushingReader) Read(p []byte) (int, error) {
	if f.flush != nil {
		f.flush()
	}
	return f.r.Read(p)
}

// Fan merges the record batches of several goroutines (a tracer's stdout,
// its stderr, a second tracer) into one channel, which closes once every
// one of them has returned.
type Fan struct {
	out    chan []parse.Record
	wg     sync.WaitGroup
	sealed sync.Once
}

// NewFan makes an empty Fan; add sources with Go, then Seal.
func NewFan() *Fan { return &Fan{out: make(chan []parse.Record, 64)} }

// Go runs a source. It may be called from a running source (a tracer that
// starts another on the way) as well as before Seal.
func (f *Fan) Go(source func(send func([]parse.Record))) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		source(func(b []parse.Record) { f.out <- b })
	}()
}

// Seal says every initial source has been added: the channel closes once
// they (and any they added) have returned.
func (f *Fan) Seal() {
	f.sealed.Do(func() {
		go func() {
			f.wg.Wait()
			close(f.out)
		}()
	})
}

// Records is the merged channel.
func (f *Fan) Records() <-chan []parse.Record { return f.out }

// ScanLines calls fn for each line of r until it ends: for a tracer's
// stderr, drained in its own goroutine so that a full pipe cannot block it.
func ScanLines(r io.Reader, fn func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fn(sc.Text())
	}
	io.Copy(io.Discard, r) // a line past the limit: keep draining
}
