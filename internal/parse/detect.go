package parse

import (
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
)

var (
	fsUsageLine  = regexp.MustCompile(`^\d\d:\d\d:\d\d(\.\d+)?\s+\S`)
	bpftraceLine = regexp.MustCompile(`^(B|S) \d+ \d+ \d+ `)
	dtraceLine   = regexp.MustCompile(`^(I -?\d+ |C [a-z_]+ -?\d+ )`)
)

// Detect guesses the format from a file's first lines.
func Detect(lines []string) Format {
	var fs, bt, dt int
	for _, l := range lines {
		switch {
		case fsUsageLine.MatchString(l):
			fs++
		case l == "READY dtrace", dtraceLine.MatchString(l):
			dt++
		case bpftraceLine.MatchString(l), strings.HasPrefix(l, "Attaching "), l == "READY":
			bt++
		}
	}
	switch {
	case fs > 0 && fs >= bt && fs >= dt:
		return FormatFsUsage
	case dt > 0 && dt >= bt:
		return FormatDTrace
	case bt > 0:
		return FormatBpftrace
	}
	return FormatUnknown
}
