//go:build linux

package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// SizeZram gives zram0 a disk of size (e.g. "256M") for the test and
// resets it after; a test that needs it cannot run (and fails under
// CI=true) when there is none or something else uses it.
func SizeZram(t *testing.T, size string) {
	t.Helper()
	disksize := "/sys/block/zram0/disksize"
	if _, err := os.Stat(disksize); err != nil {
		exec.Command("modprobe", "zram").Run()
	}
	b, err := os.ReadFile(disksize)
	if err != nil {
		Unavailable(t, "no zram device: %v", err)
	}
	if strings.TrimSpace(string(b)) != "0" {
		Unavailable(t, "zram0 is in use by something else")
	}
	if err := os.WriteFile(disksize, []byte(size), 0); err != nil {
		Unavailable(t, "cannot size zram0: %v", err)
	}
	t.Cleanup(func() { os.WriteFile("/sys/block/zram0/reset", []byte("1"), 0) })
}

// ZramFS gives zram0 a disk of size with a fresh ext4 on it, mounted for
// the test at the directory it returns (unmounted and reset after).
func ZramFS(t *testing.T, size string) string {
	t.Helper()
	SizeZram(t, size)
	dir := t.TempDir()
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "/dev/zram0").CombinedOutput(); err != nil {
		Unavailable(t, "mkfs.ext4 on zram0: %v %s", err, out)
	}
	if out, err := exec.Command("mount", "/dev/zram0", dir).CombinedOutput(); err != nil {
		Unavailable(t, "mount zram0: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() }) // before SizeZram's reset: cleanups run last first
	return dir
}
