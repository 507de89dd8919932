package profile

import (
	"sync"
	"sync/atomic"

	"github.com/ioshape/ioshape/internal/event"
)

// Fan gives every event it is handed, in order, to each of its workers,
// each on a goroutine of its own. A worker that feeds profile builders has
// them see the same events in the same order as on one goroutine, so the
// results are the same; only the workers' work overlaps. Events are copied
// into batches shared by the workers; the caller may reuse its event.
type Fan struct {
	workers int
	cur     *fanBatch
	free    chan *fanBatch
	feeds   []chan *fanBatch
	done    sync.WaitGroup
}

type fanBatch struct {
	events []event.Event
	users  atomic.Int32 // workers still reading it
}

const (
	fanBatchSize = 4096 // events per hand-over
	fanBatches   = 4    // in flight or being filled
)

// NewFan starts one goroutine per worker. Wait must be called to end them.
func NewFan(workers ...func(*event.Event)) *Fan {
	f := &Fan{workers: len(workers), free: make(chan *fanBatch, fanBatches), feeds: make([]chan *fanBatch, len(workers))}
	for range fanBatches - 1 {
		f.free <- &fanBatch{events: make([]event.Event, 0, fanBatchSize)}
	}
	f.cur = &fanBatch{events: make([]event.Event, 0, fanBatchSize)}
	for i, w := range workers {
		feed := make(chan *fanBatch, fanBatches)
		f.feeds[i] = feed
		f.done.Add(1)
		go func() {
			defer f.done.Done()
			for b := range feed {
				for k := range b.events {
					w(&b.events[k])
				}
				if b.users.Add(-1) == 0 {
					b.events = b.events[:0]
					f.free <- b
				}
			}
		}()
	}
	return f
}

// Add hands an event to every worker.
func (f *Fan) Add(e *event.Event) {
	f.cur.events = append(f.cur.events, *e)
	if len(f.cur.events) == fanBatchSize {
		f.send()
	}
}

func (f *Fan) send() {
	f.cur.users.Store(int32(f.workers))
	for _, feed := range f.feeds {
		feed <- f.cur
	}
	f.cur = <-f.free
}

// Wait hands over what is left and waits for every worker to take it all.
func (f *Fan) Wait() {
	if len(f.cur.events) > 0 {
		f.send()
	}
	for _, feed := range f.feeds {
		close(feed)
	}
	f.done.Wait()
}

// Split hands each event to one of its workers, the one its caller names,
// each worker on a goroutine of its own and seeing its events in the order
// they were added. Unlike a Fan's workers, none reads events meant for
// another. Events are copied; the caller may reuse its event.
type Split struct {
	lanes []lane
	done  sync.WaitGroup
}

type lane struct {
	cur  []event.Event
	feed chan []event.Event
	free chan []event.Event
}

// NewSplit starts one goroutine per worker. Wait must be called to end them.
func NewSplit(workers ...func(*event.Event)) *Split {
	s := &Split{lanes: make([]lane, len(workers))}
	for i, w := range workers {
		l := &s.lanes[i]
		l.feed, l.free = make(chan []event.Event, fanBatches), make(chan []event.Event, fanBatches)
		for range fanBatches - 1 {
			l.free <- make([]event.Event, 0, fanBatchSize)
		}
		l.cur = make([]event.Event, 0, fanBatchSize)
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			for b := range l.feed {
				for k := range b {
					w(&b[k])
				}
				l.free <- b[:0]
			}
		}()
	}
	return s
}

// Add hands an event to worker i.
func (s *Split) Add(i int, e *event.Event) {
	l := &s.lanes[i]
	l.cur = append(l.cur, *e)
	if len(l.cur) == fanBatchSize {
		l.feed <- l.cur
		l.cur = <-l.free
	}
}

// Wait hands over what is left and waits for every worker to take it all.
func (s *Split) Wait() {
	for i := range s.lanes {
		l := &s.lanes[i]
		if len(l.cur) > 0 {
			l.feed <- l.cur
		}
		close(l.feed)
	}
	s.done.Wait()
}

// startParallel runs each layer's half of a Builder on its own goroutine:
// each half takes its layer's events in file order, as on one goroutine.
func startParallel(halves [2]*layerHalf) *Split {
	return NewSplit(halves[0].add, halves[1].add)
}
