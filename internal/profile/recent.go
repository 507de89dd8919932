package profile

import "github.com/ioshape/ioshape/internal/event"

// recentDevs remembers what was looked up lately for a few devices,
// direct-mapped by number, in front of a map: a trace has a handful of
// devices, and most events find theirs here.
type recentDevs[T any] [8]devSlot[T]

type devSlot[T any] struct {
	dev event.Dev
	v   *T // nil: empty
}

// slot is where dev is remembered, if it is (v non-nil and dev equal).
func (r *recentDevs[T]) slot(dev event.Dev) *devSlot[T] {
	return &r[(uint64(dev.Major)<<32|uint64(dev.Minor))*0x9E3779B97F4A7C15>>61]
}
