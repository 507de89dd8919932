package event

// StreamHeads is how many concurrent sequential streams per device (or
// file) are recognised: an I/O continuing any of them is sequential, so two
// interleaved sequential readers do not look random. The kernel programs
// of record --summary keep as many.
const StreamHeads = 8

// Streams follows the sequential streams on each device or file: the
// profile's and ioshape's summaries of a tracer's output (package
// summarize) judge "sequential" the same way with it.
type Streams struct {
	heads map[streamKey]*heads
	// cache holds recently used devices' and files' heads, direct-mapped
	// by a hash of the key: a few streams take turns, and each finds its
	// heads here without the map.
	cache [8]struct {
		key streamKey
		h   *heads
	}
	// Limit, if set, bounds the devices and files remembered: past it they
	// are all forgotten and start again (a crafted trace can name
	// millions; a file read once starts no stream worth remembering).
	Limit int
}

type streamKey struct {
	dev   Dev
	inode uint64
}

type heads struct {
	next [StreamHeads]int64 // where each stream's next I/O would start
	used int
	last int // slot updated most recently
}

// Next takes an I/O with a known offset and size on a device (inode 0) or
// file: seq says it continued one of the streams there, and, when there
// was an I/O before it there (prev), seek is its distance from where the
// most recently continued stream ended.
func (s *Streams) Next(dev Dev, inode uint64, offset, size int64) (seq bool, seek int64, prev bool) {
	k := streamKey{dev, inode}
	c := &s.cache[((uint64(dev.Major)<<32|uint64(dev.Minor))*0x9E3779B97F4A7C15^inode*0xC2B2AE3D27D4EB4F)>>61]
	h := c.h
	if h == nil || c.key != k {
		if s.heads == nil {
			s.heads = map[streamKey]*heads{}
		}
		h = s.heads[k]
		if h == nil {
			if s.Limit > 0 && len(s.heads) >= s.Limit {
				clear(s.heads)
				clear(s.cache[:])
			}
			h = &heads{}
			s.heads[k] = h
		}
		c.key, c.h = k, h
	}
	end := offset + size
	if h.used > 0 {
		seek, prev = offset-h.next[h.last], true
		if seek < 0 {
			seek = -seek
		}
	}
	for i := 0; i < h.used; i++ {
		if h.next[i] == offset {
			h.next[i], h.last = end, i
			return true, seek, prev
		}
	}
	// A new stream replaces the least recently continued one.
	slot := h.used
	if h.used < StreamHeads {
		h.used++
	} else {
		slot = (h.last + 1) % StreamHeads
	}
	h.next[slot], h.last = end, slot
	return false, seek, prev
}
