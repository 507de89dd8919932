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
)

var (
	fsUsageLine  = regexp.MustCompile(`^\d\d:\d\d:\d\d(\.\d+)?\s+\S`)
	bpftraceLine = regexp.MustCompile(`^(B|S) \d+ \d+ \d+ `)
)

// Detect guesses the format from a file's first lines.
func Detect(lines []string) Format {
	var fs, bt int
	for _, l := range lines {
		switch {
		case fsUsageLine.MatchString(l):
			fs++
		case bpftraceLine.MatchString(l), strings.HasPrefix(l, "Attaching "), l == "READY":
			bt++
		}
	}
	switch {
	case fs > bt && fs > 0:
		return FormatFsUsage
	case bt > 0:
		return FormatBpftrace
	}
	return FormatUnknown
}
