//go:build e2e

package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeBpftraceCapture writes n syscall lines in the format of ioshape's
// bpftrace script: a capture large enough that importing it takes seconds.
func writeBpftraceCapture(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "READY amd64")
	for i := range n {
		start := int64(1e9) + int64(i)*20e3
		fmt.Fprintf(w, "S 1 %d %d 4242 4242 7 266338304 326269 %d 4096 4096 32768 0 fio\n", start, start+9e3, int64(i)*4096)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Ctrl-C stops each long command within a second, with one line and a
// non-zero exit, and leaves no output file behind.
func TestInterruptStopsLongCommands(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "big.iotrace")
	writeSyntheticTrace(t, trace, 6_000_000)
	capture := filepath.Join(dir, "capture.txt")
	writeBpftraceCapture(t, capture, 6_000_000)
	out := filepath.Join(dir, "out.html")
	imported := filepath.Join(dir, "imported.iotrace")
	for _, c := range []struct {
		name   string
		args   []string
		output string // must not exist afterwards
	}{
		{"show", []string{"show", trace}, ""},
		{"report", []string{"report", "-o", out, trace}, out},
		{"classify", []string{"classify", trace}, ""},
		{"compare", []string{"compare", "-o", out, trace, trace}, out},
		{"events", []string{"events", trace}, ""},
		{"import", []string{"import", "-o", imported, capture}, imported},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A fixed delay raced the faster commands on a fast machine
			// (show reads this trace in 0.4 s): signal a third of the way
			// into the command's own uninterrupted run.
			whole := ioshapeCmd(nil, append([]string{"--store", t.TempDir()}, c.args...)...)
			var wholeErr bytes.Buffer
			whole.Stdout, whole.Stderr = io.Discard, &wholeErr // events prints every event
			began := time.Now()
			if err := whole.Run(); err != nil {
				t.Fatalf("uninterrupted run: %v\n%.2000s", err, wholeErr.String())
			}
			runs := time.Since(began)
			if runs < 150*time.Millisecond {
				t.Fatalf("the uninterrupted run took %v: too short to interrupt; make the input larger", runs)
			}
			if c.output != "" {
				os.Remove(c.output)
			}
			var stdout, stderr bytes.Buffer
			cmd := ioshapeCmd(nil, append([]string{"--store", t.TempDir()}, c.args...)...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(runs / 3)
			sent := time.Now()
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			took := time.Since(sent)
			if took > time.Second {
				t.Errorf("exited %v after SIGINT, want within a second", took)
			}
			t.Logf("exited %v after SIGINT", took)
			if err == nil || cmd.ProcessState.ExitCode() != 130 {
				t.Errorf("exit %v, want status 130", err)
			}
			if got := strings.TrimSpace(stderr.String()); got != "ioshape: interrupted" {
				t.Errorf("stderr %q, want the one line \"ioshape: interrupted\"", got)
			}
			if c.output != "" {
				if _, err := os.Stat(c.output); err == nil {
					t.Errorf("%s was left behind", c.output)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, ".ioshape-*")); len(left) > 0 {
					t.Errorf("temporary files left behind: %v", left)
				}
				if left, _ := filepath.Glob(c.output + ".partial"); len(left) > 0 {
					t.Errorf("partial trace left behind: %v", left)
				}
			}
		})
	}
}
