package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// directIO reports whether the file system takes O_DIRECT. Without it,
// tests run buffered with the cache dropped, which needs root.
func directIO(file string) (bool, error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o644)
	if err == nil {
		f.Close()
		return true, nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return false, fmt.Errorf("cannot open %s: %w", file, UnwrapPath(err))
	}
	if os.Geteuid() != 0 {
		return false, fmt.Errorf("%s's file system does not take direct I/O (O_DIRECT); measuring it buffered needs root to drop the page cache between tests: run with sudo", filepath.Dir(file))
	}
	return false, nil
}

func dropCaches() error {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0); err != nil {
		return fmt.Errorf("cannot drop the page cache: %w", err)
	}
	backFreeMemory(refillBytes)
	return nil
}

// refillBytes is as much as a calibration's cold read puts back in the
// page cache (cacheReadBytes), with room to spare.
const refillBytes = 2 * cacheReadBytes

// backFreeMemory touches n bytes of fresh memory (a quarter of what is
// free at most) and frees it. A VM that reports its free pages to the
// host (virtio-balloon free page reporting) has handed them back: the
// page cache a cold read then refills pays the host's page fault for each
// page — a cost of the VM's memory, not of the drive, and one that comes
// and goes with what the host took back (the same cold cp of 256 MiB on
// the VM disk took 0.20 to 0.57 s). validate-predict.sh does the same
// before each recording.
func backFreeMemory(n int64) {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		n = min(n, int64(si.Freeram)*int64(si.Unit)/4)
	}
	if n < 1<<20 {
		return
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return // a measure a little colder, not a failure
	}
	unix.Munmap(b)
}

// openDirect opens path for direct I/O, creating it.
func openDirect(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o600)
}
