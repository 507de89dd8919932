package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

// Update is the -update flag of every package that has golden files.
var Update = flag.Bool("update", false, "rewrite golden files")

// Root is the repository's top directory (the one with go.mod).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Repo is a path inside the repository.
func Repo(t testing.TB, rel ...string) string {
	return filepath.Join(append([]string{Root(t)}, rel...)...)
}

// Unavailable ends a test that cannot run here: under CI=true it fails
// (CI must run everything), elsewhere it skips, saying why.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s, and CI=true: this test must run in CI", why)
	}
	t.Skip(why)
}

// Shared is a file in ../shared beside the checkout (real samples and
// references from elsewhere, read where they are, never copied in). A
// missing one fails the test under CI=true and skips it otherwise.
func Shared(t testing.TB, rel ...string) string {
	t.Helper()
	path := filepath.Join(append([]string{Root(t), "..", "shared"}, rel...)...)
	if _, err := os.Stat(path); err != nil {
		Unavailable(t, "%s is missing (../shared must sit beside the checkout)", filepath.Join(rel...))
	}
	return path
}

// Golden compares got with the golden file at path, or rewrites it with
// -update. A difference is reported with a diff of the first lines that
// differ.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update, then review git diff):\n%s", path, Diff(string(want), string(got), 12))
	}
}

// Diff shows where two texts' lines first differ: up to max lines of each
// side from there, "-" for want and "+" for got, with line numbers.
func Diff(want, got string, max int) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d (want %d lines, got %d)\n", i+1, len(w), len(g))
	for k := i; k < len(w) && k < i+max; k++ {
		fmt.Fprintf(&b, "-%d: %s\n", k+1, clip(w[k]))
	}
	for k := i; k < len(g) && k < i+max; k++ {
		fmt.Fprintf(&b, "+%d: %s\n", k+1, clip(g[k]))
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// LargeEvents is how many events the tests of long traces use: 10 M with
// IOSHAPE_TEST_LARGE=1 (as CI sets), else 1 M, so a developer's go test
// stays quick.
func LargeEvents() int {
	if os.Getenv("IOSHAPE_TEST_LARGE") == "1" {
		return 10_000_000
	}
	return 1_000_000
}

// CountSink is a recording's sink that counts the events (and summary
// rows) it is given.
type CountSink struct{ N, Rows int }

func (c *CountSink) Write(*event.Event) error          { c.N++; return nil }
func (c *CountSink) WriteSummary(*event.Summary) error { c.Rows++; return nil }
func (c *CountSink) FlushIfDue(time.Duration) error    { return nil }
