package bench

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
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
