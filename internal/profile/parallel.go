package profile

import (
	"sync"

	"github.com/ioshape/ioshape/internal/event"
)

// parallel runs each layer's half of a Builder on its own goroutine. Each
// half takes its layer's events in file order, as on one goroutine, so
// the result is the same; only the two layers' work overlaps.
type parallel struct {
	halves [2]*layerHalf
	batch  [2][]event.Event
	full   [2]chan []event.Event
	free   [2]chan []event.Event
	done   sync.WaitGroup
}

const (
	parallelBatch   = 1024 // events per hand-over
	parallelBatches = 4    // per layer, in flight or being filled
)

func startParallel(halves [2]*layerHalf) *parallel {
	p := &parallel{halves: halves}
	for l, h := range halves {
		p.full[l] = make(chan []event.Event, parallelBatches)
		p.free[l] = make(chan []event.Event, parallelBatches)
		for range parallelBatches - 1 {
			p.free[l] <- make([]event.Event, 0, parallelBatch)
		}
		p.batch[l] = make([]event.Event, 0, parallelBatch)
		p.done.Add(1)
		go func(full <-chan []event.Event, free chan<- []event.Event) {
			defer p.done.Done()
			for b := range full {
				for i := range b {
					h.add(&b[i])
				}
				free <- b[:0]
			}
		}(p.full[l], p.free[l])
	}
	return p
}

// send hands an event to its layer's goroutine.
func (p *parallel) send(e *event.Event) {
	l := e.Layer
	p.batch[l] = append(p.batch[l], *e)
	if len(p.batch[l]) == parallelBatch {
		p.full[l] <- p.batch[l]
		p.batch[l] = <-p.free[l]
	}
}

// wait hands over what is left and waits for both layers to take it all.
func (p *parallel) wait() {
	for l := range p.full {
		if len(p.batch[l]) > 0 {
			p.full[l] <- p.batch[l]
		}
		close(p.full[l])
	}
	p.done.Wait()
}
