package parse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxLine is the longest line a parser reads; a longer one (no tracer
// writes one) is skipped and reported in-band, in constant memory.
const maxLine = 1 << 20

// lineScanner is what every tracer-output reader shares: lines in, one
// Record per non-blank line, a bad line as an in-band *SyntaxError.
type lineScanner struct {
	br   *bufio.Reader
	file string
	line int
	rec  Record
	err  error
}

func newLineScanner(r io.Reader, file string) lineScanner {
	return lineScanner{br: bufio.NewReaderSize(r, maxLine), file: file}
}

// scan reads the next non-blank line into rec with parse, which fills rec
// and returns a message for a line it cannot read.
func (l *lineScanner) scan(parse func([]byte) string) bool {
	for {
		b, err := l.br.ReadSlice('\n')
		if len(b) == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				l.err = err
			}
			return false
		}
		l.line++
		if errors.Is(err, bufio.ErrBufferFull) {
			l.skipRest()
			l.rec = Record{Kind: KindError, Err: &SyntaxError{File: l.file, Line: l.line, Msg: "line longer than 1 MiB: skipped"}}
			return true
		}
		b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		l.rec = Record{}
		if msg := parse(b); msg != "" {
			l.rec = Record{Kind: KindError, Err: &SyntaxError{File: l.file, Line: l.line, Msg: msg}}
		}
		return true
	}
}

// skipRest discards the rest of an overlong line.
func (l *lineScanner) skipRest() {
	for {
		_, err := l.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err != nil && !errors.Is(err, io.EOF) {
				l.err = err
			}
			return
		}
	}
}

// Record returns the record read by the last Scan.
func (l *lineScanner) Record() *Record { return &l.rec }

// Err returns the first error of the underlying reader.
func (l *lineScanner) Err() error { return l.err }
