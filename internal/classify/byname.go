package classify

import "unsafe"

// byName remembers the values of names, direct-mapped by where the name's
// bytes are: a trace's program names come from its string table, so the
// same name is the same bytes, and a program's next I/O finds its value
// here without hashing the name. A name found elsewhere (or evicted) is
// simply looked up again.
type byName[T any] [16]struct {
	data *byte
	n    int
	v    *T
}

func (c *byName[T]) slot(name string) *struct {
	data *byte
	n    int
	v    *T
} {
	return &c[(uint64(uintptr(unsafe.Pointer(unsafe.StringData(name))))*0x9E3779B97F4A7C15)>>60]
}

// get returns name's value, or nil.
func (c *byName[T]) get(name string) *T {
	if s := c.slot(name); s.data == unsafe.StringData(name) && s.n == len(name) {
		return s.v
	}
	return nil
}

// put remembers v as name's value.
func (c *byName[T]) put(name string, v *T) {
	s := c.slot(name)
	s.data, s.n, s.v = unsafe.StringData(name), len(name), v
}
