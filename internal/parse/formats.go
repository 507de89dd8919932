package parse

import "slices"

// FormatInfo is what import needs to know of a format besides its reader:
// the system its captures come from, what it cannot show, and, for a file
// without the header a table needs, what that header looks like.
type FormatInfo struct {
	Name Format
	// Platform is the operating system the captures come from; empty when
	// the capture says (D output names its own).
	Platform string
	// Fidelity says what an imported capture cannot show, for the trace.
	Fidelity []string
	// Header is the header line a table needs, for a file without one.
	Header string
}

// formatTable holds every format import reads, in the order --format lists
// them.
var formatTable = []FormatInfo{
	{Name: FormatFsUsage, Platform: "darwin", Fidelity: slices.Concat(FsUsageLimits,
		[]string{"fs_usage: it prints thread IDs, not process IDs: an imported capture groups processes by name (cut at 16 characters)"})},
	{Name: FormatBpftrace, Fidelity: []string{"imported raw bpftrace output: devices are numbers only, and lost-event counts are those in the output"}},
	{Name: FormatDTrace, Fidelity: []string{
		"dtrace: no split between queueing and the device",
		"dtrace: offsets are block numbers times the block size (512-byte sectors on Linux, 4096-byte blocks assumed on macOS, or --block-size), and syscalls are tied to a file descriptor, not a file",
		"imported D output: dtrace's drop messages go to stderr and are not in it",
	}},
	{Name: FormatBlkparse, Platform: "linux", Fidelity: []string{"blkparse: a request is timed from its first bio's queueing (Q) through dispatch (D) to completion (C); its size is what was dispatched"}},
	{Name: FormatBlktrace, Platform: "linux", Fidelity: []string{"blktrace: a request is timed from its first bio's queueing (Q) through dispatch (D) to completion (C); its size is what was dispatched"}},
	{Name: FormatBiosnoop, Platform: "linux",
		Fidelity: []string{"biosnoop: the process is the one on the CPU when the request was issued, which for writeback is often not the writer"},
		Header:   "TIME(s) COMM PID DISK T SECTOR BYTES [QUE(ms)] LAT(ms)"},
	{Name: FormatDisksnoop, Platform: "linux", Header: "TIME(s) T BYTES LAT(ms)"},
	{Name: FormatIosnoop, Platform: "solaris",
		Fidelity: []string{"DTraceToolkit iosnoop: BLOCK is b_blkno, in 512-byte sectors on Solaris and device blocks (4096 bytes on APFS) on macOS: the unit is found from runs of contiguous I/O, or given with --block-size"},
		Header:   "UID PID D BLOCK SIZE COMM PATHNAME"},
	{Name: FormatPerfIosnoop, Platform: "linux", Header: "[STARTs ENDs] COMM PID TYPE DEV BLOCK BYTES LATms"},
	{Name: FormatBiosnoopBT, Platform: "linux", Header: "TIME(ms) [DISK] COMM PID LAT(ms)"},
	{Name: FormatFioIolog, Fidelity: []string{"fio iolog: what fio asked for, at the syscall layer; each file is shown as a device of its own"}},
	{Name: FormatMSR},
	{Name: FormatAlibaba},
	{Name: FormatTencent},
}

// Formats lists every format import reads, for messages and --format.
var Formats = func() []Format {
	out := make([]Format, len(formatTable))
	for i, f := range formatTable {
		out[i] = f.Name
	}
	return out
}()

// Info is the table's entry for f; false for a format import does not read.
func Info(f Format) (FormatInfo, bool) {
	for _, fi := range formatTable {
		if fi.Name == f {
			return fi, true
		}
	}
	return FormatInfo{}, false
}
