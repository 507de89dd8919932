package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/ioshape/ioshape/internal/content"
	"github.com/ioshape/ioshape/internal/drive"
)

// contentTest is the content calibration: text-like data against random
// bytes, written and read back direct.
var contentTest = Test{Op: "write", Access: "seq", Size: contentRequest, Depth: 1, Jobs: 1, Content: true}

const (
	contentBytes   = 16 << 20
	contentRequest = 128 << 10
	contentRuns    = 3
	// contentApart is how far apart text and random bytes must be, in
	// every run, for the drive to be taken as telling them apart: runs of
	// the same data differ by a few per cent.
	contentApart = 0.15
)

// measureContent is what data that compresses costs the drive beyond
// random bytes (zram: 16 MiB of text written at 1,753 µs/MiB more than
// random bytes, read at 624 more). Each run writes and reads back both, in
// turn, direct; a direction's cost is kept where every run found them at
// least contentApart apart, the same way. nil where none is, or the file
// system takes no direct I/O.
func measureContent(ctx context.Context, dir string) (*drive.ContentCost, drive.Point, error) {
	var pt drive.Point
	text, random := alignedBuffer(contentBytes), alignedBuffer(contentBytes)
	content.Text(text, 1)
	content.Random(random, 1)
	path := filepath.Join(dir, fmt.Sprintf(".ioshape-bench-content-%d", os.Getpid()))
	defer os.Remove(path)
	data := [2][]byte{text, random}
	var diffs [2][]float64 // read, write: µs per MiB, text less random
	var apart [2]int       // runs apart: +1 text slower, −1 faster
	for run := range contentRuns {
		var us [2][2]float64 // [text, random][read, write]
		// Each run in the other order: whatever the first round trip of
		// a run pays (the file's blocks allocated anew, a host's cache
		// warming) falls on text in one run and on random bytes in the
		// next, so it cannot set them apart the same way in every run
		// (the VM disk once read text 449 µs/MiB faster, text first).
		order := []int{0, 1}
		if run%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			if err := ctx.Err(); err != nil {
				return nil, pt, err
			}
			w, r, ok, err := directRoundTrip(path, data[i])
			if err != nil || !ok {
				return nil, pt, err
			}
			us[i] = [2]float64{r, w}
		}
		for d := range 2 {
			t, rnd := us[0][d], us[1][d]
			diffs[d] = append(diffs[d], (t-rnd)/(contentBytes>>20))
			switch {
			case t > rnd*(1+contentApart):
				apart[d]++
			case rnd > t*(1+contentApart):
				apart[d]--
			}
		}
		if run == 0 {
			pt = drive.Point{Op: "write", Access: "seq", SizeBytes: contentRequest, Depth: 1, Jobs: 1,
				LatUs: round(us[0][1] / (contentBytes / contentRequest)), MBs: round(contentBytes / us[0][1]),
				IOPS: round(contentBytes / contentRequest / us[0][1] * 1e6)}
		}
	}
	c := &drive.ContentCost{TextSaved: round(content.SavedShare(text))}
	for d, per := range []*float64{&c.ReadUsPerMiB, &c.WriteUsPerMiB} {
		if apart[d] == contentRuns || apart[d] == -contentRuns {
			*per = round(median(diffs[d]))
		}
	}
	if c.ReadUsPerMiB == 0 && c.WriteUsPerMiB == 0 {
		return nil, pt, nil
	}
	return c, pt, nil
}

// directRoundTrip writes data to path direct in contentRequest requests,
// then reads it back the same way: the µs each took. ok is false where the
// file system takes no direct I/O.
func directRoundTrip(path string, data []byte) (writeUs, readUs float64, ok bool, err error) {
	f, err := openDirect(path)
	if err != nil {
		return 0, 0, false, nil
	}
	defer f.Close()
	start := time.Now()
	for off := 0; off < len(data); off += contentRequest {
		if _, err := f.WriteAt(data[off:off+contentRequest], int64(off)); err != nil {
			return 0, 0, false, fmt.Errorf("cannot write %s: %w", path, UnwrapPath(err))
		}
	}
	writeUs = float64(time.Since(start).Microseconds())
	buf := alignedBuffer(contentRequest)
	start = time.Now()
	for off := 0; off < len(data); off += contentRequest {
		if _, err := f.ReadAt(buf, int64(off)); err != nil {
			return 0, 0, false, fmt.Errorf("cannot read %s: %w", path, UnwrapPath(err))
		}
	}
	readUs = float64(time.Since(start).Microseconds())
	return writeUs, readUs, true, nil
}

// alignedBuffer is n bytes at a 4 KiB boundary, as direct I/O wants them.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+4096)
	off := int(4096-uintptr(unsafe.Pointer(&b[0]))%4096) % 4096
	return b[off : off+n]
}
