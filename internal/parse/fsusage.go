package parse

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
)

// FsUsageReader reads macOS `fs_usage -w` output (system_cmds fs_usage.c):
// both layers.
//
// Disk I/O lines are block-layer events:
//
//	17:24:17.532370    RdData[ST2]     D=0x009761a9  B=0x4000   /dev/disk3s5  /private/var/log/wifi.log    0.000745 W airportd.2578587
//
// File-system lines of the read/write family are syscall-layer events (see
// fsusage_calls.go):
//
//	17:24:17.521046  pread             F=4    B=0x4f7a     O=0x4f7a00000000      0.000024   mdworker_shared.2595553
//
// The time is the completion's wall-clock time; the elapsed time before the
// command is completion minus issue; D= is the device block number; B= the
// bytes transferred; the path may be empty or hold spaces; the last field is
// the issuing thread's command (at most 16 characters, possibly with spaces)
// and thread ID. Other lines (network calls, stat, I/O to /dev/NOTFOUND,
// which is not a disk) come back as KindSkip.
type FsUsageReader struct {
	lineScanner
	blockSize int64

	first   int64 // the first line's time of day, ns
	last    int64 // the previous line's, for a midnight wrap
	dayNs   int64 // days added after wraps
	started bool
	devs    map[string]event.Dev
	names   []string
	volumes map[string][]string // per container, the volumes seen in it
	comms   map[string]uint32

	// Resolve maps a thread to its process; nil, or false from it, falls
	// back to one pseudo-process per command name (fs_usage prints thread
	// IDs only).
	Resolve func(tid uint32, comm string) (pid uint32, ok bool)
	// Unresolved counts events whose thread Resolve could not map.
	Unresolved int64
	// PageIns counts page-ins of memory-mapped files (PAGE_IN_FILE): file
	// reads that made no system call.
	PageIns int64

	files map[fdKey]*fileState // per process and descriptor, for offsets and F_NOCACHE
}

// PseudoPidBase is the first pseudo-pid given to a command whose threads
// could not be mapped to a process (event.PseudoPidBase).
const PseudoPidBase = event.PseudoPidBase

// IsPseudoPid reports whether pid is a pseudo-pid: a command whose
// threads could not be mapped to a process.
func IsPseudoPid(pid uint32) bool { return !event.KnownPid(pid) }

// FsUsageLimits is what fs_usage output cannot show, recorded or imported.
var FsUsageLimits = []string{
	"fs_usage: no split between queueing and the device; issue time is completion minus elapsed time (microseconds)",
	"fs_usage: block offsets are device block numbers times the block size (assumed 4096), not file offsets",
	"fs_usage: system calls carry a descriptor, not a file; pread/pwrite offsets are printed modulo 4 GiB (the high bits follow the descriptor), read/write offsets follow the descriptor's position from open and lseek, guarded_pwrite_np's is not printed",
	"fs_usage: memory-mapped file I/O makes no system call: it shows only as page-ins (PgIn at the block layer)",
}

// PageInNote says what page-ins of memory-mapped files mean for a trace.
func PageInNote(n int64) string {
	return fmt.Sprintf("%d page-ins of memory-mapped files (PAGE_IN_FILE): file reads made without a system call, so the syscall layer does not show them; their disk reads are the block layer's PgIn events", n)
}

// KindSkip is a line that is well formed but not disk I/O.
const KindSkip Kind = 100

// NewFsUsageReader reads r. blockSize converts D= block numbers to byte
// offsets (fs_usage prints device blocks, whose size it does not say).
func NewFsUsageReader(r io.Reader, file string, blockSize int64) *FsUsageReader {
	if blockSize <= 0 {
		blockSize = 4096
	}
	return &FsUsageReader{lineScanner: newLineScanner(r, file), blockSize: blockSize, devs: map[string]event.Dev{}, comms: map[string]uint32{},
		files: map[fdKey]*fileState{}}
}

// Devices names the device numbers the reader assigned, in order: device
// i+1 is /dev/Devices()[i]. An APFS container is named with the volumes
// seen in it: "disk3 (APFS container; volumes disk3s1s1, disk3s5)".
func (r *FsUsageReader) Devices() []string {
	out := make([]string, len(r.names))
	for i, n := range r.names {
		out[i] = n
		if v := r.volumes[n]; len(v) > 0 {
			out[i] = fmt.Sprintf("%s (APFS container; volumes %s)", n, strings.Join(v, ", "))
		}
	}
	return out
}

// Scan reads the next line. Blank lines are skipped.
func (r *FsUsageReader) Scan() bool {
	return r.scan(func(b []byte) string { return r.parseLine(string(b)) })
}

