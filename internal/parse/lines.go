package parse

import (
	"bufio"
	"bytes"
	"io"
)

// lineScanner is what every tracer-output reader shares: lines in, one
// Record per non-blank line, a bad line as an in-band *SyntaxError.
type lineScanner struct {
	sc   *bufio.Scanner
	file string
	line int
	rec  Record
	err  error
}

func newLineScanner(r io.Reader, file string) lineScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	return lineScanner{sc: sc, file: file}
}

// scan reads the next non-blank line into rec with parse, which fills rec
// and returns a message for a line it cannot read.
func (l *lineScanner) scan(parse func([]byte) string) bool {
	for l.sc.Scan() {
		l.line++
		b := l.sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		l.rec = Record{}
		if msg := parse(b); msg != "" {
			l.rec = Record{Kind: KindError, Err: &SyntaxError{File: l.file, Line: l.line, Msg: msg}}
		}
		return true
	}
	l.err = l.sc.Err()
	return false
}

// Record returns the record read by the last Scan.
func (l *lineScanner) Record() *Record { return &l.rec }

// Err returns the first error of the underlying reader.
func (l *lineScanner) Err() error { return l.err }
