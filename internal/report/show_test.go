package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// The lines that account for loss say one thing: never "no events lost"
// beside a LOST line, a few requests in flight at the end are not a loss,
// and more than a drive keeps in flight are.
func TestLossLinesAgree(t *testing.T) {
	for _, c := range []struct {
		name        string
		footer      tracefile.Footer
		want, never []string
	}{
		{"clean", tracefile.Footer{}, []string{"no events lost"}, []string{"LOST", "in flight"}},
		{"one in flight", tracefile.Footer{UnfinishedRequests: 1}, []string{"no events lost", "in flight 1 requests"}, []string{"LOST"}},
		{"lost silently", tracefile.Footer{UnfinishedRequests: 6200}, []string{"LOST DATA the tracer reported no loss, but 6,200"}, []string{"no events lost", "in flight 6"}},
		{"lost both ways", tracefile.Footer{LostEvents: 5, UnfinishedRequests: 6200}, []string{"LOST DATA 5 events lost", "up to 6,200"}, []string{"no events lost"}},
		{"corrupt", tracefile.Footer{CorruptRecords: 29}, []string{"no events lost", "dropped   29 corrupted records"}, []string{"LOST"}},
		// The host's steal is said beside the loss, and is not one.
		{"host steal", tracefile.Footer{DurationNs: 26.6e9, HostStealNs: 6.8e9, CPUs: 2}, []string{"no events lost", "host took 6.8 s of the CPUs' time while recording (12.8 % of 2 CPUs over 26.6 s)"}, []string{"LOST"}},
		{"no steal counted", tracefile.Footer{DurationNs: 26.6e9}, []string{"no events lost"}, []string{"host took"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.footer
			s := NewShow("t.iotrace", tracefile.Meta{Header: tracefile.Header{ID: "x"}, Footer: &f}, &profile.Profile{})
			var b bytes.Buffer
			if err := WriteText(&b, s); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in:\n%s", w, b.String())
				}
			}
			for _, w := range c.never {
				if strings.Contains(b.String(), w) {
					t.Errorf("%q in:\n%s", w, b.String())
				}
			}
		})
	}
}