// diskOps are fs_usage's disk I/O names (diskio_print), CoreStorage too.
var diskOps = map[string]event.Op{
	"RdData": event.Read, "WrData": event.Write, "RdMeta": event.Read, "WrMeta": event.Write,
	"PgIn": event.Read, "PgOut": event.Write,
	"RdChunkCS": event.Read, "WrChunkCS": event.Write, "RdMetaCS": event.Read, "WrMetaCS": event.Write,
	"RdBgTfCS": event.Read, "WrBgTfCS": event.Write, "RdBgMigrCS": event.Read, "WrBgMigrCS": event.Write,
}

func (r *FsUsageReader) parseLine(s string) string {
	if strings.Contains(s, "buffer overrun") { // "fs_usage: buffer overrun, events generated too quickly"
		r.rec = Record{Kind: KindLost, N: 1, Text: s}
		return ""
	}
	ts, rest, ok := strings.Cut(strings.TrimLeft(s, " "), " ")
	if !ok {
		return "no time field"
	}
	completion, err := timeOfDay(ts)
	if err != nil {
		return err.Error()
	}
	rest = strings.TrimLeft(rest, " ")
	name, rest, _ := strings.Cut(rest, " ")
	opName, flags, _ := strings.Cut(name, "[")
	op, isDisk := diskOps[opName]
	if !isDisk || !strings.Contains(rest, "D=0x") {
		return r.parseCall(name, rest, completion)
	}
	e := &r.rec.Event
	*e = event.Event{Layer: event.Block, Op: op}
	e.Flags = fsUsageFlags(strings.TrimSuffix(flags, "]"))
	if strings.HasPrefix(opName, "RdMeta") || strings.HasPrefix(opName, "WrMeta") {
		e.Flags |= event.FlagMeta
	}
	if opName == "PgIn" || opName == "PgOut" { // memory-mapped file I/O (B_PAGEIO)
		e.Flags |= event.FlagPaging
	}

	// D=0x<block> then either B=0x<bytes> /dev/<name> <path>, or [errno].
	rest = strings.TrimLeft(rest, " ")
	dfield, rest, _ := strings.Cut(rest, " ")
	blk, err := strconv.ParseUint(strings.TrimPrefix(dfield, "D=0x"), 16, 64)
	if err != nil || !strings.HasPrefix(dfield, "D=0x") {
		return "bad D= block number"
	}
	body, elapsedNs, comm, tid, ok := tail(rest)
	if !ok {
		return "no elapsed time"
	}
	if len(body) > 0 && strings.HasPrefix(body[0], "[") { // the error form: D=0x...  [  5], then maybe a path
		errno, ok := bracketErrno(body)
		if !ok {
			return "bad error field"
		}
		e.Errno = int32(errno)
	} else {
		if len(body) < 2 || !strings.HasPrefix(body[0], "B=0x") || !strings.HasPrefix(body[1], "/dev/") {
			return "expected B=0x<bytes> /dev/<disk>"
		}
		size, err := strconv.ParseUint(strings.TrimPrefix(body[0], "B=0x"), 16, 64)
		if err != nil {
			return "bad B= byte count"
		}
		disk := strings.TrimPrefix(body[1], "/dev/")
		if disk == "NOTFOUND" { // fs_usage found no disk with this device number
			r.rec = Record{Kind: KindSkip}
			return ""
		}
		e.Dev = r.device(disk)
		e.Size, e.Bytes = int64(size), int64(size)
	}
	end := r.clock(completion)
	e.End = end
	e.Start = end - elapsedNs
	e.Offset = int64(blk) * r.blockSize
	e.Tid = tid
	e.Pid = r.pidOf(tid, comm)
	e.Comm = comm
	r.rec.Kind = KindEvent
	return ""
}

// bracketErrno reads an errno printed as "[%3d]", which may be split over
// fields ("[", "5]") and followed by a path.
func bracketErrno(fields []string) (int, bool) {
	s := strings.Join(fields, " ")
	open := strings.IndexByte(s, '[')
	end := strings.IndexByte(s, ']')
	if open < 0 || end < open {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(s[open+1 : end]))
	return n, err == nil && n >= 0
}

// tail splits what follows a line's body, from the right: the elapsed
// time, an optional W, command.thread. It returns the fields before the
// elapsed time.
func tail(rest string) (body []string, elapsedNs int64, comm string, tid uint32, ok bool) {
	fields := strings.Fields(rest)
	el := -1
	for i := len(fields) - 1; i >= 0; i-- {
		if isElapsed(fields[i]) {
			el = i
			break
		}
	}
	if el < 0 {
		return nil, 0, "", 0, false
	}
	elapsed, _ := strconv.ParseFloat(fields[el], 64)
	cmdStart := el + 1
	if cmdStart < len(fields) && fields[cmdStart] == "W" {
		cmdStart++
	}
	comm, tid = splitCommand(strings.Join(fields[cmdStart:], " "))
	return fields[:el], int64(elapsed*1e9 + 0.5), comm, tid, true
}

