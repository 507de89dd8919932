//go:build linux

package session

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the helper, as ioshape's binary does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperCommand {
		if err := RunHelper(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func openFDs(t *testing.T) int {
	t.Helper()
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(des)
}

// A helper that runs its command to the end leaves no descriptor open in
// ioshape: the /dev/null streams it was given and its pipes are closed (the
// daemon starts one per recording).
func TestHelperLeaksNoDescriptors(t *testing.T) {
	before := openFDs(t)
	for i := 0; i < 5; i++ {
		h, err := StartHelper(Config{}, []string{"/bin/true"})
		if err != nil {
			t.Fatal(err)
		}
		h.Release()
		deadline := time.After(10 * time.Second)
	wait:
		for {
			select {
			case line, ok := <-h.StatusLines():
				if !ok {
					break wait
				}
				if !strings.HasPrefix(line, "pid ") && line != "exit 0" {
					t.Fatalf("status %q", line)
				}
			case <-deadline:
				t.Fatal("the helper never finished")
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // the Wait goroutine reaps the last one
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open after 5 helpers, %d before", after, before)
	}
}

// A helper that cannot start leaves no pipe open.
func TestHelperThatCannotStartLeaksNothing(t *testing.T) {
	old := helperExecutable
	helperExecutable = func() (string, error) { return "/nonexistent/ioshape", nil }
	defer func() { helperExecutable = old }()
	before := openFDs(t)
	for i := 0; i < 5; i++ {
		if _, err := StartHelper(Config{}, []string{"/bin/true"}); err == nil {
			t.Fatal("the helper started from a path that does not exist")
		}
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open after 5 failed starts, %d before", after, before)
	}
}
