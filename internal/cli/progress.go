package cli

import (
	"fmt"
	"time"

	"golang.org/x/term"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/units"
)

// readProgress shows how far a long read of a trace has got, on stderr and
// only when it is a terminal, for traces big enough to take a while.
type readProgress struct {
	g    *globals
	stop chan struct{}
	done chan struct{}
}

const progressMinBytes = 32 << 20

// watch reports a pass's progress until the returned function is called.
func (g *globals) watch(p analysis.Step) func() {
	f := fileOf(g.stderr)
	if _, total := p.Progress(); f == nil || !term.IsTerminal(int(f.Fd())) || total < progressMinBytes {
		return func() {}
	}
	rp := &readProgress{g: g, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(rp.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-rp.stop:
				fmt.Fprint(g.stderr, "\r\033[K")
				return
			case <-t.C:
				done, total := p.Progress()
				fmt.Fprintf(g.stderr, "\r\033[K%s %s: %s of %s", p.What, p.File, units.Percent(float64(done)/float64(total)), units.Bytes(total))
			}
		}
	}()
	return func() { close(rp.stop); <-rp.done }
}
