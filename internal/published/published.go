package published

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/drive"
)

// SyntaxError is a line that is not what its format has there.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func syntaxf(line int, format string, args ...any) error {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ErrUnknown is text in none of the formats.
var ErrUnknown = errors.New("not benchmark results this reads: expected CrystalDiskMark's, KDiskMark's or AmorphousDiskMark's copied text, an ATTO Disk Benchmark table, or fio's JSON output")

// Parse reads results in any of the formats, found from the text itself;
// source names the file (kept in the provenance). The figures come back
// in the order given, each with its line.
func Parse(source string, text []byte) (*drive.Provenance, error) {
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
	var (
		p   *drive.Provenance
		err error
	)
	switch detect(text) {
	case "fio":
		p, err = parseFio(text)
	case "atto":
		p, err = parseATTO(lines(text))
	case "diskmark":
		p, err = parseDiskMark(lines(text))
	default:
		return nil, ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	if len(p.Tests) == 0 {
		return nil, fmt.Errorf("%s results with no figures in them: expected lines such as \"SEQ 1MiB (Q= 8, T= 1): 384.064 MB/s\"", p.Tool)
	}
	p.Source = source
	return p, nil
}

// detect names the format: fio's JSON begins with an object (after any
// warnings fio printed first); ATTO's table is named, or has transfer
// sizes with write and read columns; the DiskMarks have lines of tests.
func detect(text []byte) string {
	head := text[:min(len(text), 64<<10)]
	low := bytes.ToLower(head)
	switch {
	case bytes.Contains(low, []byte(`"fio version"`)):
		return "fio"
	case bytes.Contains(low, []byte("atto")) || bytes.Contains(low, []byte("transfer size")) && bytes.Contains(low, []byte("read")):
		return "atto"
	}
	for _, l := range lines(head) {
		if _, ok := testLabel(l.text); ok || headerRe.MatchString(l.text) {
			return "diskmark"
		}
	}
	return ""
}

// line is one line of pasted text, without a quote's "> " or a comment's
// "//" before it (results are often pasted into Markdown or code).
type line struct {
	n    int
	text string
}

func lines(text []byte) []line {
	var out []line
	for i, l := range strings.Split(string(text), "\n") {
		l = strings.TrimRight(l, "\r")
		t := strings.TrimSpace(l)
		for _, q := range []string{">", "//"} {
			if strings.HasPrefix(t, q) && !strings.HasPrefix(t, q+q) {
				t = strings.TrimSpace(strings.TrimPrefix(t, q))
				break
			}
		}
		out = append(out, line{n: i + 1, text: t})
	}
	return out
}

// number reads a figure as tools print it: "7,427.749", "0.561".
func number(s string) (float64, error) {
	return strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
}

// sizeBytes reads "1MiB", "4 KiB", "128K", "0.5 KB", "512 B", "1 GiB" —
// binary units: benchmarks' K and M are 1024 and 1024² whatever they
// print, except where noted.
func sizeBytes(num, unit string) (int64, bool) {
	v, err := number(num)
	if err != nil || !(v > 0) {
		return 0, false
	}
	mult := map[string]float64{"b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[strings.ToLower(unit)]
	if mult == 0 {
		return 0, false
	}
	b := int64(v * mult)
	return b, b > 0 && b <= 1<<50
}
