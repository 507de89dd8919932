package dtrace

import (
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracer/session"

	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/parse"
)

// The D script cannot run here (no DTrace on Linux CI), so it is checked
// against what the reference documents for macOS: every probe, every
// translated argument field and every option it uses must appear in
// ../shared/reference/tracing.md, and every line it prints must be one
// the parser reads.
//
// Linux's system call names are checked against the README of the real
// Oracle DTrace captures in ../shared/samples/dtrace-oracle-linux.
func TestDScriptFollowsReference(t *testing.T) {
	ref, err := os.ReadFile(testutil.Shared(t, "reference", "tracing.md"))
	if err != nil {
		t.Fatal(err)
	}
	linux, err := os.ReadFile(testutil.Shared(t, "samples", "dtrace-oracle-linux", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, plat := range []string{"darwin", "linux"} {
		doc := string(ref)
		calls := darwinCalls
		if plat == "linux" {
			doc += string(linux)
			calls = linuxCalls
		}
		t.Run(plat, func(t *testing.T) { checkScript(t, plat, doc, calls) })
	}
}

func checkScript(t *testing.T, plat, doc string, calls []dCall) {
	sc, err := renderFor(plat, session.Target{Pids: []int{42}}, []int{42}, true)
	if err != nil {
		t.Fatal(err)
	}
	sc.Text = stripComments(sc.Text)
	probes := regexp.MustCompile(`(?m)^(\w+):(\w*):(\w*):(\w+)`).FindAllStringSubmatch(sc.Text, -1)
	if len(probes) < 20 {
		t.Fatalf("only %d probes found", len(probes))
	}
	for _, p := range probes {
		provider, fn, name := p[1], p[3], p[4]
		switch provider {
		case "syscall":
			if !strings.Contains(doc, "`"+fn+"`") && !strings.Contains(doc, "syscall::"+fn+":") {
				t.Errorf("syscall %s is not in the reference's syscall table", fn)
			}
		case "io":
			if !strings.Contains(doc, "io:::"+name) {
				t.Errorf("io:::%s is not documented", name)
			}
		case "dtrace":
			if name != "BEGIN" && name != "END" {
				t.Errorf("unexpected dtrace probe %s", name)
			}
		default:
			t.Errorf("provider %s is not one the reference covers", provider)
		}
	}
	for _, f := range regexp.MustCompile(`args\[\d\]->(\w+)`).FindAllStringSubmatch(sc.Text, -1) {
		if !strings.Contains(doc, "args[0]->"+f[1]) && !strings.Contains(doc, "args[1]->"+f[1]) && !strings.Contains(doc, "`"+f[1]+"`") {
			t.Errorf("field %s is not in the reference's translator table", f[1])
		}
	}
	for _, o := range regexp.MustCompile(`#pragma D option (\w+)`).FindAllStringSubmatch(sc.Text, -1) {
		if !strings.Contains(doc, "`"+o[1]+"`") && !strings.Contains(doc, o[1]+"=") {
			t.Errorf("option %s is not documented", o[1])
		}
	}
	// dev_statname is "??" on macOS: the script must key devices on major/minor.
	if strings.Contains(sc.Text, "dev_statname") || strings.Contains(sc.Text, "fi_pathname") {
		t.Error("the script uses a field that is '??' on macOS")
	}
	// At io:::done, pid and execname are the completing context's: they are
	// taken at start only.
	done := sc.Text[strings.Index(sc.Text, "io:::done"):strings.Index(sc.Text, "io:::done\n/io_ts[arg0] == 0/")]
	if regexp.MustCompile(`[^_]pid|execname`).MatchString(strings.ReplaceAll(done, "io_pid", "")) {
		t.Error("io:::done reads pid or execname")
	}
	for _, c := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(strings.Join(callExprs(calls), " "), -1) {
		if !parse.KnownDTraceCall(c[1]) {
			t.Errorf("the script prints call %q, which the parser does not know", c[1])
		}
	}
	// The printf formats have the fields the parser reads.
	for prefix, want := range map[string]int{`"I `: 12, `"C %s`: 11, `"C copy_file_range_src `: 10} {
		i := strings.Index(sc.Text, `printf(`+prefix)
		if i < 0 && strings.Contains(prefix, "copy") && plat == "darwin" {
			continue
		}
		line := sc.Text[i : i+strings.Index(sc.Text[i:], `\n"`)]
		if got := strings.Count(line, "%"); got != want {
			t.Errorf("%s line prints %d fields, the parser reads %d", prefix, got, want)
		}
	}
}

var comments = regexp.MustCompile(`(?s)/\*.*?\*/`)

func stripComments(s string) string { return comments.ReplaceAllString(s, "") }

func callExprs(calls []dCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Call)
	}
	return out
}

func TestDScriptModes(t *testing.T) {
	sys, err := render(session.Target{Names: []string{"Final Cut Pro"}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if text := stripComments(sys.Text); strings.Contains(text, "io:::") || strings.Contains(text, "@unmatched") {
		t.Error("without the io provider (SIP), the script must not use it")
	}
	if !strings.Contains(sys.Text, `/(execname == "Final Cut Pro")/`) {
		t.Error("name filter missing")
	}
	// The whole system, but not dtrace itself or ioshape reading it (the
	// shared capture all-target shows dtrace's own writes under --all).
	all, _ := render(session.Target{All: true}, nil, true)
	if !strings.Contains(all.Text, fmt.Sprintf("/(pid != $pid && pid != %d)/", os.Getpid())) || !strings.Contains(all.Text, "io:::start") {
		t.Error("whole-system script")
	}
	// A child forked by another thread of the pid is not progenyof it in
	// Oracle's DTrace: its parent pid is tested too.
	pid, _ := render(session.Target{Pids: []int{7, 9}}, []int{7, 9}, true)
	if !strings.Contains(pid.Text, "progenyof(7) || ppid == 7 || progenyof(9) || ppid == 9") {
		t.Error("pid filter must follow children with progenyof and ppid")
	}
	// Each platform's flags, block unit and calls.
	mac, _ := renderFor("darwin", session.Target{All: true}, nil, true)
	lin, _ := renderFor("linux", session.Target{All: true}, nil, true)
	for _, c := range []struct {
		text, want string
		has        bool
	}{
		{mac.Text, "READY dtrace %d darwin", true}, {lin.Text, "READY dtrace %d linux", true},
		{lin.Text, "b_flags & B_READ", true}, {mac.Text, "b_flags & B_READ", true},
		{lin.Text, "0x0100", false}, {mac.Text, "0x0100", true}, // xnu's B_META exists only there
		{lin.Text, "syscall::pread64:entry", true}, {mac.Text, "syscall::pread64:entry", false},
		{lin.Text, "syscall::io_submit:entry", true}, {lin.Text, "syscall::copy_file_range:return", true},
		{mac.Text, "syscall::pread_nocancel:entry", true}, {stripComments(lin.Text), "_nocancel", false},
		{lin.Text, "@unfinished = sum(1)", true},
	} {
		if strings.Contains(c.text, c.want) != c.has {
			t.Errorf("%q in the script: %v, want %v", c.want, !c.has, c.has)
		}
	}
}