// pidOf is the process of a thread: Resolve's answer, or one
// pseudo-process per command name.
func (r *FsUsageReader) pidOf(tid uint32, comm string) uint32 {
	if r.Resolve != nil {
		if pid, ok := r.Resolve(tid, comm); ok {
			return pid
		}
		r.Unresolved++
	}
	return r.pseudoPid(comm)
}

// fsUsageFlags reads the bracket: A async or S sync, N no-cache, T<n>
// tier, U upgraded, P passive.
func fsUsageFlags(s string) event.Flags {
	var f event.Flags
	for _, c := range s {
		switch c {
		case 'A':
			f |= event.FlagAsync
		case 'S':
			f |= event.FlagSync
		case 'N':
			f |= event.FlagDirect
		}
	}
	return f
}

func isElapsed(s string) bool {
	i := strings.IndexByte(s, '.')
	if i < 1 || len(s)-i-1 != 6 {
		return false
	}
	for j, c := range s {
		if j != i && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// splitCommand splits "command.threadID" at the last dot. A line cut short
// may have no thread ID.
func splitCommand(s string) (string, uint32) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return s, 0
	}
	tid, err := strconv.ParseUint(s[i+1:], 10, 32)
	if err != nil {
		return s[:i], 0
	}
	return s[:i], uint32(tid)
}

// timeOfDay parses HH:MM:SS[.ffffff] into ns since midnight.
func timeOfDay(s string) (int64, error) {
	hms, frac, _ := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return 0, fmt.Errorf("bad time %q", s)
	}
	var v [3]int64
	limits := [3]int{23, 59, 59}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > limits[i] || len(p) != 2 {
			return 0, fmt.Errorf("bad time %q", s)
		}
		v[i] = int64(n)
	}
	ns := (v[0]*3600 + v[1]*60 + v[2]) * 1e9
	if frac != "" {
		if len(frac) > 9 {
			return 0, fmt.Errorf("bad time %q", s)
		}
		f, err := strconv.Atoi(frac)
		if err != nil {
			return 0, fmt.Errorf("bad time %q", s)
		}
		for k := len(frac); k < 9; k++ {
			f *= 10
		}
		ns += int64(f)
	}
	return ns, nil
}

// clock turns a time of day into ns since the first line, across midnight.
func (r *FsUsageReader) clock(tod int64) int64 {
	const day = 24 * 3600 * int64(1e9)
	if !r.started {
		r.first, r.last, r.started = tod, tod, true
	}
	if tod+day/2 < r.last { // went backwards by over 12 hours: a new day
		r.dayNs += day
	}
	r.last = tod
	return tod + r.dayNs - r.first
}

// FirstTimeOfDay is the first disk I/O line's time, ns after midnight.
func (r *FsUsageReader) FirstTimeOfDay() int64 { return r.first }

// apfsVolume matches a slice of a disk: disk3s5, and a snapshot's disk3s1s1.
var apfsVolume = regexp.MustCompile(`^(disk[0-9]+)s[0-9]+(s[0-9]+)?$`)

// device numbers disks in order of appearance: fs_usage prints names only.
// The volumes of an APFS container are one device: they share the
// container's blocks, and fs_usage's D= numbers are the container's (a
// Mac's metadata I/O is printed on the container, disk3, its files' on
// the volume, disk3s5, at addresses in one space). So every slice of a
// disk goes with the disk itself; the volumes seen are named with it.
func (r *FsUsageReader) device(name string) event.Dev {
	if m := apfsVolume.FindStringSubmatch(name); m != nil {
		if r.volumes == nil {
			r.volumes = map[string][]string{}
		}
		if v := r.volumes[m[1]]; !slices.Contains(v, name) && len(v) < 16 {
			r.volumes[m[1]] = append(v, name)
		}
		name = m[1]
	}
	if d, ok := r.devs[name]; ok {
		return d
	}
	r.names = append(r.names, name)
	d := event.Dev{Major: 0, Minor: uint32(len(r.names))}
	r.devs[name] = d
	return d
}

// pseudoPid numbers commands: fs_usage prints a thread ID, not a process
// ID, so processes it cannot map are grouped by name. Their numbers count
// down from PseudoPidBase, clear of real pids, and are shown as no pid at
// all (pid 1 is launchd on a Mac: a made-up small number would name it).
func (r *FsUsageReader) pseudoPid(comm string) uint32 {
	if p, ok := r.comms[comm]; ok {
		return p
	}
	p := PseudoPidBase - uint32(len(r.comms)%(1<<20))
	r.comms[comm] = p
	return p
}
