//go:build e2e

package fsusage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// The fake fs_usage in testdata/fakebin stands in for macOS's.
func fake(t *testing.T, env ...string) session.Config {
	t.Helper()
	bin, err := filepath.Abs("../../../testdata/fakebin/fs_usage")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return session.Config{FsUsage: bin, Target: session.Target{All: true, Duration: 300 * time.Millisecond}, Grace: 500 * time.Millisecond}
}

// Overruns fs_usage reports on its way out are counted, every one: the
// count flows through the loop, not a variable read while stderr is still
// being read.
func TestOverrunsAtExitAreCounted(t *testing.T) {
	cfg := fake(t, "FAKE_FSUSAGE_EXIT_OVERRUNS=25")
	s, err := Prepare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		res, err := s.Run(context.Background(), &testutil.CountSink{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Lost != 25 {
			t.Fatalf("run %d: lost %d, want the 25 overruns fs_usage reported", i, res.Lost)
		}
	}
}

// An fs_usage that ignores SIGINT is killed after the grace period and
// does not outlive the recording.
func TestKilledAfterGrace(t *testing.T) {
	cfg := fake(t, "FAKE_FSUSAGE_IGNORE_INT=1")
	s, err := Prepare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan session.Result, 1)
	go func() {
		res, _ := s.Run(context.Background(), &testutil.CountSink{})
		done <- res
	}()
	select {
	case res := <-done:
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("took %v", took)
		}
		found := false
		for _, w := range res.Warnings {
			found = found || strings.Contains(w, "did not stop within")
		}
		if !found {
			t.Errorf("no word of the kill in %q", res.Warnings)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the recording never ended: fs_usage was not killed")
	}
}
