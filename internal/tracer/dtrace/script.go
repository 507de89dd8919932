package dtrace

import (
	"github.com/ioshape/ioshape/internal/tracer/session"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"text/template"

	"github.com/ioshape/ioshape/dscripts"
)

// dCall is one syscall family's entry probe in the D script: D expressions
// for the call's name, fd, size and offset (-1: the call has none), an
// extra predicate, statements to run first, and for a copy between two
// descriptors the source's.
type dCall struct {
	Name     string
	Nocancel bool // macOS also has name_nocancel
	Call     string
	FD       string
	Size     string
	Offset   string
	When     string
	Pre      string
	FD2      string
}

// darwinCalls follow xnu's syscalls.master: read/write(fd,
// buf, nbyte), pread/pwrite(fd, buf, nbyte, offset), readv/writev(fd, iov,
// iovcnt), preadv/pwritev(fd, iov, iovcnt, offset), fsync(fd), fcntl(fd,
// cmd, arg) for F_NOCACHE (48) and F_FULLFSYNC (51), clonefileat(src_dirfd,
// src, dst_dirfd, dst, flags), fclonefileat(src_fd, dst_dirfd, dst, flags),
// copyfile(from, to, mode, flags). A vectored call's size is its return.
var darwinCalls = []dCall{
	{Name: "read", Nocancel: true, Call: `"read"`, FD: "arg0", Size: "arg2", Offset: "-1"},
	{Name: "write", Nocancel: true, Call: `"write"`, FD: "arg0", Size: "arg2", Offset: "-1"},
	{Name: "pread", Nocancel: true, Call: `"pread"`, FD: "arg0", Size: "arg2", Offset: "arg3"},
	{Name: "pwrite", Nocancel: true, Call: `"pwrite"`, FD: "arg0", Size: "arg2", Offset: "arg3"},
	{Name: "readv", Nocancel: true, Call: `"readv"`, FD: "arg0", Size: "-1", Offset: "-1"},
	{Name: "writev", Nocancel: true, Call: `"writev"`, FD: "arg0", Size: "-1", Offset: "-1"},
	{Name: "preadv", Nocancel: true, Call: `"preadv"`, FD: "arg0", Size: "-1", Offset: "arg3"},
	{Name: "pwritev", Nocancel: true, Call: `"pwritev"`, FD: "arg0", Size: "-1", Offset: "arg3"},
	{Name: "fsync", Nocancel: true, Call: `"fsync"`, FD: "arg0", Size: "0", Offset: "-1"},
	{Name: "fcntl", Nocancel: true, Call: `arg1 == 48 ? "fcntl_nocache" : "fcntl_fullfsync"`, FD: "arg0", Size: "arg2", Offset: "-1",
		When: "arg1 == 48 || arg1 == 51"},
	{Name: "clonefileat", Call: `"clonefileat"`, FD: "-1", Size: "0", Offset: "-1"},
	{Name: "fclonefileat", Call: `"fclonefileat"`, FD: "arg0", Size: "0", Offset: "-1"},
	{Name: "copyfile", Call: `"copyfile"`, FD: "-1", Size: "0", Offset: "-1"},
}

