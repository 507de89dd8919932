package host

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/event"
)

// A loop device sits on the device its backing file is on (a fake sysfs
// directory naming a real file); a file on no block device, a backing file
// gone, or another kind of device: nothing under it.
func TestLoopLower(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sys := func(backing string) string {
		d := t.TempDir()
		if backing != "" {
			os.MkdirAll(filepath.Join(d, "loop"), 0o755)
			os.WriteFile(filepath.Join(d, "loop", "backing_file"), []byte(backing+"\n"), 0o644)
		}
		return d
	}
	var st unix.Stat_t
	if err := unix.Stat(img, &st); err != nil {
		t.Fatal(err)
	}
	want := event.Dev{Major: unix.Major(uint64(st.Dev)), Minor: unix.Minor(uint64(st.Dev))}
	got := loopLower(sys(img))
	switch {
	case want.Major == 0 && got != nil:
		t.Errorf("a file on %v (no block device): %v under it", want, got)
	case want.Major != 0 && (len(got) == 0 || got[0] != want):
		t.Errorf("a file on %v: %v under it", want, got)
	}
	for _, backing := range []string{"", filepath.Join(dir, "gone.img")} {
		if got := loopLower(sys(backing)); got != nil {
			t.Errorf("backing %q: %v under it", backing, got)
		}
	}
}
