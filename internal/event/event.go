package event

import "fmt"

// Layer is where in the stack an I/O was observed.
type Layer uint8

const (
	// Block is what the drive saw: requests from the block layer's queue to
	// completion.
	Block Layer = iota
	// Syscall is what the application asked for: a read/write-family call from
	// entry to return, or an asynchronous request from submission to reaping.
	Syscall
)

func (l Layer) String() string {
	switch l {
	case Block:
		return "block"
	case Syscall:
		return "syscall"
	}
	return fmt.Sprintf("layer(%d)", uint8(l))
}

// Op is the direction or kind of an I/O.
type Op uint8

const (
	Other Op = iota
	Read
	Write
	Flush
	Discard
)

var opNames = [...]string{"other", "read", "write", "flush", "discard"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// IsData reports whether the op moves data (reads and writes).
func (o Op) IsData() bool { return o == Read || o == Write }

// Call names the system call behind a syscall-layer event. Block events use
// NoCall.
type Call uint8

const (
	NoCall Call = iota
	CallRead
	CallWrite
	CallPread64
	CallPwrite64
	CallReadv
	CallWritev
	CallPreadv
	CallPwritev
	CallPreadv2
	CallPwritev2
	CallCopyFileRange
	CallSendfile
	CallFsync
	CallFdatasync
	CallSyncFileRange
	CallAioRead  // libaio IOCB_CMD_PREAD, submitted by io_submit, reaped by io_getevents
	CallAioWrite // libaio IOCB_CMD_PWRITE
	CallAioFsync
	CallUringRead  // io_uring read, from submission to the completion being posted
	CallUringWrite // io_uring write
	CallUringFsync // io_uring fsync
	CallFullFsync  // macOS fcntl(F_FULLFSYNC): flush to the medium
	CallNoCache    // macOS fcntl(F_NOCACHE): turn the cache off (or on) for a file
	CallClone      // macOS clonefileat/fclonefileat: a copy-on-write clone, no data I/O
	CallCopyfile   // macOS copyfile syscall
	// CallWait is not an I/O: a traced thread asleep uninterruptibly
	// outside any traced call (a page fault, an open or stat reading
	// metadata, sync), from falling asleep to waking. With
	// FlagDispatched, another traced thread woke it (a lock's holder) at
	// Dispatch, and Inode is that thread's ID (see Waker). Predictions
	// read it; profiles and exports leave it out.
	CallWait
	// CallFadvise is not an I/O: posix_fadvise, the advice in Flags
	// (FlagAdviceSequential, FlagAdviceRandom; neither: normal or another
	// advice). Sequential advice doubles the file's readahead window, and
	// cp and cat give it: predictions read it; profiles leave it out.
	CallFadvise
	// CallSleep is not an I/O: a traced thread asleep interruptibly outside
	// any traced call (a futex, a poll, a pipe, a child's exit), from
	// falling asleep (Start) to running again (End). With FlagDispatched,
	// Dispatch is when it was woken, and Inode the thread ID of the thread
	// that woke it (0: no traced thread did — an interrupt, a timer, an
	// untraced process). FlagBorn: the thread
	// was created at Start, by the thread in Inode. Predictions read it to
	// follow one process's wait on another's; profiles and exports leave
	// it out.
	CallSleep
	// CallSteal is not an I/O: time a traced thread lost while it ran —
	// on a virtual machine, the host's (its steal time) — summed over its
	// stretches on a CPU from Start to End: Blocked is how much (between
	// the stretches' wall time and the thread's own run time). The program
	// itself would not have taken it; predictions take it out, profiles
	// and exports leave it out.
	CallSteal
	numCalls
)

var callNames = [numCalls]string{
	"", "read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
	"preadv2", "pwritev2", "copy_file_range", "sendfile", "fsync", "fdatasync",
	"sync_file_range", "aio_read", "aio_write", "aio_fsync",
	"uring_read", "uring_write", "uring_fsync", "fcntl_fullfsync", "fcntl_nocache", "clonefile", "copyfile", "wait", "fadvise64", "sleep", "steal",
}

func (c Call) String() string {
	if c < numCalls {
		return callNames[c]
	}
	return fmt.Sprintf("call(%d)", uint8(c))
}

// IsAsync reports whether c is an asynchronous request rather than a call.
func (c Call) IsAsync() bool { return c >= CallAioRead && c <= CallUringFsync }

// Valid reports whether c is a known call.
func (c Call) Valid() bool { return c > NoCall && c < numCalls }

// Flags carry what the kernel said about an I/O, where it said it.
type Flags uint32

const (
	FlagSync             Flags = 1 << iota // REQ_SYNC / synchronous request
	FlagReadahead                          // REQ_RAHEAD
	FlagMeta                               // REQ_META: filesystem metadata
	FlagDirect                             // O_DIRECT file, or physical (uncached) I/O
	FlagFUA                                // forced unit access
	FlagPreflush                           // cache flush before the write
	FlagKernel                             // issued by a kernel thread (writeback, journal) on someone's behalf
	FlagAsync                              // asynchronous submission (libaio, io_uring)
	FlagCopySource                         // read half of a copy_file_range/sendfile; the write half carries the call's time
	FlagDispatched                         // Dispatch holds the time the request was handed to the device
	FlagPaging                             // a page-in or page-out: memory-mapped file I/O, no system call behind it
	FlagBlocked                            // Blocked holds how long the call slept uninterruptibly
	FlagAdviceSequential                   // CallFadvise: POSIX_FADV_SEQUENTIAL
	FlagAdviceRandom                       // CallFadvise: POSIX_FADV_RANDOM
	FlagBorn                               // CallSleep: the thread's creation, not a sleep
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagSync, "sync"}, {FlagReadahead, "readahead"}, {FlagMeta, "meta"},
	{FlagDirect, "direct"}, {FlagFUA, "fua"}, {FlagPreflush, "preflush"},
	{FlagKernel, "kernel"}, {FlagAsync, "async"}, {FlagCopySource, "copy-source"},
	{FlagDispatched, "dispatched"},
	{FlagPaging, "paging"},
	{FlagBlocked, "blocked"},
	{FlagAdviceSequential, "advice-sequential"}, {FlagAdviceRandom, "advice-random"}, {FlagBorn, "born"},
}

