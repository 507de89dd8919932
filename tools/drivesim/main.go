// Command drivesim serves one file, disk.img, over FUSE, delaying every
// read and write by a model of a drive whose behaviour this machine's
// disks lack — a portable HDD (where the head is matters), a USB bridge
// that takes one command at a time — so that a loop device with direct
// I/O over it is a real block device with that behaviour: the block
// layer, readahead, merging and writeback all act on it. It is validation
// equipment for `ioshape predict` (scripts/validation-drives.sh), not a
// user-facing command.
//
//	drivesim --model hdd|usb --size 4294967296 --mount DIR
//
// The disk's data lives in the process's own memory (anonymous, touched
// only where written), not in a file: a file's pages sit in the host's
// page cache, which `record --cold` drops and the host may reclaim, and
// then every request would also wait for the VM disk to read them back
// (fio's 4 KiB random reads on the USB model: 6.9 s warm, 7.7–8.9 s
// after drop_caches). It runs until SIGINT or SIGTERM, then unmounts;
// the data goes with it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

func main() {
	modelName := flag.String("model", "hdd", "the drive: hdd (portable hard disk) or usb (single-command USB bridge in front of flash)")
	size := flag.Int64("size", 4<<30, "the disk's size in bytes")
	mount := flag.String("mount", "", "the directory to serve disk.img in")
	rpm := flag.Float64("rpm", 5400, "hdd: spindle speed")
	fullStroke := flag.Duration("full-stroke", 20*time.Millisecond, "hdd: a seek across the whole disk")
	mediaMBs := flag.Float64("media-mbs", 100, "hdd: transfer from the platter, MB/s")
	cacheMiB := flag.Int64("cache-mib", 8, "hdd: read cache")
	perCommand := flag.Duration("per-command", time.Millisecond, "usb: each command's cost")
	bridgeMBs := flag.Float64("bridge-mbs", 40, "usb: transfer through the bridge, MB/s")
	flag.Parse()
	if *mount == "" || *size <= 0 {
		fmt.Fprintln(os.Stderr, "drivesim: --mount and a positive --size are needed")
		os.Exit(2)
	}
	var m model
	switch *modelName {
	case "hdd":
		h := newHDD(*size)
		h.rpm, h.fullStroke, h.mediaMBs, h.cacheBytes = *rpm, *fullStroke, *mediaMBs, *cacheMiB<<20
		m = h
	case "usb":
		b := newUSBBridge()
		b.perCommand, b.mbs = *perCommand, *bridgeMBs
		m = b
	default:
		fmt.Fprintf(os.Stderr, "drivesim: no model %q (hdd, usb)\n", *modelName)
		os.Exit(2)
	}
	if err := run(m, *size, *mount); err != nil {
		fmt.Fprintln(os.Stderr, "drivesim:", err)
		os.Exit(1)
	}
}

func run(m model, size int64, mount string) error {
	// Reserved, not committed: a page is allocated when first written,
	// and reads of the rest see the zero page.
	data, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return fmt.Errorf("reserving %d bytes for the disk: %w", size, err)
	}
	defer syscall.Munmap(data)
	disk := &diskFile{data: data, size: size, model: m}
	root := &dir{disk: disk}
	srv, err := fs.Mount(mount, root, &fs.Options{MountOptions: fuse.MountOptions{
		AllowOther: true, DirectMount: true, FsName: "drivesim", Name: "drivesim",
		// Requests up to 1 MiB pass whole, as a drive would see them.
		MaxWrite: 1 << 20, MaxReadAhead: 1 << 20,
	}})
	if err != nil {
		return err
	}
	fmt.Printf("serving %s/disk.img: %s\n", mount, m.describe())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Unmount() }()
	srv.Wait()
	return nil
}

type dir struct {
	fs.Inode
	disk *diskFile
}

var _ fs.NodeOnAdder = (*dir)(nil)

func (d *dir) OnAdd(ctx context.Context) {
	ch := d.NewPersistentInode(ctx, d.disk, fs.StableAttr{Mode: syscall.S_IFREG, Ino: 2})
	d.AddChild("disk.img", ch, false)
}

// diskFile is the disk: every request takes the model's time, one at a
// time.
type diskFile struct {
	fs.Inode
	data  []byte // the disk's contents
	size  int64
	model model
	mu    sync.Mutex // one command at a time
}

var (
	_ fs.NodeOpener    = (*diskFile)(nil)
	_ fs.NodeReader    = (*diskFile)(nil)
	_ fs.NodeWriter    = (*diskFile)(nil)
	_ fs.NodeGetattrer = (*diskFile)(nil)
	_ fs.NodeSetattrer = (*diskFile)(nil)
	_ fs.NodeFsyncer   = (*diskFile)(nil)
)

func (f *diskFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	// No page cache between the loop device and the model: every request
	// reaches it.
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (f *diskFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = 0o600 | syscall.S_IFREG
	out.Size = uint64(f.size)
	return 0
}

func (f *diskFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return f.Getattr(ctx, fh, out)
}

func (f *diskFile) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno { return 0 }

// serve moves the data and returns when the model says the request is
// done: the copy's own time is part of the model's, not added to it.
func (f *diskFile) serve(write bool, off int64, buf []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := time.Now()
	d := f.model.serve(start, write, off, int64(len(buf)))
	if write {
		copy(f.data[off:], buf)
	} else {
		copy(buf, f.data[off:])
	}
	if rest := d - time.Since(start); rest > 0 {
		time.Sleep(rest)
	}
}

func (f *diskFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 || off > f.size {
		return nil, syscall.EINVAL
	}
	n := min(int64(len(dest)), f.size-off)
	f.serve(false, off, dest[:n])
	return fuse.ReadResultData(dest[:n]), 0
}

func (f *diskFile) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if off < 0 || off+int64(len(data)) > f.size {
		return 0, syscall.ENOSPC
	}
	f.serve(true, off, data)
	return uint32(len(data)), 0
}
