package host

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// userHz is the unit of /proc/stat's times: USER_HZ, 100 on every Linux
// architecture ioshape builds for, whatever the kernel's own tick.
const userHz = 100

// parseStatSteal reads the steal time of /proc/stat's first line (the
// CPUs' sum): its eighth figure, in USER_HZ. Only the first 4 KiB are read:
// the line is short, and the file's interrupt counts are not.
func parseStatSteal(r io.Reader) (time.Duration, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, 4<<10), 4<<10).ReadString('\n')
	if err != nil { // no whole line in 4 KiB: not a line to take in part
		return 0, errors.New("no first line in /proc/stat")
	}
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, errors.New("no steal time in the first line of /proc/stat")
	}
	ticks, err := strconv.ParseUint(f[8], 10, 63)
	if err != nil || ticks > uint64(1<<62)/uint64(time.Second/userHz) {
		return 0, errors.New("the steal time in /proc/stat is not a count")
	}
	return time.Duration(ticks) * (time.Second / userHz), nil
}