func (f Flags) String() string {
	s := ""
	for _, n := range flagNames {
		if f&n.f != 0 {
			if s != "" {
				s += ","
			}
			s += n.name
		}
	}
	return s
}

// Dev is a device number, split into major and minor.
type Dev struct {
	Major, Minor uint32
}

func (d Dev) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// Device names a device number seen in a trace: what the tracer learned of
// it from the system (sysfs, the mount table) or from its own output.
type Device struct {
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
	Name  string `json:"name"`
	Disk  string `json:"disk,omitempty"` // the whole disk a partition belongs to
	Mount string `json:"mount,omitempty"`
	// Mounts are its other mount points (a bind mount, a second mount).
	Mounts []string `json:"mounts,omitempty"`
	FSType string   `json:"fstype,omitempty"`
	// BioBased: the driver takes bios directly (zram, brd, pmem), serving
	// them in the submitter's context, on its CPU, before it returns.
	BioBased bool `json:"bio_based,omitempty"`
	// Lower are the devices it sits on whose requests serve its own: a
	// loop device's backing file's (both reach the block layer's
	// tracepoints, each of its requests once more below).
	Lower []Dev `json:"lower,omitempty"`
	// Content is what samples of the data the calls on its file system
	// moved say of how far it compresses (nil: none sampled — the tracer
	// takes none, or the calls moved none: mapped files).
	Content *Content `json:"content,omitempty"`
}

// Content is samples of the data calls read and wrote: a drive that
// compresses (zram) takes longer for data that compresses than for data
// that does not.
type Content struct {
	Samples int64 `json:"samples"`
	Bytes   int64 `json:"bytes"` // sampled
	// Saved is how many of the sampled bytes a fast LZ77 compressor would
	// save, page by page (package content).
	Saved int64 `json:"saved"`
}

// Add counts one sample of n bytes of which compression saves saved.
func (c *Content) Add(n, saved int) {
	c.Samples++
	c.Bytes += int64(n)
	c.Saved += int64(saved)
}

// SavedShare is the share of the sampled bytes compression saves (0 with
// no samples).
func (c *Content) SavedShare() float64 {
	if c == nil || c.Bytes <= 0 {
		return 0
	}
	return min(max(float64(c.Saved)/float64(c.Bytes), 0), 1)
}

// DevFromKernel splits a dev_t in the kernel's internal encoding (major in
// the bits above 20), as block tracepoints and super_block.s_dev carry it.
func DevFromKernel(dev uint64) Dev {
	return Dev{Major: uint32(dev >> 20), Minor: uint32(dev & (1<<20 - 1))}
}