// linuxCalls are Linux's names and arguments (include/linux/syscalls.h):
// pread64/pwrite64(fd, buf, count, pos), preadv/pwritev(fd, vec, vlen,
// pos_l, pos_h) and their v2 forms (a 64-bit pos is whole in pos_l; -1 is
// the file's position), copy_file_range(fd_in, off_in, fd_out, off_out,
// len, flags), fsync/fdatasync(fd), and libaio's io_submit(ctx, nr,
// iocbpp), whose first struct iocb gives the batch's descriptor, size,
// offset and direction (aio_lio_opcode at byte 16: 0 read, 1 write;
// aio_fildes at 20, aio_nbytes at 32, aio_offset at 40), and
// io_getevents(ctx, min_nr, nr, events, timeout), whose return is the
// number reaped.
var linuxCalls = []dCall{
	{Name: "read", Call: `"read"`, FD: "arg0", Size: "arg2", Offset: "-1"},
	{Name: "write", Call: `"write"`, FD: "arg0", Size: "arg2", Offset: "-1"},
	{Name: "pread64", Call: `"pread64"`, FD: "arg0", Size: "arg2", Offset: "arg3"},
	{Name: "pwrite64", Call: `"pwrite64"`, FD: "arg0", Size: "arg2", Offset: "arg3"},
	{Name: "readv", Call: `"readv"`, FD: "arg0", Size: "-1", Offset: "-1"},
	{Name: "writev", Call: `"writev"`, FD: "arg0", Size: "-1", Offset: "-1"},
	{Name: "preadv", Call: `"preadv"`, FD: "arg0", Size: "-1", Offset: "arg3"},
	{Name: "pwritev", Call: `"pwritev"`, FD: "arg0", Size: "-1", Offset: "arg3"},
	{Name: "preadv2", Call: `"preadv2"`, FD: "arg0", Size: "-1", Offset: "arg3"},
	{Name: "pwritev2", Call: `"pwritev2"`, FD: "arg0", Size: "-1", Offset: "arg3"},
	{Name: "copy_file_range", Call: `"copy_file_range"`, FD: "arg2", FD2: "arg0", Size: "arg4", Offset: "-1"},
	{Name: "fsync", Call: `"fsync"`, FD: "arg0", Size: "0", Offset: "-1"},
	{Name: "fdatasync", Call: `"fdatasync"`, FD: "arg0", Size: "0", Offset: "-1"},
	{Name: "io_submit", Call: `(this->cb[2] & 0xffff) == 0 ? "aio_read" : (this->cb[2] & 0xffff) == 1 ? "aio_write" : "aio_fsync"`, When: "arg1 > 0",
		Pre: "this->cb = (uint64_t *)copyin(*(uint64_t *)copyin(arg2, 8), 48);",
		FD:  "this->cb[2] >> 32", Size: "this->cb[4]", Offset: "this->cb[5]"},
	{Name: "io_getevents", Call: `"io_getevents"`, FD: "-1", Size: "-1", Offset: "-1"},
}

// platform is the system the script will run on, as the D line says it.
func platform() string {
	if runtime.GOOS == "darwin" {
		return "darwin"
	}
	return "linux"
}

var dtraceTemplate = template.Must(template.New("ioshape.d").Parse(dscripts.DTrace))

// render fills the D script for this platform.
func render(t session.Target, pids []int, block bool) (session.Script, error) {
	return renderFor(platform(), t, pids, block)
}

// renderFor fills the D script for a platform ("darwin" or "linux").
// Without block, the io provider is left out (System Integrity Protection
// hides it; fs_usage stands in).
func renderFor(plat string, t session.Target, pids []int, block bool) (session.Script, error) {
	var terms []string
	for _, p := range pids {
		// progenyof is true for the pid itself, but in some DTraces not for
		// a child forked by one of its other threads: ppid covers those.
		terms = append(terms, fmt.Sprintf("progenyof(%d) || ppid == %d", p, p))
	}
	for _, n := range t.Names {
		terms = append(terms, fmt.Sprintf("execname == %q", n))
	}
	filter := strings.Join(terms, " || ")
	if t.All || filter == "" {
		// Everything but the tracer itself and ioshape reading it: their
		// own I/O would feed on itself.
		filter = fmt.Sprintf("pid != $pid && pid != %d", os.Getpid())
	}
	calls := darwinCalls
	if plat != "darwin" {
		calls = linuxCalls
	}
	var buf bytes.Buffer
	err := dtraceTemplate.Execute(&buf, struct {
		Platform string
		Filter   string
		Block    bool
		Calls    []dCall
	}{plat, filter, block, calls})
	if err != nil {
		return session.Script{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return session.Script{Name: "ioshape.d", Text: buf.String(), SHA256: hex.EncodeToString(sum[:])}, nil
}
