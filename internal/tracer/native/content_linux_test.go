//go:build linux && (amd64 || arm64)

package native

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/content"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/testutil"
)

// dataSample is a sample of a call's buffer as the programs write it,
// claiming claimed bytes.
func dataSample(dev uint32, data []byte, claimed uint32) []byte {
	raw := make([]byte, unsafe.Sizeof(ioshapeSample{}))
	binary.NativeEndian.PutUint32(raw[sampleDevAt:], dev)
	binary.NativeEndian.PutUint32(raw[sampleLenAt:], claimed)
	copy(raw[sampleDataAt:], data)
	return raw
}

// Each sample is judged and counted on its device; one whose length is
// not what the struct can hold is dropped, not read past.
func TestContentSamples(t *testing.T) {
	text, random := make([]byte, content.PageSize), make([]byte, 1000)
	content.Text(text, 1)
	content.Random(random, 1)
	zram := uint32(252 << 20)
	c := newContentReader()
	c.add(dataSample(zram, text, content.PageSize))
	c.add(dataSample(zram, random, uint32(len(random))))
	c.add(dataSample(zram, text, content.PageSize+1)) // longer than a sample
	c.add(dataSample(zram, text, 16)[:sampleDataAt])  // cut before its data
	c.add([]byte{1, 2, 3})
	got := c.by[event.DevFromKernel(uint64(zram))]
	want := event.Content{Samples: 2, Bytes: content.PageSize + 1000, Saved: int64(content.Saved(text))}
	if got == nil || *got != want || len(c.by) != 1 {
		t.Fatalf("content %+v (devices %d), want %+v", got, len(c.by), want)
	}
}

// fsIOCGetVersion is FS_IOC_GETVERSION, _IOR('v', 1, long) on 64-bit
// Linux: a file's inode generation.
const fsIOCGetVersion = 0x80087601

// A copy passes no buffer: its sample names the source by inode and
// generation, and the reader opens it by handle and judges a page every
// 256 KiB of what it copied — for the source's device and the
// destination's. A file gone, or a generation that is not the file's,
// gives nothing.
func TestContentOfACopy(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "opening a file by its handle needs root (CAP_DAC_READ_SEARCH)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "src")
	text := make([]byte, 1<<20)
	content.Text(text, 5)
	content.Random(text[:content.PageSize], 5) // the first page random, the rest text
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := unix.IoctlGetInt(int(f.Fd()), fsIOCGetVersion)
	f.Close()
	if err != nil {
		testutil.Unavailable(t, "the temporary directory's file system gives no inode generation: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	fsDev := uint32(unix.Major(st.Dev))<<20 | uint32(unix.Minor(st.Dev))
	copySample := func(gen uint32, off int64, out uint32, size uint64) []byte {
		raw := make([]byte, sampleDataAt) // a copy's sample is its head alone
		binary.NativeEndian.PutUint32(raw[sampleDevAt:], fsDev)
		binary.NativeEndian.PutUint32(raw[sampleGenAt:], gen)
		binary.NativeEndian.PutUint64(raw[sampleInoAt:], st.Ino)
		binary.NativeEndian.PutUint64(raw[sampleOffAt:], uint64(off))
		binary.NativeEndian.PutUint32(raw[sampleOutAt:], out)
		binary.NativeEndian.PutUint64(raw[sampleBytesAt:], size)
		return raw
	}
	other := uint32(7<<20 | 3)
	c := newContentReader()
	defer c.closeMounts()
	c.add(copySample(uint32(gen), content.PageSize, other, content.PageSize)) // text, on both devices
	c.add(copySample(uint32(gen), 0, 0, content.PageSize))                    // random, the source's alone
	c.add(copySample(uint32(gen)+1, 0, other, content.PageSize))              // not this file
	saved := int64(content.Saved(text[content.PageSize : 2*content.PageSize]))
	if got, want := c.by[event.DevFromKernel(uint64(fsDev))], (event.Content{Samples: 2, Bytes: 2 * content.PageSize, Saved: saved}); got == nil || *got != want {
		t.Errorf("the source's device: %+v, want %+v", got, want)
	}
	if got, want := c.by[event.DevFromKernel(uint64(other))], (event.Content{Samples: 1, Bytes: content.PageSize, Saved: saved}); got == nil || *got != want {
		t.Errorf("the destination's device: %+v, want %+v", got, want)
	}
	// One call that copied the whole MiB: a page every 256 KiB of it.
	c = newContentReader()
	defer c.closeMounts()
	c.add(copySample(uint32(gen), 0, 0, 1<<20))
	var wantSaved int64
	for at := 0; at < 1<<20; at += 256 << 10 {
		wantSaved += int64(content.Saved(text[at : at+content.PageSize]))
	}
	if got, want := c.by[event.DevFromKernel(uint64(fsDev))], (event.Content{Samples: 4, Bytes: 4 * content.PageSize, Saved: wantSaved}); got == nil || *got != want {
		t.Errorf("a copy of a MiB: %+v, want %+v", got, want)
	}
	os.Remove(path)
	before := *c.by[event.DevFromKernel(uint64(fsDev))]
	c.add(copySample(uint32(gen), 0, 0, content.PageSize))
	if got := *c.by[event.DevFromKernel(uint64(fsDev))]; got != before {
		t.Errorf("a removed file was sampled: %+v", got)
	}
}
