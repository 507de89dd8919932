package bpftrace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/template"

	"github.com/ioshape/ioshape/dscripts"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// ScriptCall describes one syscall family's entry probe in the bpftrace
// script: which tracepoint, which argument is the fd, the byte count and the
// file offset expressions ($f is the resolved struct file *).
type ScriptCall struct {
	Name   string // tracepoint suffix, e.g. "pread64"
	ID     int    // event.Call
	FD     string // argument holding the fd
	Count  string
	Pos    string
	Vec    bool   // count is the sum of an iovec array
	Out    string // destination fd argument of a copy, if any
	OutPos string // destination offset expression ($g is its struct file *)
}

// ScriptCalls are the system calls the script traces.
var ScriptCalls = []ScriptCall{
	{Name: "read", ID: int(event.CallRead), FD: "fd", Count: "args->count", Pos: "$f->f_pos"},
	{Name: "write", ID: int(event.CallWrite), FD: "fd", Count: "args->count", Pos: "$f->f_pos"},
	{Name: "pread64", ID: int(event.CallPread64), FD: "fd", Count: "args->count", Pos: "args->pos"},
	{Name: "pwrite64", ID: int(event.CallPwrite64), FD: "fd", Count: "args->count", Pos: "args->pos"},
	{Name: "readv", ID: int(event.CallReadv), FD: "fd", Vec: true, Pos: "$f->f_pos"},
	{Name: "writev", ID: int(event.CallWritev), FD: "fd", Vec: true, Pos: "$f->f_pos"},
	{Name: "preadv", ID: int(event.CallPreadv), FD: "fd", Vec: true, Pos: "args->pos_l"},
	{Name: "pwritev", ID: int(event.CallPwritev), FD: "fd", Vec: true, Pos: "args->pos_l"},
	{Name: "preadv2", ID: int(event.CallPreadv2), FD: "fd", Vec: true, Pos: "args->pos_l"},
	{Name: "pwritev2", ID: int(event.CallPwritev2), FD: "fd", Vec: true, Pos: "args->pos_l"},
	{Name: "copy_file_range", ID: int(event.CallCopyFileRange), FD: "fd_in", Count: "args->len",
		Pos:    "args->off_in != 0 ? *(int64 *)uptr(args->off_in) : (int64)$f->f_pos",
		Out:    "fd_out",
		OutPos: "args->off_out != 0 ? *(int64 *)uptr(args->off_out) : (int64)$g->f_pos"},
	{Name: "sendfile64", ID: int(event.CallSendfile), FD: "in_fd", Count: "args->count",
		Pos: "args->offset != 0 ? *(int64 *)uptr(args->offset) : (int64)$f->f_pos",
		Out: "out_fd", OutPos: "$g->f_pos"},
	{Name: "fsync", ID: int(event.CallFsync), FD: "fd", Count: "0", Pos: "-1"},
	{Name: "fdatasync", ID: int(event.CallFdatasync), FD: "fd", Count: "0", Pos: "-1"},
	{Name: "sync_file_range", ID: int(event.CallSyncFileRange), FD: "fd", Count: "args->nbytes", Pos: "args->offset"},
	// The advice goes where a call's size does (the parser makes it a flag).
	{Name: "fadvise64", ID: int(event.CallFadvise), FD: "fd", Count: "args->advice", Pos: "-1"},
}

// callsOn is ScriptCalls with their tracepoints' names on arch: arm64 has
// no fadvise64, only fadvise64_64.
func callsOn(arch string) []ScriptCall {
	calls := slices.Clone(ScriptCalls)
	for i := range calls {
		if calls[i].ID == int(event.CallFadvise) && arch == "arm64" {
			calls[i].Name = "fadvise64_64"
		}
	}
	return calls
}

// RequiredTracepoints are the kernel tracepoints the script cannot run
// without; their absence is reported before bpftrace is started.
var RequiredTracepoints = []string{
	"block/block_rq_insert", "block/block_rq_issue", "block/block_rq_complete",
	"sched/sched_process_fork", "syscalls/sys_enter_pread64", "syscalls/sys_exit_pread64",
	"syscalls/sys_enter_getpgid",
}

// missingTracepointsIn lists the required tracepoints absent from a
// tracefs events directory.
func missingTracepointsIn(base string) []string {
	var missing []string
	for _, tp := range RequiredTracepoints {
		if _, err := os.Stat(filepath.Join(base, tp)); err != nil {
			missing = append(missing, strings.Replace(tp, "/", ":", 1))
		}
	}
	return missing
}

type scriptData struct {
	Arch      string // the architecture, for the READY line
	Self      int    // ioshape's pid: its getpgid(self) calls are flush marks
	Seeds     []int
	Command   bool
	Names     []string
	NameMatch string
	Filter    string
	Calls     []ScriptCall
	// Block and Syscall leave out a layer's probes (record --layers).
	Block, Syscall bool
	// SysFilter is Filter for the syscall layer's probes, which ioshape
	// can turn off while recording (see Degrade).
	SysFilter string

	AioRead, AioWrite, AioFsync       int
	UringRead, UringWrite, UringFsync int
	CopyFileRange, Sendfile           int
	// BioMatch tests a block tracepoint's dev against the bio-based
	// devices (zram, brd), traced from bio to completion; empty: none.
	BioMatch string
}

var bpftraceTemplate = template.Must(template.New("ioshape.bt").Parse(dscripts.Bpftrace))

// Render fills the script for a target. self is ioshape's own pid,
// excluded in whole-system mode so the trace writer does not trace itself,
// and the caller of the flush marks.
func Render(t session.Target, seeds []int, self int) (session.Script, error) {
	d := scriptData{
		Arch:          runtime.GOARCH,
		Self:          self,
		Seeds:         seeds,
		Command:       len(t.Command) > 0,
		Names:         t.Names,
		Filter:        "@track[pid]",
		Calls:         callsOn(runtime.GOARCH),
		Block:         t.Block(),
		Syscall:       t.Syscall(),
		AioRead:       int(event.CallAioRead),
		AioWrite:      int(event.CallAioWrite),
		AioFsync:      int(event.CallAioFsync),
		UringRead:     int(event.CallUringRead),
		UringWrite:    int(event.CallUringWrite),
		UringFsync:    int(event.CallUringFsync),
		CopyFileRange: int(event.CallCopyFileRange),
		Sendfile:      int(event.CallSendfile),
	}
	if t.All {
		d.Filter = fmt.Sprintf("pid != %d", self)
	}
	d.SysFilter = "(" + d.Filter + ") && @sysoff == 0"
	var bio []string
	for _, dev := range host.BioBasedDevices("/sys/block") {
		bio = append(bio, fmt.Sprintf("args->dev == %d", dev))
	}
	d.BioMatch = strings.Join(bio, " || ")
	var match []string
	for _, n := range t.Names {
		match = append(match, fmt.Sprintf("comm == %q", host.Comm(n)))
	}
	d.NameMatch = strings.Join(match, " || ")
	var buf bytes.Buffer
	if err := bpftraceTemplate.Execute(&buf, d); err != nil {
		return session.Script{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return session.Script{Name: "ioshape.bt", Text: buf.String(), SHA256: hex.EncodeToString(sum[:])}, nil
}
