package bench

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// directIO: macOS has no O_DIRECT; fio's direct=1 sets F_NOCACHE, which
// every file system takes.
func directIO(string) (bool, error) { return true, nil }

// dropCaches empties the file cache with purge(8).
func dropCaches() error {
	syscall.Sync()
	if out, err := exec.Command("purge").CombinedOutput(); err != nil {
		return fmt.Errorf("cannot empty the file cache with purge: %w %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// openDirect opens path past the file cache (F_NOCACHE), creating it.
func openDirect(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_NOCACHE, 1); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
