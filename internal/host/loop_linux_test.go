package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A partition's I/O may be reported under its disk: WithDisk names both;
// a whole disk is itself alone. The partition is one added to a loop
// device (addpart: the kernel need not read partition tables).
func TestWithDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a partitioned loop device needs root")
	}
	img := filepath.Join(t.TempDir(), "parted.img")
	if err := os.WriteFile(img, make([]byte, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", loop).Run() })
	if out, err := exec.Command("addpart", loop, "1", "2048", "4096").CombinedOutput(); err != nil {
		t.Fatalf("addpart: %v %s", err, out)
	}
	// A partition added so outlives the loop device's detaching.
	t.Cleanup(func() { exec.Command("delpart", loop, "1").Run() })
	devOf := func(name string) event.Dev {
		t.Helper()
		var dev uint32
		ok := false
		for i := 0; i < 50 && !ok; i++ { // the kernel may still be scanning the table
			if dev, ok = readDev(filepath.Join("/sys/class/block", name, "dev")); !ok {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if !ok {
			t.Fatalf("no %s in /sys/class/block", name)
		}
		return event.DevFromKernel(uint64(dev))
	}
	disk, part := devOf(filepath.Base(loop)), devOf(filepath.Base(loop)+"p1")
	if got := WithDisk(part); len(got) != 2 || got[0] != part || got[1] != disk {
		t.Errorf("partition %v: %v; want it and its disk %v", part, got, disk)
	}
	if got := WithDisk(disk); len(got) != 1 || got[0] != disk {
		t.Errorf("disk %v: %v; want itself alone", disk, got)
	}
}
