package cli

import (
	"fmt"
	"time"

	"golang.org/x/term"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// readProgress shows how far a long read of a trace has got, on stderr and
// only when it is a terminal, for traces big enough to take a while.
type readProgress struct {
	g    *globals
	stop chan struct{}
	done chan struct{}
}

const progressMinBytes = 32 << 20

// watch reports r's progress until the returned function is called. what
// names the step ("reading", "pass 2 of 3").
func watch(g *globals, r *tracefile.Reader, what string) func() {
	f := fileOf(g.stderr)
	if _, total := r.Progress(); f == nil || !term.IsTerminal(int(f.Fd())) || total < progressMinBytes {
		return func() {}
	}
	p := &readProgress{g: g, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				fmt.Fprint(g.stderr, "\r\033[K")
				return
			case <-t.C:
				done, total := r.Progress()
				fmt.Fprintf(g.stderr, "\r\033[K%s %s: %s of %s", what, r.Name(), report.Percent(float64(done)/float64(total)), report.Bytes(total))
			}
		}
	}()
	return func() { close(p.stop); <-p.done }
}
