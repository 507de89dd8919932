package fsusage

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// proc_info(PROC_INFO_CALL_PIDINFO, pid, PROC_PIDLISTTHREADIDS) lists a
// process's thread IDs, the same IDs kdebug stamps on events (xnu
// bsd/sys/proc_info.h, libproc). Raw system calls, not cgo, so that
// darwin builds cross-compile.
const (
	procInfoCallPidinfo  = 2
	procPidListThreadIDs = 28
)

// scanProcesses reads every process (sysctl kern.proc.all) and its
// threads.
func scanProcesses() (threads, parents map[uint32]uint32, err error) {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, nil, err
	}
	threads, parents = map[uint32]uint32{}, map[uint32]uint32{}
	buf := make([]uint64, 1024)
	for _, p := range procs {
		pid := p.Proc.P_pid
		if pid <= 0 {
			continue
		}
		parents[uint32(pid)] = uint32(p.Eproc.Ppid)
		n, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPidinfo, uintptr(pid), procPidListThreadIDs, 0,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)*8))
		if errno != 0 {
			continue // gone, or not ours to see
		}
		for _, tid := range buf[:min(int(n)/8, len(buf))] {
			if tid != 0 {
				threads[uint32(tid)] = uint32(pid)
			}
		}
	}
	return threads, parents, nil
}
