package parse

import (
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

func TestDecodeNativeSummary(t *testing.T) {
	hist := make([]uint64, 128)
	hist[44] = 7
	for _, c := range []struct {
		n          NativeSummary
		layer      event.Layer
		op         event.Op
		copySource bool
		kernel     bool
	}{
		{NativeSummary{Layer: 0, Op: nativeOpWrite, Kthread: 1}, event.Block, event.Write, false, true},
		{NativeSummary{Layer: 0, Op: nativeOpFlush}, event.Block, event.Flush, false, false},
		{NativeSummary{Layer: 1, Op: uint8(event.CallPwrite64)}, event.Syscall, event.Write, false, false},
		{NativeSummary{Layer: 1, Op: uint8(event.CallCopyFileRange), Role: 1}, event.Syscall, event.Read, true, false},
		{NativeSummary{Layer: 1, Op: uint8(event.CallCopyFileRange), Role: 2}, event.Syscall, event.Write, false, false},
		{NativeSummary{Layer: 1, Op: uint8(event.CallFsync)}, event.Syscall, event.Flush, false, false},
	} {
		n := c.n
		n.Sec, n.Pid, n.Dev, n.Count, n.Size = 12, 42, 254<<20|3, 7, hist
		s, err := DecodeNativeSummary(&n, "fio")
		if err != nil {
			t.Fatal(err)
		}
		if s.Layer != c.layer || s.Op != c.op || s.CopySource != c.copySource || s.Kernel != c.kernel ||
			s.Start != 12e9 || s.Dev != (event.Dev{Major: 254, Minor: 3}) || s.Pid != 42 || s.Comm != "fio" ||
			len(s.Size) != 1 || s.Size[0] != (event.HistCount{44, 7}) || s.Lat != nil {
			t.Errorf("%+v decoded as %+v", c.n, s)
		}
	}
	for _, bad := range []NativeSummary{{Layer: 2}, {Layer: 1, Op: 250}} {
		if _, err := DecodeNativeSummary(&bad, ""); err == nil {
			t.Errorf("%+v decoded without error", bad)
		}
	}
}
