package classify

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ioshape/ioshape/internal/event"
)

// fanOut reads src once and gives every event, in order, to each of
// workers, each on its own goroutine. A worker's profile builders see the
// same events in the same order as on one goroutine, so the results are
// the same; the workers' aggregation overlaps. On one core the workers
// run in turn on the caller's goroutine.
func fanOut(src Source, workers ...func(*event.Event)) error {
	if len(workers) == 1 || runtime.GOMAXPROCS(0) == 1 {
		return src(func(e *event.Event) {
			for _, w := range workers {
				w(e)
			}
		})
	}
	type batch struct {
		events []event.Event
		users  atomic.Int32 // workers still reading it
	}
	const size, inFlight = 1024, 4
	free := make(chan *batch, inFlight)
	for range inFlight - 1 {
		free <- &batch{events: make([]event.Event, 0, size)}
	}
	feeds := make([]chan *batch, len(workers))
	var done sync.WaitGroup
	for i, w := range workers {
		feeds[i] = make(chan *batch, inFlight)
		done.Add(1)
		go func(feed <-chan *batch) {
			defer done.Done()
			for b := range feed {
				for k := range b.events {
					w(&b.events[k])
				}
				if b.users.Add(-1) == 0 {
					b.events = b.events[:0]
					free <- b
				}
			}
		}(feeds[i])
	}
	cur := &batch{events: make([]event.Event, 0, size)}
	send := func() {
		cur.users.Store(int32(len(workers)))
		for _, f := range feeds {
			f <- cur
		}
		cur = <-free
	}
	err := src(func(e *event.Event) {
		cur.events = append(cur.events, *e)
		if len(cur.events) == size {
			send()
		}
	})
	if len(cur.events) > 0 {
		send()
	}
	for _, f := range feeds {
		close(f)
	}
	done.Wait()
	return err
}
