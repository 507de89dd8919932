package dtrace

import (
	"github.com/ioshape/ioshape/internal/tracer/session"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"text/template"

	"github.com/ioshape/ioshape/dscripts"
)

// dCall is one syscall family's entry probe in the D script: D expressions
// for the call's name, fd, size and offset (-1: the call has none), and an
// extra predicate.
type dCall struct {
	Name     string
	Nocancel bool // macOS also has name_nocancel
	Call     string
	FD       string
	Size     string
	Offset   string
	When     string
}

// dCalls follow xnu's syscalls.master (tracing.md §2.1): read/write(fd, buf,
// nbyte), pread/pwrite(fd, buf, nbyte, offset), readv/writev(fd, iov,
// iovcnt), preadv/pwritev(fd, iov, iovcnt, offset), fsync(fd), fcntl(fd,
// cmd, arg) for F_NOCACHE (48) and F_FULLFSYNC (51), clonefileat(src_dirfd,
// src, dst_dirfd, dst, flags), fclonefileat(src_fd, dst_dirfd, dst, flags),
// copyfile(from, to, mode, flags). A vectored call's size is its return.
var dCalls = []dCall{
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

var dtraceTemplate = template.Must(template.New("ioshape.d").Parse(dscripts.DTrace))

// render fills the D script. Without block, the io provider is left
// out (System Integrity Protection hides it; fs_usage stands in).
func render(t session.Target, pids []int, block bool) (session.Script, error) {
	var terms []string
	for _, p := range pids {
		terms = append(terms, fmt.Sprintf("progenyof(%d)", p)) // true for the pid itself too
	}
	for _, n := range t.Names {
		terms = append(terms, fmt.Sprintf("execname == %q", n))
	}
	filter := strings.Join(terms, " || ")
	if t.All || filter == "" {
		filter = "1"
	}
	var buf bytes.Buffer
	err := dtraceTemplate.Execute(&buf, struct {
		Filter string
		Block  bool
		Calls  []dCall
	}{filter, block, dCalls})
	if err != nil {
		return session.Script{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return session.Script{Name: "ioshape.d", Text: buf.String(), SHA256: hex.EncodeToString(sum[:])}, nil
}
