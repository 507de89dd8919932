//go:build e2e

package dtrace

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// What dtrace prints on its way out — dynamic variable drops, run-time
// errors — is counted like what it prints while running.
func TestExitMessagesCounted(t *testing.T) {
	bin, err := filepath.Abs("../../../testdata/fakebin/dtrace")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_DTRACE_EXIT_MSGS", "1")
	s, err := Prepare(session.Config{DTrace: bin, FsUsage: "/nonexistent", Target: session.Target{All: true, Duration: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), &testutil.CountSink{})
	if err != nil {
		t.Fatal(err)
	}
	if res.MapOverflows != 5 || res.ProbeErrors != 1 || res.Unmatched != 2 {
		t.Fatalf("map overflows %d, probe errors %d, unmatched %d: want 5, 1, 2", res.MapOverflows, res.ProbeErrors, res.Unmatched)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "invalid kernel access")
	}
	if !found {
		t.Errorf("the run-time error is not among the warnings: %q", res.Warnings)
	}
}
