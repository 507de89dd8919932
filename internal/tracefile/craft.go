package tracefile

import (
	"encoding/binary"
	"os"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Chunk kinds, for WriteCrafted.
const (
	KindHeader  = kindHeader
	KindEvents  = kindEvents // varint rows (version 1)
	KindFooter  = kindFooter
	KindSummary = kindSummary
	KindColumns = kindColumns
)

// RawChunk is one chunk as WriteCrafted writes it: its kind and its
// payload before compression.
type RawChunk struct {
	Kind byte
	Raw  []byte
}

// WriteCrafted writes a trace file of the given format version holding
// exactly these chunks — a header first, a footer last if any, with the
// trailer that points at it — well-framed, compressed and checksummed
// whatever the payloads say. It is for tests that hand the readers what
// no writer makes: counts and lengths at or past their limits.
func WriteCrafted(path string, version uint16, chunks []RawChunk) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	zenc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		f.Close()
		return err
	}
	defer zenc.Close()
	w := &Writer{f: f, path: path, zenc: zenc, lastFlush: time.Now()}
	var pre [preambleLen]byte
	copy(pre[:], magic)
	binary.LittleEndian.PutUint16(pre[8:], version)
	err = w.write(pre[:])
	footerAt := int64(-1)
	for _, c := range chunks {
		if err != nil {
			break
		}
		if c.Kind == kindFooter {
			footerAt = w.off
		}
		err = w.writeChunk(c.Kind, c.Raw)
	}
	if err == nil && footerAt >= 0 {
		var tr [trailerLen]byte
		copy(tr[:], trailerMagic)
		binary.LittleEndian.PutUint64(tr[8:], uint64(footerAt))
		err = w.write(tr[:])
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
