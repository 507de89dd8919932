//go:build linux && (amd64 || arm64)

package native

import (
	"encoding/binary"
	"errors"
	"os"
	"unsafe"

	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/content"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
)

// contentReader judges the data samples the programs take (struct sample)
// as they come, keeping per file system device only what compression
// would save: the data itself goes nowhere.
type contentReader struct {
	rd     *ringbuf.Reader
	done   chan struct{}
	by     map[event.Dev]*event.Content // written by run alone until done
	mounts map[event.Dev]int            // a file system's mount, opened for file handles (-1: none)
	buf    []byte
}

// Where the generated structs have the sample's fields.
var (
	sampleHeadAt  = unsafe.Offsetof(ioshapeSample{}.H)
	sampleDevAt   = sampleHeadAt + unsafe.Offsetof(ioshapeSampleHead{}.Dev)
	sampleLenAt   = sampleHeadAt + unsafe.Offsetof(ioshapeSampleHead{}.Len)
	sampleGenAt   = sampleHeadAt + unsafe.Offsetof(ioshapeSampleHead{}.Gen)
	sampleInoAt   = sampleHeadAt + unsafe.Offsetof(ioshapeSampleHead{}.Ino)
	sampleOffAt   = sampleHeadAt + unsafe.Offsetof(ioshapeSampleHead{}.Offset)
	sampleOutAt   = sampleHeadAt + unsafe.Offsetof(ioshapeSampleHead{}.OutDev)
	sampleBytesAt = sampleHeadAt + unsafe.Offsetof(ioshapeSampleHead{}.Bytes)
	sampleDataAt  = unsafe.Offsetof(ioshapeSample{}.Data)
)

func startContent(rd *ringbuf.Reader) *contentReader {
	c := newContentReader()
	c.rd = rd
	go c.run()
	return c
}

func newContentReader() *contentReader {
	return &contentReader{done: make(chan struct{}), by: map[event.Dev]*event.Content{}, mounts: map[event.Dev]int{},
		buf: make([]byte, content.PageSize)}
}

func (c *contentReader) run() {
	defer close(c.done)
	defer c.closeMounts()
	var rec ringbuf.Record
	for {
		if err := c.rd.ReadInto(&rec); err != nil {
			return // closed, or flushed at the end: everything before was read
		}
		c.add(rec.RawSample)
	}
}

// add judges one sample: the data that follows it, or a copy's source
// read through its file handle. A short or inconsistent one is dropped.
func (c *contentReader) add(raw []byte) {
	if uintptr(len(raw)) < sampleDataAt {
		return
	}
	u32 := func(at uintptr) uint32 { return binary.NativeEndian.Uint32(raw[at:]) }
	dev := event.DevFromKernel(uint64(u32(sampleDevAt)))
	n := uintptr(u32(sampleLenAt))
	switch {
	case n == 0:
		c.addCopy(dev, event.DevFromKernel(uint64(u32(sampleOutAt))), binary.NativeEndian.Uint64(raw[sampleInoAt:]),
			u32(sampleGenAt), int64(binary.NativeEndian.Uint64(raw[sampleOffAt:])), binary.NativeEndian.Uint64(raw[sampleBytesAt:]))
	case n <= content.PageSize && sampleDataAt+n <= uintptr(len(raw)):
		c.count(dev, raw[sampleDataAt:sampleDataAt+n])
	}
}

// Samples of one copy: a page every copyEvery of it, at most maxCopyPages.
const (
	copyEvery    = 256 << 10
	maxCopyPages = 64
)

// addCopy samples a copy of size bytes from off of the file with inode
// ino and generation gen on dev: a page every copyEvery of it (one call
// copies a whole file), counted for its destination out as well.
func (c *contentReader) addCopy(dev, out event.Dev, ino uint64, gen uint32, off int64, size uint64) {
	if size == 0 || off < 0 || size > 1<<50 {
		return
	}
	f := c.openByHandle(dev, ino, gen)
	if f == nil {
		return
	}
	defer f.Close()
	pages := min(max(size/copyEvery, 1), maxCopyPages)
	for i := range pages {
		at := off + int64(size/pages*i)&^(content.PageSize-1)
		got, _ := f.ReadAt(c.buf[:min(size, content.PageSize)], at)
		if got == 0 {
			return
		}
		c.count(dev, c.buf[:got])
		if out != (event.Dev{}) && out != dev {
			c.count(out, c.buf[:got]) // a copy writes what it read
		}
	}
}

func (c *contentReader) count(dev event.Dev, data []byte) {
	ct := c.by[dev]
	if ct == nil {
		ct = &event.Content{}
		c.by[dev] = ct
	}
	ct.Add(len(data), content.Saved(data))
}

// fileIDIno32Gen is the kernel's FILEID_INO32_GEN: a handle of a 32-bit
// inode number and its generation, which ext4 (and XFS's small inodes)
// decode.
const fileIDIno32Gen = 1

// openByHandle opens the file with inode ino and generation gen on dev by
// its handle (root may open any), to read what a copy just read: the page
// cache serves it, and O_NOATIME leaves the file system unwritten. nil
// where it cannot: the file is gone, the file system takes no such handle,
// it has no mount here.
func (c *contentReader) openByHandle(dev event.Dev, ino uint64, gen uint32) *os.File {
	if ino == 0 || ino > 0xffffffff {
		return nil
	}
	mfd, ok := c.mounts[dev]
	if !ok {
		mfd = -1
		if at, found := host.MountPoint(dev); found {
			// Not O_PATH: open_by_handle_at refuses such a descriptor.
			if fd, err := unix.Open(at, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
				mfd = fd
			}
		}
		c.mounts[dev] = mfd
	}
	if mfd < 0 {
		return nil
	}
	var h [8]byte
	binary.NativeEndian.PutUint32(h[0:], uint32(ino))
	binary.NativeEndian.PutUint32(h[4:], gen)
	fd, err := unix.OpenByHandleAt(mfd, unix.NewFileHandle(fileIDIno32Gen, h[:]), unix.O_RDONLY|unix.O_NOATIME|unix.O_CLOEXEC)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "copy source")
}

func (c *contentReader) closeMounts() {
	for _, fd := range c.mounts {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
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
