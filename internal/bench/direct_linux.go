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
	return nil
}

// openDirect opens path for direct I/O, creating it.
func openDirect(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o600)
}
