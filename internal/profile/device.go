package profile

import (
	"sort"

	"github.com/ioshape/ioshape/internal/event"
)

// dispatched is what the device-depth sweep needs of a block request.
type dispatched struct {
	at, end int64
	dev     event.Dev
}

// deviceSweeps is the block layer's sweeps in dispatch order: the depth at
// the device, for the layer and for each device. It shares nothing with
// the sweeps in arrival order; its device table is its own.
type deviceSweeps struct {
	order *reorder[dispatched]
	// layer sweeps the whole layer and keeps its devices' I/Os in flight;
	// nil while there is one device, whose sweep is then the layer's.
	layer   *depthSweep
	first   *depthSweep
	devs    map[event.Dev]*depthSweep
	recent  recentDevs[depthSweep]
	pending dispatched // what add hands the re-sorting, copied there
}

func newDeviceSweeps(window int64) *deviceSweeps {
	s := &deviceSweeps{devs: map[event.Dev]*depthSweep{}}
	s.order = newReorder(window, s.emit)
	return s
}

// add takes a request in file order.
func (s *deviceSweeps) add(at, end int64, dev event.Dev) {
	p := &s.pending // not a local: through the generic push it would escape, one allocation a request
	*p = dispatched{at: at, end: end, dev: dev}
	s.order.push(at, end, p)
}

func (s *deviceSweeps) emit(d *dispatched) {
	dev := s.sweep(d.dev)
	if s.layer == nil {
		dev.arrive(d.at, d.end)
		return
	}
	s.layer.arriveWith(d.at, d.end, dev)
}

func (s *deviceSweeps) sweep(dev event.Dev) *depthSweep {
	slot := s.recent.slot(dev)
	if slot.v != nil && slot.dev == dev {
		return slot.v
	}
	d := s.devs[dev]
	if d == nil {
		s.makeRoom()
		d = newDepthSweep()
		switch {
		case s.first == nil:
			s.first = d
		case s.layer == nil: // a second device: the layer's sweep goes on from the first's
			s.layer = s.first.clone()
			s.first.passInflight()
		}
		s.devs[dev] = d
	}
	slot.dev, slot.v = dev, d
	return d
}

// makeRoom keeps the table bounded as the arrival side's is (limits.go):
// when it is full, the quieter half's sweeps are dropped. The layer's
// sweep keeps counting their requests; a device folded into "other"
// reports no depth of its own anyway.
func (s *deviceSweeps) makeRoom() {
	if len(s.devs) < 2*maxDevices {
		return
	}
	devs := make([]event.Dev, 0, len(s.devs))
	for d := range s.devs {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool {
		a, c := s.devs[devs[i]].n, s.devs[devs[j]].n
		return a < c || a == c && devKey{event.Block, devs[i]}.less(devKey{event.Block, devs[j]})
	})
	for _, d := range devs[:len(devs)/2] {
		delete(s.devs, d)
	}
	clear(s.recent[:])
}

// finish releases what the re-sorting holds: the layer's sweep, and each
// device's, are then complete.
func (s *deviceSweeps) finish() {
	s.order.flush()
	if s.layer == nil {
		s.layer = newDepthSweep()
		if s.first != nil {
			s.layer = s.first.clone()
		}
	}
}

// of is dev's sweep, empty for a device whose requests were not swept.
func (s *deviceSweeps) of(dev event.Dev) *depthSweep {
	if d := s.devs[dev]; d != nil {
		return d
	}
	return newDepthSweep()
}