// Event is one I/O. Times are nanoseconds relative to the trace's start and
// may be negative for I/O already in flight when recording began.
type Event struct {
	Layer Layer
	Op    Op
	Call  Call
	Flags Flags

	// Start is when the I/O arrived: the syscall's entry (or the async
	// submission), or for the block layer the earlier of queue insertion and
	// dispatch.
	Start int64
	// Dispatch is when a block request was handed to the device driver; valid
	// only with FlagDispatched.
	Dispatch int64
	// End is completion: the syscall's return, the async request's reaping, or
	// the device's completion.
	End int64
	// Blocked is how long a call slept uninterruptibly between Start and
	// End (waiting for I/O, a page, a journal commit — not computing);
	// valid only with FlagBlocked.
	Blocked int64

	Dev    Dev
	Inode  uint64 // the file, for syscall events; 0 if unknown
	Offset int64  // bytes from the start of the device or file; -1 if unknown
	Size   int64  // bytes requested
	Bytes  int64  // bytes transferred
	Errno  int32  // 0 on success

	Pid, Tid uint32
	Comm     string // process name at issue time
}

// IsWait reports whether e is a wait (CallWait) rather than an I/O.
func (e *Event) IsWait() bool { return e.Layer == Syscall && e.Call == CallWait }

// IsIO reports whether e is an I/O: not a wait, a sleep, a steal or an
// advice.
func (e *Event) IsIO() bool {
	return e.Layer != Syscall || e.Call != CallWait && e.Call != CallFadvise && e.Call != CallSleep && e.Call != CallSteal
}

// IsSteal reports whether e is time the host took from a thread
// (CallSteal).
func (e *Event) IsSteal() bool { return e.Layer == Syscall && e.Call == CallSteal }

// IsSleep reports whether e is an interruptible sleep (CallSleep).
func (e *Event) IsSleep() bool { return e.Layer == Syscall && e.Call == CallSleep }

// Waker is the traced thread that woke a sleep (CallSleep) or a wait
// (CallWait), or created the sleep's thread (FlagBorn); 0 if none did (an
// interrupt, a timer, an untraced process).
func (e *Event) Waker() uint32 { return uint32(e.Inode) }

// Latency is the service time from arrival to completion.
func (e *Event) Latency() int64 { return e.End - e.Start }

// DeviceTime is when the device got the request: Dispatch if known, else Start.
func (e *Event) DeviceTime() int64 {
	if e.Flags&FlagDispatched != 0 {
		return e.Dispatch
	}
	return e.Start
}

// Metrics a capture may not carry. An imported format that lacks a field
// names the metrics that need it, so that they are shown as unavailable
// rather than as zeros.
const (
	MetricTiming     = "timing"      // when each I/O arrived: IOPS, throughput, gaps, queue depth
	MetricFineTiming = "fine_timing" // arrival times finer than a second: gaps between I/Os
	MetricLatency    = "latency"     // how long each I/O took (and so queue depth)
	MetricQueueTime  = "queue_time"  // the split between queueing and the device
	MetricSize       = "size"        // bytes per I/O
	MetricDirection  = "direction"   // read or write
	MetricOffset     = "offset"      // where on the device: sequential share, seeks
	MetricProcess    = "process"     // which process issued it
)

// Unavailable is a metric a trace cannot show, and why.
type Unavailable struct {
	Metric string `json:"metric"`
	Why    string `json:"why"`
}

// InFlightAllowance is how many requests a trace may end with issued and
// not completed without anything having been lost: the deepest queue the
// catalog's drives keep (NVMe's can be deeper, but a workload rarely fills
// it at the moment tracing stops).
const InFlightAllowance = 64

// PseudoPidBase is the first number given to a process known only by its
// name (fs_usage prints thread IDs, and an import of it cannot always tell
// which process a thread belongs to): such numbers count down from here,
// far above any system's pids (Linux's reach 2^22, macOS's 99,999).
const PseudoPidBase = 1<<31 - 1

// KnownPid reports whether pid is a process's own, not a number standing
// for a name (PseudoPidBase) or for many processes together.
func KnownPid(pid uint32) bool { return pid <= PseudoPidBase-1<<20 }

// OptionalPid is a pid for JSON: nil (null) for one that is not a
// process's own (KnownPid).
func OptionalPid(pid uint32) *uint32 {
	if !KnownPid(pid) {
		return nil
	}
	return &pid
}
