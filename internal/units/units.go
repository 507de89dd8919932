package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
)

// Bytes formats a byte count with binary units ("1.5 MiB").
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + string("KMGTPE"[exp]) + "iB"
}

// Count formats an integer with thousands separators.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Micros formats a duration given in microseconds.
func Micros(us float64) string {
	switch {
	case us >= 1e6:
		return trimFloat(us/1e6, 2) + " s"
	case us >= 1e3:
		return trimFloat(us/1e3, 2) + " ms"
	default:
		return trimFloat(us, 1) + " µs"
	}
}

// Percent formats a 0..1 fraction.
func Percent(f float64) string {
	return trimFloat(f*100, 1) + "%"
}

func trimFloat(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Num formats a float with up to prec decimals.
func Num(v float64, prec int) string { return trimFloat(v, prec) }

// Pid is a process ID as text: "–" for one known only by its name.
func Pid(pid uint32) string {
	if !event.KnownPid(pid) {
		return "–"
	}
	return strconv.FormatUint(uint64(pid), 10)
}
