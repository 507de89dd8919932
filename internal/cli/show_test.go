package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// A real recording (testdata/traces/cp-cat-dd.iotrace: cp, cat and two dd
// runs, recorded with bpftrace 0.17 on Linux 6.18) shown as text and JSON.
// The same trace classified, as text and JSON.
func TestShowGolden(t *testing.T) {
	trace := filepath.Join("..", "..", "testdata", "traces", "cp-cat-dd.iotrace")
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"show-cp-cat-dd.txt", []string{"show", trace}},
		{"show-cp-cat-dd.json", []string{"show", "--json", trace}},
		{"show-cp-cat-dd-nowriteback.json", []string{"show", "--json", "--writeback", "exclude", trace}},
		{"classify-cp-cat-dd.txt", []string{"classify", "--adm-read", "3000,1500,800,50", "--adm-write", "2500,1400,700,120", "--drive-name", "example SSD", trace}},
		{"classify-cp-cat-dd.json", []string{"classify", "--json", "--adm-read", "3000,1500,800,50", trace}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			r := ioshape(t, []string{"TZ=UTC"}, append([]string{"--store", t.TempDir()}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			testutil.Golden(t, testutil.Repo(t, "testdata", "golden", c.golden), []byte(r.stdout))
		})
	}
}

func TestShowErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.iotrace")
	os.WriteFile(garbage, []byte("this is not a trace at all"), 0o644)
	good, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", "cp-cat-dd.iotrace"))
	corrupt := filepath.Join(dir, "corrupt.iotrace")
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0x55
	os.WriteFile(corrupt, bad, 0o644)
	truncated := filepath.Join(dir, "truncated.iotrace")
	os.WriteFile(truncated, good[:40], 0o644)
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"show", garbage}, "not an ioshape trace", 1},
		{[]string{"show", truncated}, "truncated trace", 1},
		{[]string{"show", "zzzzzz"}, `no trace "zzzzzz"`, 1},
		{[]string{"show", "../../etc/passwd"}, "no trace file", 1},
		{[]string{"show"}, "accepts 1 arg", 2},
		{[]string{"show", "--writeback", "maybe", garbage}, "--writeback must be include or exclude", 2},
		{[]string{"frobnicate"}, "unknown command", 2},
	} {
		r := ioshape(t, nil, append([]string{"--store", dir}, c.args...)...)
		if r.code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, r.code, c.code, r.stderr)
		}
		if line := singleLine(t, r.stderr); !strings.Contains(line, c.want) {
			t.Errorf("%v: %q; want it to say %q", c.args, line, c.want)
		}
	}
}

// A trace damaged in one chunk is shown as far as it is intact, and says
// where reading stopped.
func TestShowDamagedTrace(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", "fio-rnd4k.iotrace"))
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0x55
	corrupt := filepath.Join(dir, "corrupt.iotrace")
	os.WriteFile(corrupt, bad, 0o644)
	r := ioshape(t, nil, "--store", dir, "show", corrupt)
	if r.code != 0 || !strings.Contains(r.stdout, "failed its checksum") {
		t.Errorf("show of a damaged trace: exit %d, %s\n%.1500s", r.code, r.stderr, r.stdout)
	}
}

func TestLsAndResolve(t *testing.T) {
	store := t.TempDir()
	r := ioshape(t, nil, "--store", store, "ls")
	if r.code != 0 || !strings.Contains(r.stderr, "no traces") {
		t.Fatalf("empty store: %d %q", r.code, r.stderr)
	}
	src, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", "cp-cat-dd.iotrace"))
	os.MkdirAll(filepath.Join(store, "traces"), 0o755)
	os.WriteFile(filepath.Join(store, "traces", "abc234.iotrace"), src, 0o644)
	os.WriteFile(filepath.Join(store, "traces", "abd567.iotrace.partial"), src[:len(src)-40], 0o644)
	r = ioshape(t, nil, "--store", store, "ls")
	if r.code != 0 || !strings.Contains(r.stdout, "abc234") || !strings.Contains(r.stdout, "cut short") {
		t.Fatalf("ls:\n%s%s", r.stdout, r.stderr)
	}
	for _, arg := range []string{"abc234", "abc", "cp, cat and dd"} {
		if r := ioshape(t, nil, "--store", store, "show", "--json", arg); r.code != 0 {
			t.Errorf("show %q: %s", arg, r.stderr)
		}
	}
	if r := ioshape(t, nil, "--store", store, "show", "ab"); r.code == 0 || !strings.Contains(r.stderr, "ambiguous") {
		t.Errorf("ambiguous prefix: %d %q", r.code, r.stderr)
	}
}
