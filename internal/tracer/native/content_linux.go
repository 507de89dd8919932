//go:build linux && (amd64 || arm64)

package native

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/cilium/ebpf/ringbuf"

	"github.com/ioshape/ioshape/internal/content"
	"github.com/ioshape/ioshape/internal/event"
)

// contentReader judges the data samples the programs take (struct sample)
// as they come, keeping per file system device only what compression
// would save: the data itself goes nowhere.
type contentReader struct {
	rd   *ringbuf.Reader
	done chan struct{}
	by   map[event.Dev]*event.Content // written by run alone until done
}

// The sample's fields, where the generated struct has them.
var (
	sampleDevAt  = unsafe.Offsetof(ioshapeSample{}.Dev)
	sampleLenAt  = unsafe.Offsetof(ioshapeSample{}.Len)
	sampleDataAt = unsafe.Offsetof(ioshapeSample{}.Data)
)

func startContent(rd *ringbuf.Reader) *contentReader {
	c := &contentReader{rd: rd, done: make(chan struct{}), by: map[event.Dev]*event.Content{}}
	go c.run()
	return c
}

func (c *contentReader) run() {
	defer close(c.done)
	var rec ringbuf.Record
	for {
		if err := c.rd.ReadInto(&rec); err != nil {
			return // closed, or flushed at the end: everything before was read
		}
		c.add(rec.RawSample)
	}
}

// add judges one sample; a short or inconsistent one is dropped.
func (c *contentReader) add(raw []byte) {
	if uintptr(len(raw)) < sampleDataAt {
		return
	}
	n := uintptr(binary.NativeEndian.Uint32(raw[sampleLenAt:]))
	if n == 0 || n > content.PageSize || sampleDataAt+n > uintptr(len(raw)) {
		return
	}
	data := raw[sampleDataAt : sampleDataAt+n]
	dev := event.DevFromKernel(uint64(binary.NativeEndian.Uint32(raw[sampleDevAt:])))
	ct := c.by[dev]
	if ct == nil {
		ct = &event.Content{}
		c.by[dev] = ct
	}
	ct.Add(len(data), content.Saved(data))
}

// finish reads what is left in the ring, stops, and says what it found.
func (c *contentReader) finish() map[event.Dev]*event.Content {
	if err := c.rd.Flush(); err != nil && !errors.Is(err, ringbuf.ErrClosed) {
		c.rd.Close()
	}
	<-c.done
	c.rd.Close()
	return c.by
}
