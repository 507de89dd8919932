package analysis

import (
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// The recording drive is the newest profile of the same host, disk and
// I/O cgroup: the disk that moved most of the trace's bytes, partitions
// counted with their disk; a throttled cgroup's profile is another drive.
func TestRecordedOn(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	known := []*drive.Spec{
		{Name: "vda-old", Host: "vm", Device: "vda", Date: day(1)},
		{Name: "vda", Host: "vm", Device: "vda", Date: day(2)},
		{Name: "slow", Host: "vm", Device: "vda", Cgroup: "/slow", Date: day(3)},
		{Name: "zram", Host: "vm", Device: "zram0", Date: day(2)},
		{Name: "elsewhere", Host: "mac", Device: "vda", Date: day(4)},
		{Name: "adm", Host: "vm", Device: "vda", Date: day(5), Coarse: true},
	}
	meta := func(cgroup string) tracefile.Meta {
		return tracefile.Meta{
			Header: tracefile.Header{Host: "vm", Target: tracefile.Target{Cgroup: cgroup}},
			Footer: &tracefile.Footer{Devices: []event.Device{
				{Major: 254, Minor: 0, Name: "vda"}, {Major: 254, Minor: 1, Name: "vda1", Disk: "vda"},
				{Major: 252, Minor: 0, Name: "zram0"},
			}},
		}
	}
	vda := map[event.Dev]int64{{Major: 254, Minor: 0}: 10 << 20, {Major: 254, Minor: 1}: 10 << 20, {Major: 252, Minor: 0}: 15 << 20}
	zram := map[event.Dev]int64{{Major: 254, Minor: 0}: 10 << 20, {Major: 252, Minor: 0}: 15 << 20}
	for _, c := range []struct {
		name  string
		meta  tracefile.Meta
		bytes map[event.Dev]int64
		want  string
	}{
		{"disk and partition together", meta(""), vda, "vda"},
		{"most bytes", meta(""), zram, "zram"},
		{"throttled cgroup", meta("/slow"), vda, "slow"},
		{"no profile for this cgroup", meta("/other"), vda, ""},
		{"no bytes", meta(""), nil, ""},
	} {
		got := RecordedOn(c.meta, c.bytes, known)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != c.want {
			t.Errorf("%s: %q, want %q", c.name, name, c.want)
		}
	}
}
