package parse

import (
	"fmt"
	"strings"

	"github.com/ioshape/ioshape/internal/event"
)

// blockUnit finds the unit of DTraceToolkit iosnoop's BLOCK column: b_blkno,
// which Solaris counts in 512-byte sectors (DEV_BSIZE) and macOS in the
// device's blocks, 4096 bytes on APFS. The capture says which where it
// holds runs of contiguous I/O: a request that continues the one before it
// on its device starts size/512 blocks further in one unit, size/4096 in
// the other. Rows are held until it is known.
type blockUnit struct {
	size  int64 // bytes per BLOCK; 0 until known
	given bool  // --block-size
	why   string

	hold     []Record
	last     map[event.Dev][2]int64 // per device, the last row's block and size
	at512    int64                  // rows continuing the last at 512-byte units
	at4096   int64                  // … at 4096-byte units
	pairs    int64
	macNames bool // devices named as a Mac names them (disk0s2)
}

// maxUnitHeld bounds the rows held while the unit is unknown.
const maxUnitHeld = 1 << 14

// minRuns is how many contiguous pairs settle the unit.
const minRuns = 4

func (u *blockUnit) held() bool { return len(u.hold) > 0 }

// add takes a row (Offset in BLOCK units) and appends to out what can go.
func (u *blockUnit) add(rec Record, out []Record) []Record {
	if u.size > 0 {
		u.scale(&rec.Event)
		return append(out, rec)
	}
	e := &rec.Event
	if e.Offset >= 0 && e.Size > 0 {
		if l, ok := u.last[e.Dev]; ok {
			u.pairs++
			if e.Offset == l[0]+l[1]/512 {
				u.at512++
			}
			if l[1]%4096 == 0 && e.Offset == l[0]+l[1]/4096 {
				u.at4096++
			}
		}
		if len(u.last) < MaxImportDevices {
			u.last[e.Dev] = [2]int64{e.Offset, e.Size}
		}
	}
	u.hold = append(u.hold, rec)
	if len(u.hold) >= maxUnitHeld || u.at512 >= 64*minRuns || u.at4096 >= 64*minRuns {
		return u.decide(out)
	}
	return out
}

// decide settles the unit on what was seen and passes the held rows on.
func (u *blockUnit) decide(out []Record) []Record {
	if u.size == 0 {
		runs := fmt.Sprintf("%d of %d consecutive I/Os on a device continue the one before at 4 KiB units, %d at 512 B", u.at4096, u.pairs, u.at512)
		switch {
		case u.at4096 >= minRuns && u.at4096 > 2*u.at512:
			u.size, u.why = 4096, "iosnoop BLOCK read as 4096-byte blocks (macOS device blocks): "+runs
		case u.at512 >= minRuns && u.at512 > 2*u.at4096:
			u.size, u.why = 512, "iosnoop BLOCK read as 512-byte sectors: "+runs
		case u.macNames:
			u.size, u.why = 4096, "iosnoop BLOCK read as 4096-byte blocks: the devices are a Mac's, and too few runs of contiguous I/O tell otherwise ("+runs+"); --block-size overrides"
		default:
			u.size, u.why = 512, "iosnoop BLOCK read as 512-byte sectors (DEV_BSIZE): too few runs of contiguous I/O tell otherwise ("+runs+"); --block-size overrides"
		}
	}
	for i := range u.hold {
		u.scale(&u.hold[i].Event)
	}
	out = append(out, u.hold...)
	u.hold = nil
	return out
}

func (u *blockUnit) scale(e *event.Event) {
	if e.Offset > 0 {
		e.Offset *= u.size
	}
}

// noteDevice notes a device's name: a Mac's are disk<N>[s<M>…].
func (u *blockUnit) noteDevice(name string) {
	if rest, ok := strings.CutPrefix(name, "disk"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		u.macNames = true
	}
}
