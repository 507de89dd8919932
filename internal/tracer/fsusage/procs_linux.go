package fsusage

import (
	"os"
	"strconv"
	"strings"
)

// scanProcesses reads /proc: on Linux only the fake fs_usage of the tests
// runs, and its lines carry real thread IDs of this machine.
func scanProcesses() (threads, parents map[uint32]uint32, err error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil, err
	}
	threads, parents = map[uint32]uint32{}, map[uint32]uint32{}
	for _, e := range entries {
		pid, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
				if ppid, err := strconv.ParseUint(f[1], 10, 32); err == nil {
					parents[uint32(pid)] = uint32(ppid)
				}
			}
		}
		tasks, _ := os.ReadDir("/proc/" + e.Name() + "/task")
		for _, t := range tasks {
			if tid, err := strconv.ParseUint(t.Name(), 10, 32); err == nil {
				threads[uint32(tid)] = uint32(pid)
			}
		}
	}
	return threads, parents, nil
}
