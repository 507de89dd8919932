// Command drivesim serves one file, disk.img, over FUSE, delaying every
// read and write by a model of a drive whose behaviour this machine's
// disks lack — a portable HDD (where the head is matters), a USB bridge
// that takes one command at a time — so that a loop device with direct
// I/O over it is a real block device with that behaviour: the block
// layer, readahead, merging and writeback all act on it. It is validation
// equipment for `ioshape predict` (scripts/validation-drives.sh), not a
// user-facing command.
//
//	drivesim --model hdd|usb --size 4G --backing /var/tmp/x.img --mount DIR
//
// It runs until SIGINT or SIGTERM, then unmounts.
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
	backing := flag.String("backing", "", "the file holding the disk's data (sparse; made if missing)")
	mount := flag.String("mount", "", "the directory to serve disk.img in")
	rpm := flag.Float64("rpm", 5400, "hdd: spindle speed")
	fullStroke := flag.Duration("full-stroke", 20*time.Millisecond, "hdd: a seek across the whole disk")
	mediaMBs := flag.Float64("media-mbs", 100, "hdd: transfer from the platter, MB/s")
	cacheMiB := flag.Int64("cache-mib", 8, "hdd: read cache")
	perCommand := flag.Duration("per-command", time.Millisecond, "usb: each command's cost")
	bridgeMBs := flag.Float64("bridge-mbs", 40, "usb: transfer through the bridge, MB/s")
	flag.Parse()
	if *backing == "" || *mount == "" {
		fmt.Fprintln(os.Stderr, "drivesim: --backing and --mount are needed")
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
	if err := run(m, *size, *backing, *mount); err != nil {
		fmt.Fprintln(os.Stderr, "drivesim:", err)
		os.Exit(1)
	}
}

func run(m model, size int64, backing, mount string) error {
	f, err := os.OpenFile(backing, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	disk := &diskFile{backing: f, size: size, model: m}
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

// diskFile is the disk: every request waits for the model, one at a time.
type diskFile struct {
	fs.Inode
	backing *os.File
	size    int64
	model   model
	mu      sync.Mutex // one command at a time
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

func (f *diskFile) wait(write bool, off, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d := f.model.serve(time.Now(), write, off, n); d > 0 {
		time.Sleep(d)
	}
}

func (f *diskFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n := min(int64(len(dest)), max(0, f.size-off))
	f.wait(false, off, n)
	k, err := f.backing.ReadAt(dest[:n], off)
	if err != nil && k < int(n) {
		for i := k; i < int(n); i++ {
			dest[i] = 0
		}
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (f *diskFile) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if off+int64(len(data)) > f.size {
		return 0, syscall.ENOSPC
	}
	f.wait(true, off, int64(len(data)))
	if _, err := f.backing.WriteAt(data, off); err != nil {
		return 0, fs.ToErrno(err)
	}
	return uint32(len(data)), 0
}
