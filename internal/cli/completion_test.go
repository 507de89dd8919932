package cli

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/testutil"
)

// Completion offers what the store holds and what a flag takes, as the
// shells ask for it (cobra's __complete, which bash, zsh and fish call).
func TestCompletionOffersTracesDrivesAndValues(t *testing.T) {
	dir := t.TempDir()
	trace, _ := os.ReadFile(testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace"))
	os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
	for _, id := range []string{"abc234", "abd567", "xyz789"} {
		os.WriteFile(filepath.Join(dir, "traces", id+store.Ext), trace, 0o644)
	}
	d, err := drive.Coarse("external-ssd", []float64{3000, 1500, 800, 50}, []float64{2800, 1400, 700, 120})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(dir).SaveDrive(d); err != nil {
		t.Fatal(err)
	}
	complete := func(args ...string) []string {
		t.Helper()
		r := ioshape(t, nil, append([]string{"--store", dir, "__complete"}, args...)...)
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if !strings.HasPrefix(line, ":") {
				out = append(out, strings.SplitN(line, "\t", 2)[0])
			}
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"show", "ab"}, []string{"abc234", "abd567"}, []string{"xyz789"}},
		{[]string{"report", ""}, []string{"abc234", "abd567", "xyz789"}, nil},
		{[]string{"compare", "abc234", "x"}, []string{"xyz789"}, nil},
		{[]string{"predict", "--drive", ""}, []string{"external-ssd"}, nil},
		{[]string{"report", "--predict-on", ""}, []string{"external-ssd"}, nil},
		{[]string{"record", "--backend", ""}, []string{"auto", "native", "bpftrace", "dtrace", "fsusage"}, nil},
		{[]string{"record", "--layers", ""}, []string{"both", "block", "syscall"}, nil},
		{[]string{"import", "--format", ""}, []string{"auto", "fs_usage", "blkparse", "msr"}, nil},
		{[]string{"export", "--by", ""}, []string{"phase", "program"}, nil},
		{[]string{"replay", "--mode", ""}, []string{"job", "iolog"}, nil},
		{[]string{"show", "--writeback", ""}, []string{"include", "exclude"}, nil},
	} {
		got := strings.Join(complete(c.args...), " ")
		for _, w := range c.want {
			if !strings.Contains(" "+got+" ", " "+w+" ") {
				t.Errorf("%v: %q lacks %s", c.args, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%v: %q offers %s", c.args, got, n)
			}
		}
	}
}

// go install …@vX stamps no ldflags: the module's version in the build
// info stands for the release, a local build's "(devel)" for nothing.
func TestModuleVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.4.2": "1.4.2", "v0.0.0-20261126095103-fa219d5abcde": "0.0.0-20261126095103-fa219d5abcde", "(devel)": "", "": ""} {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/ioshape/ioshape", Version: in}}
		if got := moduleVersion(info); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
