package host

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// nvmeHead names an NVMe namespace: with multipath it is a bio-based head
// whose I/O the hidden path devices (nvme0c0n1) carry as requests, so its
// bios would count each I/O twice.
var nvmeHead = regexp.MustCompile(`^nvme[0-9]+n[0-9]+$`)

// BioBasedDevices lists, in the kernel's dev_t encoding, the disks under
// sysBlock (and their partitions) whose drivers take bios directly — zram,
// brd, pmem — and so never reach the block_rq_* tracepoints. Stacked
// devices (device-mapper, md: they have slaves) are left out: the requests
// of the disks under them are what the drive saw.
func BioBasedDevices(sysBlock string) []uint32 {
	disks, _ := os.ReadDir(sysBlock)
	var out []uint32
	for _, d := range disks {
		dir := filepath.Join(sysBlock, d.Name())
		if _, err := os.Stat(filepath.Join(dir, "mq")); err == nil || nvmeHead.MatchString(d.Name()) {
			continue
		}
		if slaves, _ := os.ReadDir(filepath.Join(dir, "slaves")); len(slaves) > 0 {
			continue
		}
		if dev, ok := readDev(filepath.Join(dir, "dev")); ok {
			out = append(out, dev)
		}
		parts, _ := os.ReadDir(dir)
		for _, p := range parts {
			if strings.HasPrefix(p.Name(), d.Name()) {
				if dev, ok := readDev(filepath.Join(dir, p.Name(), "dev")); ok {
					out = append(out, dev)
				}
			}
		}
	}
	return out
}

// readDev reads a sysfs "major:minor" file as major << 20 | minor.
func readDev(path string) (uint32, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 32)) // "major:minor\n"
	maj, min, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
	ma, err1 := strconv.ParseUint(maj, 10, 12)
	mi, err2 := strconv.ParseUint(min, 10, 20)
	if !ok || err1 != nil || err2 != nil {
		return 0, false
	}
	return uint32(ma<<20 | mi), true
}
