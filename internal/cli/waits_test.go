package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
)

// runWithin runs ioshape and fails the test if it has not ended in d: a
// wait that ignores everything but SIGKILL is what these tests look for.
func runWithin(t *testing.T, d time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c := ioshapeCmd(nil, args...)
	c.Cancel = func() error { return c.Process.Kill() }
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	c = withContext(ctx, c)
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v: %s", args, d, errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// withContext rebinds c to ctx (exec.Cmd takes its context at creation).
func withContext(ctx context.Context, c *exec.Cmd) *exec.Cmd {
	n := exec.CommandContext(ctx, c.Path, c.Args[1:]...)
	n.Env, n.Stdout, n.Stderr, n.WaitDelay = c.Env, c.Stdout, c.Stderr, c.WaitDelay
	n.Cancel = func() error { return n.Process.Kill() }
	return n
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		testutil.Unavailable(t, "cannot make a FIFO: %v", err)
	}
}

// An output FIFO nobody reads, a FIFO or endless device named as a drive
// profile, and a blktrace run whose sibling is a FIFO: each one line at
// once, never a wait only SIGKILL ends.
func TestNoUninterruptibleWaits(t *testing.T) {
	dir := t.TempDir()
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "-o", fifo, trace, trace}, "no reader"},
		{[]string{"report", "-o", fifo, trace}, "no reader"},
		{[]string{"predict", "--drive", fifo, trace}, "not a regular file"},
		{[]string{"predict", "--drive", "/dev/zero", trace}, "not a regular file"},
		{[]string{"classify", "--drive", fifo, trace}, "not a regular file"},
	} {
		r := runWithin(t, 20*time.Second, append([]string{"--store", t.TempDir()}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args[:2], r.code, r.stderr, c.want)
			continue
		}
		singleLine(t, r.stderr)
	}
	// A run's per-CPU files: x.blktrace.0 (cut short), x.blktrace.1 a FIFO.
	run := filepath.Join(dir, "x.blktrace.0")
	os.WriteFile(run, []byte("\x07\x74\x61\x65"+strings.Repeat("\x00", 20)), 0o644)
	mkfifo(t, filepath.Join(dir, "x.blktrace.1"))
	r := runWithin(t, 20*time.Second, "--store", t.TempDir(), "import", run)
	if r.code == 0 || !strings.Contains(r.stderr, "cut short") {
		t.Errorf("import beside a FIFO sibling: exit %d, %q", r.code, r.stderr)
	}
}

// Ctrl-C (SIGINT) and SIGTERM end an import waiting for its FIFO's writer.
func TestImportWaitingOnFIFOEndsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		fifo := filepath.Join(t.TempDir(), "capture")
		mkfifo(t, fifo)
		c := ioshapeCmd(nil, "--store", t.TempDir(), "import", "--format", "msr", fifo)
		var errb strings.Builder
		c.Stderr = &errb
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if !endsOn(c, sig) {
			t.Fatalf("%v: the import waiting on its FIFO did not end", sig)
		}
		if c.ProcessState.ExitCode() == 0 {
			t.Errorf("%v: exit 0", sig)
		}
	}
}

// An import of a device that yields no line (/dev/zero) ends on Ctrl-C.
func TestImportOfZerosEndsOnSignal(t *testing.T) {
	c := ioshapeCmd(nil, "--store", t.TempDir(), "import", "--format", "msr", "/dev/zero")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if !endsOn(c, syscall.SIGINT) {
		t.Fatal("an import of /dev/zero did not end on Ctrl-C")
	}
}

// endsOn sends c sig and reports whether it ends within 10 s (it is
// killed if not).
func endsOn(c *exec.Cmd, sig os.Signal) bool {
	c.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
		return true
	case <-time.After(10 * time.Second):
		c.Process.Kill()
		return false
	}
}
