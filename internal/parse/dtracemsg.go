package parse

import (
	"regexp"
	"strconv"
	"strings"
)

// MessageKind classifies a line dtrace(1) writes to stderr.
type MessageKind int

const (
	MsgOther        MessageKind = iota
	MsgDrop                     // principal buffer drops on a CPU: events lost
	MsgAggDrop                  // aggregation drops
	MsgDynDrop                  // dynamic variable drops: in-flight state lost
	MsgSpecDrop                 // speculative drops and failed speculations
	MsgRuntimeError             // "error on enabled probe ID …": a probe's action failed
	MsgSIP                      // System Integrity Protection restricts DTrace
	MsgNoProbes                 // a probe description matched nothing
	MsgFatal                    // dtrace could not start or stopped
	MsgNotice                   // informational ("matched N probes")
)

// Message is one parsed stderr line.
type Message struct {
	Kind MessageKind
	N    int64 // how many, for drops
	Text string
}

// The formats are libdtrace's (dt_handle.c, dtrace.c):
// "%llu %sdrop%s on CPU %d", "%llu %s%s%s" for status drops, and
// "error on enabled probe ID %u (ID %u: %s:%s:%s:%s): %s%s in %s%s". With
// -x droptags a "[DTRACEDROP_…] " tag comes first.
var (
	dropRe    = regexp.MustCompile(`^(\d+) (aggregation )?drops? on CPU \d+`)
	statusRe  = regexp.MustCompile(`^(\d+) (dynamic variable drops?|speculative drops?|failed speculations?)`)
	dropTagRe = regexp.MustCompile(`^\[DTRACEDROP_[A-Z]+\] `)
)

// ParseDTraceMessage reads one line of dtrace's stderr.
func ParseDTraceMessage(line string) Message {
	s := strings.TrimSpace(line)
	m := Message{Text: s}
	body, ok := strings.CutPrefix(s, "dtrace: ")
	if !ok {
		return m
	}
	body = dropTagRe.ReplaceAllString(body, "")
	switch {
	case strings.Contains(body, "System Integrity Protection is on") || strings.HasPrefix(body, "system integrity protection"):
		m.Kind = MsgSIP
	case dropRe.MatchString(body):
		g := dropRe.FindStringSubmatch(body)
		m.N, _ = strconv.ParseInt(g[1], 10, 64)
		m.Kind = MsgDrop
		if g[2] != "" {
			m.Kind = MsgAggDrop
		}
	case statusRe.MatchString(body):
		g := statusRe.FindStringSubmatch(body)
		m.N, _ = strconv.ParseInt(g[1], 10, 64)
		m.Kind = MsgSpecDrop
		if strings.HasPrefix(g[2], "dynamic variable") {
			m.Kind = MsgDynDrop
		}
	case strings.HasPrefix(body, "error on enabled probe ID"):
		m.Kind, m.N = MsgRuntimeError, 1
	case strings.Contains(body, "does not match any probes"), strings.HasPrefix(body, "no probes matched"):
		m.Kind = MsgNoProbes
	case strings.HasPrefix(body, "failed to"), strings.HasPrefix(body, "invalid probe specifier"),
		strings.HasPrefix(body, "processing aborted"), strings.Contains(body, "cannot control executables"):
		m.Kind = MsgFatal
	case strings.HasPrefix(body, "description '"), strings.HasPrefix(body, "script '"),
		strings.HasPrefix(body, "pid ") && (strings.Contains(body, "exited") || strings.Contains(body, "terminated")):
		m.Kind = MsgNotice
	}
	return m
}
