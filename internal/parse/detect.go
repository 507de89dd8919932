package parse

import (
	"bytes"
	"regexp"
	"strings"
)

// Format is a kind of tracer output.
type Format string

const (
	FormatUnknown  Format = ""
	FormatFsUsage  Format = "fs_usage"
	FormatBpftrace Format = "bpftrace" // dscripts/ioshape.bt, as saved by record --raw-output
	FormatDTrace   Format = "dtrace"   // dscripts/ioshape.d output
	FormatBlkparse Format = "blkparse" // blkparse's default text output
	FormatBlktrace Format = "blktrace" // blktrace's binary per-CPU files
)

// IsSnoop reports whether f is one of the snoop tools' tables.
func (f Format) IsSnoop() bool {
	switch f {
	case FormatBiosnoop, FormatDisksnoop, FormatIosnoop, FormatPerfIosnoop, FormatBiosnoopBT:
		return true
	}
	return false
}

// IsCSV reports whether f is one of the block-trace corpora.
func (f Format) IsCSV() bool { return f == FormatMSR || f == FormatAlibaba || f == FormatTencent }

var (
	fsUsageLine  = regexp.MustCompile(`^\d\d:\d\d:\d\d(\.\d+)?\s+\S`)
	bpftraceLine = regexp.MustCompile(`^(B|S) \d+ \d+ \d+ `)
	dtraceLine   = regexp.MustCompile(`^(I -?\d+ |C [a-z_]+ -?\d+ )`)
	blkparseLine = regexp.MustCompile(`^\s*\d+,\d+\s+\d+\s+\d+\s+\d+\.\d+\s+\d+\s+[A-Za-z]\s`)
)

// Detect guesses the format from a text file's first lines.
func Detect(lines []string) Format {
	first := ""
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first == "fio version 2 iolog" || first == "fio version 3 iolog" {
		return FormatFioIolog
	}
	if f := DetectCSV(first); f != FormatUnknown {
		return f
	}
	var fs, bt, dt, bp int
	for _, l := range lines {
		switch {
		case blkparseLine.MatchString(l):
			bp++
		case fsUsageLine.MatchString(l):
			fs++
		case l == "READY dtrace", dtraceLine.MatchString(l):
			dt++
		case bpftraceLine.MatchString(l), strings.HasPrefix(l, "Attaching "), l == "READY":
			bt++
		}
	}
	switch {
	case bp > 0 && bp >= fs && bp >= bt && bp >= dt:
		return FormatBlkparse
	case fs > 0 && fs >= bt && fs >= dt:
		return FormatFsUsage
	case dt > 0 && dt >= bt:
		return FormatDTrace
	}
	// A snoop tool's header outranks bpftrace's "Attaching" banner, which
	// biosnoop.bt prints too.
	if f := snoopHeaderIn(lines); f != "" {
		return f
	}
	if bt > 0 {
		return FormatBpftrace
	}
	return FormatUnknown
}

// SummaryTool names a tool whose output summarises I/O (histograms,
// per-interval totals) rather than listing it, or "".
func SummaryTool(head []byte) string {
	switch {
	case bytes.Contains(head, []byte("------------- Distribution -------------")):
		return "a DTrace quantize histogram (bitesize.d, biolatency…)"
	case bytes.Contains(head, []byte(": count     distribution")):
		return "a bcc histogram (biolatency, bitesize…)"
	case bytes.Contains(head, []byte("%RAN %SEQ")):
		return "DTraceToolkit iopattern"
	case bytes.Contains(head, []byte("Reads Queued:")) && !blkparseLine.Match(head):
		return "a blkparse summary (-q or -s only)"
	}
	return ""
}
